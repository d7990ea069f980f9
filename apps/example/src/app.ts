import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { collectDocumentFiles, type IdempotencyStore, type KybDocumentStep, type VerikitClient } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import express, { type Request } from 'express';
import { type Account, Database } from './db.js';
import { dashboardPage, signInPage } from './pages.js';

/** What the example app is built from. */
export interface AppDeps {
  client: VerikitClient;
  webhookSecret: string;
  store: IdempotencyStore;
  mode: string;
  db?: Database;
}

const COOKIE = 'verikit_example_session';

function sessionId(req: Request): string | undefined {
  const cookie = req.headers.cookie ?? '';
  for (const part of cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return value.join('=');
  }
  return undefined;
}

/** The example: sign-in stand-in, dashboard, document downloads, and verikit's routes under /verikit. */
export function createApp({ client, webhookSecret, store, mode, db = new Database() }: AppDeps): express.Express {
  const app = express();
  const account = (req: Request): Account | undefined => db.accountFor(sessionId(req));

  // verikit first: its webhook route reads the raw bytes before any JSON parser.
  app.use(
    '/verikit',
    verikitRouter({
      client,
      webhook: {
        secret: webhookSecret,
        store,
        // Never trust the webhook body alone: read the authoritative result by refId.
        onEvent: async (ctx) => {
          const fetched = await ctx.fetchResult();
          if (fetched.kind === 'kyb') db.saveKyb(fetched.refId, fetched.result);
          else db.saveKyc(fetched.refId, fetched.result.status, client.kyc.classify(fetched.result.status));
        },
      },
      invite: {
        kyb: { resolveBusiness: (req) => (account(req) ? { refId: (account(req) as Account).businessRefId } : null) },
        kyc: { resolveUser: (req) => (account(req) ? { refId: (account(req) as Account).userRefId } : null) },
      },
    }),
  );
  app.use(express.urlencoded({ extended: false }));

  app.get('/', (req, res) => {
    if (account(req)) return res.redirect(303, '/dashboard');
    res.type('html').send(signInPage(mode));
  });

  app.post('/signin', (req, res) => {
    const name = String(req.body?.name ?? '').trim();
    const business = String(req.body?.business ?? '').trim();
    if (!name || !business) return res.status(400).type('html').send(signInPage(mode));
    const id = randomBytes(24).toString('base64url');
    db.signIn(name, business, id);
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' }).redirect(303, '/dashboard');
  });

  app.post('/signout', (req, res) => {
    const id = sessionId(req);
    if (id) db.signOut(id);
    res.clearCookie(COOKIE, { path: '/' }).redirect(303, '/');
  });

  app.get('/dashboard', (req, res) => {
    const who = account(req);
    if (!who) return res.redirect(303, '/');
    res
      .set('cache-control', 'no-store')
      .type('html')
      .send(dashboardPage(mode, who, db.state(who.userRefId).kyc, db.state(who.businessRefId).kyb, db.version));
  });

  app.get('/dashboard/version', (_req, res) => {
    res.set('cache-control', 'no-store').type('text').send(String(db.version));
  });

  // Documents of the signed-in business only, streamed through a fresh signed URL.
  app.get('/documents/:id', async (req, res, next) => {
    const who = account(req);
    if (!who) return res.status(401).send('Sign in first');
    const details = db.state(who.businessRefId).kyb?.details;
    const file = details?.steps
      .filter((s): s is KybDocumentStep => s.type === 'document')
      .flatMap((s) => collectDocumentFiles(s))
      .find((f) => f.id === req.params.id);
    if (!file) return res.status(404).send('No such document');
    try {
      const download = await client.kyb.downloadDocument(file);
      res.set({
        'content-type': download.contentType ?? file.mimeType,
        'content-disposition': `attachment; filename="${file.originalName.replace(/["\\\r\n]/g, '')}"`,
        'cache-control': 'no-store',
      });
      Readable.fromWeb(download.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(res);
    } catch (error) {
      next(error);
    }
  });

  return app;
}
