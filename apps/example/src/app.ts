import { checkHealth, healthResponse, type InboxWorker, type VerikitClient } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import type { PostgresInbox, PostgresLedger } from '@verikit/postgres';
import express, { type NextFunction, type Request, type Response } from 'express';
import { refuseCrossSite } from './cross-site.js';
import type { Account, Database, SessionLifetime } from './db.js';
import { documentRoute } from './documents.js';
import { DownloadLimit } from './download-limit.js';
import { metricsRoute } from './metrics.js';
import { operatorRoutes } from './operator.js';
import { dashboardPage, errorPage, FAVICON_SVG, signInPage } from './pages.js';
import { SessionCookie, signOutRoute } from './session-cookie.js';

/** What the example app is built from. */
export interface AppDeps {
  client: VerikitClient;
  webhookSecret: string;
  /** The inbox the webhook route stores verified deliveries in; the worker drains it. */
  inbox: PostgresInbox;
  /** The verification ledger, checked by `/healthz` beside the inbox. */
  ledger: PostgresLedger;
  worker: InboxWorker;
  db: Database;
  mode: string;
  /** How long sessions live on the server (and their cookies in the browser). */
  sessions: SessionLifetime;
  /** `VERIKIT_EXAMPLE_OPERATOR_SECRET`: the operator panel's sign-in; without it the panel is off. */
  operatorSecret: string | undefined;
  /** `VERIKIT_EXAMPLE_METRICS_TOKEN`: the bearer token of `GET /metrics`; without it the route is off. */
  metricsToken: string | undefined;
  /** Express's `trust proxy` (`VERIKIT_EXAMPLE_TRUST_PROXY`), behind a proxy that ends TLS: then cookies are Secure. */
  trustProxy: string | number | undefined;
  /** The embedded fake's reviewer console, linked from the dashboard: play the service's side (not in real mode). */
  reviewerUrl?: string | undefined;
  /** Told when someone signs in: the embedded fake uses it to prefill its hosted page with what the app knows. */
  onSignIn?: (account: Account) => void;
}

/** Longest name or business name accepted at sign-in (the form's maxlength, in UTF-16 units as browsers count). */
const MAX_NAME = 100;
/** Downloads one person may have running at once. */
const DOWNLOADS_PER_PERSON = 4;
/**
 * `/healthz`: `down` (503) when the database does not answer within 2 s; `degraded` (still 200: an
 * operator should look, a restart would not help) once a delivery has waited 5 minutes or one is a dead letter.
 */
const HEALTH = { timeoutMs: 2_000, maxOldestPendingMs: 5 * 60_000, maxDead: 0 };

/** The example: sign-in stand-in, dashboard, documents, the operator panel, and verikit's routes under /verikit. */
export function createApp(deps: AppDeps): express.Express {
  const { client, webhookSecret, inbox, worker, db, mode, sessions, onSignIn } = deps;
  const app = express();
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  const people = new SessionCookie('verikit_example_session', sessions.maxAgeMs);
  // Express 5 passes a rejected promise to the error handler; each route reads its account once.
  const account = async (req: Request): Promise<Account | undefined> => {
    const session = await db.session(people.read(req));
    return session?.role === 'user' ? session.account : undefined;
  };
  const page = (res: Response, status: number, title: string, message: string) =>
    res
      .status(status)
      .set('cache-control', 'no-store')
      .type('html')
      .send(errorPage(mode, status, title, message));
  const signInAgain = (res: Response, status: number, problem: string) =>
    res.status(status).set('cache-control', 'no-store').type('html').send(signInPage(mode, problem));

  // The webhook route first: a server calls it, its signature authenticates it, and it reads the raw
  // bytes before any body parser. Inbox mode: it stores each verified delivery once and answers 204.
  app.use('/verikit', verikitRouter({ client, webhook: { secret: webhookSecret, inbox } }));

  // Readiness for an orchestrator or a load balancer: counts only, no refId or payload.
  app.get('/healthz', async (_req, res) => {
    const { status, headers, body } = healthResponse(await checkHealth({ inbox, ledger: deps.ledger, ...HEALTH }));
    res.status(status).set(headers).send(body);
  });

  // Prometheus text for a scraper with the metrics token: counts and timings, never a refId or a payload.
  app.get('/metrics', metricsRoute(deps.metricsToken));

  // From here on, a request that changes state must come from this app's own pages.
  app.use(
    refuseCrossSite((_req, res) =>
      page(res, 403, 'Refused: sent from another site', 'This request came from another site, not from this app’s own pages.'),
    ),
  );

  app.use(
    '/verikit',
    verikitRouter({
      client,
      invite: {
        // A person who pressed "Verify" gets one of the app's pages, not the route's JSON error.
        errorPage: ({ status, code, message }) =>
          code === 'unauthorized'
            ? signInPage(mode, 'You are signed out (perhaps in another tab): sign in again to start a verification.')
            : errorPage(mode, status, 'The verification could not start', message),
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
    // Exactly as typed (canonical Unicode form, no outer spaces): the account is these two names, nothing lossier.
    const name = String(req.body?.name ?? '')
      .normalize('NFC')
      .trim();
    const business = String(req.body?.business ?? '')
      .normalize('NFC')
      .trim();
    if (!name || !business) return signInAgain(res, 400, 'Enter your name and your business.');
    if (name.length > MAX_NAME || business.length > MAX_NAME)
      return signInAgain(res, 400, `Names are at most ${MAX_NAME} characters long.`);
    const who = await db.signIn(name, business, people.issue(req, res));
    onSignIn?.(who);
    res.redirect(303, '/dashboard');
  });

  app.post(
    '/signout',
    signOutRoute(people, (id) => db.signOut(id), '/'),
  );

  app.get('/dashboard', async (req, res) => {
    const who = await account(req);
    if (!who) return res.redirect(303, '/');
    const [kyc, kyb, stamp] = await Promise.all([db.kyc(who.userRefId), db.kyb(who.businessRefId), db.stamp(who)]);
    res
      .set('cache-control', 'no-store')
      .type('html')
      .send(dashboardPage({ mode, account: who, kyc, kyb, stamp, reviewerUrl: deps.reviewerUrl }));
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

  app.get('/documents/:id', documentRoute({ client, db, account, page, limit: new DownloadLimit(DOWNLOADS_PER_PERSON) }));

  app.use(
    '/operations',
    operatorRoutes({
      secret: deps.operatorSecret,
      db,
      worker,
      cookie: new SessionCookie('verikit_example_operator', sessions.maxAgeMs),
      mode,
      page,
    }),
  );

  app.use((_req, res) => page(res, 404, 'Page not found', 'There is nothing at this address.'));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    console.error(`verikit example: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    if (res.headersSent) return res.end();
    page(res, 500, 'Something went wrong', 'The example could not finish this request; the details are in its log.');
  });

  return app;
}
