import type { InboxWorker } from '@verikit/core';
import { type Request, type Response, Router } from 'express';
import type { Database } from './db.js';
import { operationsPage, operatorSignInPage } from './pages.js';
import { sameSecret } from './secret.js';
import { type SessionCookie, signOutRoute } from './session-cookie.js';

/** What the operator panel needs from the app. */
export interface OperatorOptions {
  /** `VERIKIT_EXAMPLE_OPERATOR_SECRET`; without it the panel is off. */
  secret: string | undefined;
  db: Database;
  worker: InboxWorker;
  cookie: SessionCookie;
  mode: string;
  page(res: Response, status: number, title: string, message: string): void;
}

/**
 * The operator panel under `/operations`: failed deliveries of every business, and their replay.
 * Its own sign-in with a secret from the environment and its own session cookie, apart from the
 * people's: a signed-in person never sees another business's refIds or replays their events.
 * In your app, put it behind your admin login instead.
 */
export function operatorRoutes({ secret, db, worker, cookie, mode, page }: OperatorOptions): Router {
  const router = Router();
  const html = (res: Response, status: number, body: string) => res.status(status).set('cache-control', 'no-store').type('html').send(body);
  const isOperator = async (req: Request) => (await db.session(cookie.read(req)))?.role === 'operator';

  router.use((_req, res, next) => {
    if (secret !== undefined) return next();
    page(res, 404, 'The operator panel is off', 'Start the example with VERIKIT_EXAMPLE_OPERATOR_SECRET set to use it.');
  });

  router.get('/', async (req, res) => {
    if (!(await isOperator(req))) return html(res, 200, operatorSignInPage(mode));
    html(res, 200, operationsPage(mode, await worker.deadLetters({ limit: 50 })));
  });

  router.post('/signin', async (req, res) => {
    if (!sameSecret(String(req.body?.secret ?? ''), secret as string))
      return html(res, 403, operatorSignInPage(mode, 'That is not the operator secret.'));
    await db.signInOperator(cookie.issue(req, res));
    res.redirect(303, '/operations');
  });

  router.post(
    '/signout',
    signOutRoute(cookie, (id) => db.signOut(id), '/operations'),
  );

  router.post('/dead-letters/:id/replay', async (req, res) => {
    if (!(await isOperator(req))) return page(res, 403, 'Operators only', 'Sign in as the operator to replay deliveries.');
    const replayed = await worker.replay(req.params.id);
    if (!replayed) return page(res, 404, 'Nothing to replay', `No failed delivery ${req.params.id} is waiting.`);
    res.redirect(303, '/operations');
  });

  return router;
}
