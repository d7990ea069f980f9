import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { collectDocumentFiles, type InboxWorker, type KybDocumentStep, type VerikitClient } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import type { PostgresInbox } from '@verikit/postgres';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Account, Database } from './db.js';
import { dashboardPage, errorPage, FAVICON_SVG, signInPage } from './pages.js';

/** What the example app is built from. */
export interface AppDeps {
  client: VerikitClient;
  webhookSecret: string;
  /** The inbox the webhook route stores verified deliveries in; the worker drains it. */
  inbox: PostgresInbox;
  worker: InboxWorker;
  db: Database;
  mode: string;
  /** Told when someone signs in: the embedded fake uses it to prefill its hosted page with what the app knows. */
  onSignIn?: (account: Account) => void;
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

/** The example: sign-in stand-in, dashboard, documents, operations, and verikit's routes under /verikit. */
export function createApp({ client, webhookSecret, inbox, worker, db, mode, onSignIn }: AppDeps): express.Express {
  const app = express();
  // Express 5 passes a rejected promise to the error handler; each route reads its account once.
  const account = (req: Request): Promise<Account | undefined> => db.accountFor(sessionId(req));
  const page = (res: Response, status: number, title: string, message: string) =>
    res
      .status(status)
      .set('cache-control', 'no-store')
      .type('html')
      .send(errorPage(mode, status, title, message));

  // verikit first: its webhook route reads the raw bytes before any body parser. Inbox mode: the
  // route stores each verified delivery once and answers 204; the worker runs onEvent.
  app.use(
    '/verikit',
    verikitRouter({
      client,
      webhook: { secret: webhookSecret, inbox },
      invite: {
        kyb: {
          resolveBusiness: async (req) => {
            const who = await account(req);
            return who ? { refId: who.businessRefId } : null;
          },
        },
        kyc: {
          resolveUser: async (req) => {
            const who = await account(req);
            return who ? { refId: who.userRefId } : null;
          },
        },
      },
    }),
  );
  app.use(express.urlencoded({ extended: false, limit: '16kb' }));

  app.get('/favicon.ico', (_req, res) => {
    res.set('cache-control', 'public, max-age=86400').type('image/svg+xml').send(FAVICON_SVG);
  });

  app.get('/', async (req, res) => {
    if (await account(req)) return res.redirect(303, '/dashboard');
    res.type('html').send(signInPage(mode));
  });

  app.post('/signin', async (req, res) => {
    const name = String(req.body?.name ?? '').trim();
    const business = String(req.body?.business ?? '').trim();
    if (!name || !business) return res.status(400).type('html').send(signInPage(mode, 'Enter your name and your business.'));
    const id = randomBytes(24).toString('base64url');
    const who = await db.signIn(name.slice(0, 100), business.slice(0, 100), id);
    onSignIn?.(who);
    res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'lax', path: '/' }).redirect(303, '/dashboard');
  });

  app.post('/signout', async (req, res) => {
    const id = sessionId(req);
    if (id) await db.signOut(id);
    res.clearCookie(COOKIE, { path: '/' }).redirect(303, '/');
  });

  app.get('/dashboard', async (req, res) => {
    const who = await account(req);
    if (!who) return res.redirect(303, '/');
    const [kyc, kyb, deadLetters, stamp] = await Promise.all([
      db.kyc(who.userRefId),
      db.kyb(who.businessRefId),
      worker.deadLetters({ limit: 20 }),
      db.stamp(who),
    ]);
    res
      .set('cache-control', 'no-store')
      .type('html')
      .send(dashboardPage({ mode, account: who, kyc, kyb, deadLetters, stamp }));
  });

  // This user's change marker only: one user's webhook never reloads another user's dashboard.
  app.get('/dashboard/state', async (req, res) => {
    const who = await account(req);
    if (!who) return res.status(401).set('cache-control', 'no-store').type('text').send('signed out');
    res
      .set('cache-control', 'no-store')
      .type('text')
      .send(await db.stamp(who));
  });

  app.post('/operations/dead-letters/:id/replay', async (req, res) => {
    if (!(await account(req))) return res.redirect(303, '/');
    const replayed = await worker.replay(req.params.id);
    if (!replayed) return page(res, 404, 'Nothing to replay', `No failed delivery ${req.params.id} is waiting.`);
    res.redirect(303, '/dashboard');
  });

  // Documents of the signed-in business only, streamed through a fresh signed URL: shown in the
  // browser (a PDF opens in its viewer), or downloaded with ?download=1.
  app.get('/documents/:id', async (req, res, next) => {
    const who = await account(req);
    if (!who) return page(res, 401, 'Sign in first', 'Documents are shown to the business they belong to.');
    const details = (await db.kyb(who.businessRefId))?.details;
    const file = details?.steps
      .filter((s): s is KybDocumentStep => s.type === 'document')
      .flatMap((s) => collectDocumentFiles(s))
      .find((f) => f.id === req.params.id);
    if (!file) return page(res, 404, 'No such document', 'This business has no document with that id.');
    try {
      const download = await client.kyb.downloadDocument(file);
      const disposition = req.query.download === undefined ? 'inline' : 'attachment';
      res.set({
        'content-type': download.contentType ?? file.mimeType,
        'content-disposition': `${disposition}; filename="${file.originalName.replace(/["\\\r\n]/g, '')}"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      Readable.fromWeb(download.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(res);
    } catch (error) {
      next(error);
    }
  });

  app.use((_req, res) => page(res, 404, 'Page not found', 'There is nothing at this address.'));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    console.error(`verikit example: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    if (res.headersSent) return res.end();
    page(res, 500, 'Something went wrong', 'The example could not finish this request; the details are in its log.');
  });

  return app;
}
