import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createClient,
  createInboxWorker,
  createReconciler,
  type InboxWorker,
  type LedgerChangeContext,
  type Reconciler,
  type VerikitClient,
} from '@verikit/core';
import { createPostgresInbox, createPostgresLedger, type PostgresInbox, type PostgresLedger, type Queryable } from '@verikit/postgres';
import { createFakeService, type FakeService } from '@verikit/testing';
import { createApp } from './app.js';
import { ExampleConfigError, readMode, readSettings } from './config.js';
import { lockDataFolder } from './data-lock.js';
import { Database, OutdatedDataError, type SessionLifetime } from './db.js';
import { chooseStorage, openStorage, type Storage } from './storage.js';

/** Where the example keeps its data unless `VERIKIT_EXAMPLE_DATA` says otherwise: `apps/example/.data`. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../.data', import.meta.url));

/** A running example app. */
export interface RunningExample {
  url: string;
  mode: 'embedded' | 'real';
  /** Where the data is, in words (PGlite's folder, or the PostgreSQL server). */
  storage: string;
  /** The embedded fake service, in embedded mode (its `reviewerUrl` is the reviewer console). */
  fake: FakeService | undefined;
  /** The operator panel at `/operations`: on when `VERIKIT_EXAMPLE_OPERATOR_SECRET` is set. */
  operatorPanel: 'on' | 'off';
  /** `GET /metrics`: on when `VERIKIT_EXAMPLE_METRICS_TOKEN` is set. */
  metrics: 'on' | 'off';
  close(): Promise<void>;
}

/** Options of {@link startExample}. */
export interface StartOptions {
  port: number;
  host?: string;
  env: Record<string, string | undefined>;
  /** The worker's retries (default 5 attempts, 1 s doubling): the browser test shortens them. */
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Session lifetimes (default {@link SESSION_LIFETIME}) and the clock they are timed by (tests move it). */
  sessions?: Partial<SessionLifetime> & { now?: () => number };
}

/** Sessions end after an hour unused, and twelve hours after sign-in at the latest. */
export const SESSION_LIFETIME: SessionLifetime = { idleMs: 60 * 60_000, maxAgeMs: 12 * 60 * 60_000 };

/** Listens first, so a port in use fails before any data is opened; requests wait for the app. */
async function listen(port: number, host: string): Promise<{ server: Server; url: string }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/**
 * Starts the example: its data in PGlite (`VERIKIT_EXAMPLE_DATA`, default `apps/example/.data`) or
 * PostgreSQL (`DATABASE_URL`); webhooks in inbox mode on the same database, drained by a worker that
 * has the verification ledger read each result, and a reconciler that polls what webhooks missed;
 * both write each change in the ledger's transaction. Against an embedded fake service that keeps
 * its port and state in the same folder, or the real service when `VERIKIT_*` are set.
 */
export async function startExample(options: StartOptions): Promise<RunningExample> {
  const mode = readMode(options.env);
  const settings = readSettings(options.env);
  const dataDir = options.env.VERIKIT_EXAMPLE_DATA || DEFAULT_DATA_DIR;
  const storageChoice = chooseStorage(options.env, dataDir);
  // First of all: a second instance on the same folder says so, before it touches anything there.
  const unlock = storageChoice.kind === 'pglite' || mode.kind === 'embedded' ? lockDataFolder(dataDir) : () => {};
  const host = options.host ?? '127.0.0.1';
  const { server, url } = await listen(options.port, host).catch((error: unknown) => {
    unlock();
    throw error;
  });
  const cleanups: Array<() => Promise<unknown>> = [async () => unlock()];
  // The server first, so nothing new arrives; then the rest, the last opened first.
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  try {
    const storage: Storage = await openStorage(storageChoice);
    cleanups.push(() => storage.close());
    const { now, ...lifetime } = options.sessions ?? {};
    const sessions = { ...SESSION_LIFETIME, ...lifetime };
    const db = new Database(storage.db, { sessions, now });
    await db.migrate().catch((error: unknown) => {
      if (!(error instanceof OutdatedDataError)) throw error;
      const fix =
        storageChoice.kind === 'pglite'
          ? `move or delete ${dataDir} to start afresh, or set VERIKIT_EXAMPLE_DATA to another folder`
          : 'run DROP SCHEMA example CASCADE in that database to start afresh, or point DATABASE_URL at another database';
      throw new ExampleConfigError(
        `${error.message}, so that different people and businesses could share one verification; which result is whose cannot be told now: ${fix}`,
      );
    });
    const inbox: PostgresInbox = createPostgresInbox({ db: storage.db, schema: 'verikit' });
    await inbox.migrate();
    cleanups.push(() => inbox.close());
    // The ledger: a row per verification the app started, kept equal to the service's by webhooks and by polling.
    const ledger: PostgresLedger = createPostgresLedger({ db: storage.db, schema: 'verikit' });
    await ledger.migrate();
    const { schedule, readsPerMinute, pollIntervalMs } = settings.reconcile;
    // The previous version's results came from webhooks alone: the ledger reads each of them again, first thing.
    await db.adoptEarlierResults((key) => ledger.track(key, { nextCheckAt: new Date() }));

    // The embedded fake keeps its port, keys and cases beside the app's data: links issued before a restart still open.
    const fake =
      mode.kind === 'embedded'
        ? await createFakeService({ stateFile: join(dataDir, 'fake-service.json'), returnUrl: `${url}/dashboard` })
        : undefined;
    if (fake) cleanups.push(() => fake.close());
    const clientOptions = fake ? fake.clientOptions : (mode as Extract<typeof mode, { kind: 'real' }>).client;
    // With the ledger, the client tracks each case and session before its create call: none can be started unknown to it.
    const client: VerikitClient = createClient({
      ...clientOptions,
      kycStatuses: {
        approved: (options.env.VERIKIT_KYC_APPROVED ?? 'APPROVED').split(','),
        rejected: (options.env.VERIKIT_KYC_REJECTED ?? 'REJECTED').split(','),
      },
      ledger,
      ledgerSchedule: schedule,
    });
    cleanups.push(() => client.close());

    // The app's one reaction to a change, whoever saw it (a webhook, or the reconciler's polling): written in the
    // ledger's transaction, so the result and the change it records commit together, once, in the service's order.
    const onChange = (ctx: LedgerChangeContext<Queryable>) =>
      Database.recordChange(ctx.sql, ctx, ctx.kind === 'kyc' ? client.kyc.classify(ctx.result.status) : null);
    const observing = { ledger, client, onChange, schedule, readsPerMinute };
    // Never trust the webhook body alone: each delivery has the ledger read the verification's result by refId.
    const worker: InboxWorker = createInboxWorker<Queryable, Queryable>({
      inbox,
      ...observing,
      concurrency: 2,
      retry: { maxAttempts: 5, ...options.retry },
    });
    worker.start();
    cleanups.push(() => worker.stop({ timeoutMs: 5_000 }));
    // Webhooks get lost: the reconciler reads each verification on its schedule (finals too, rarely: reopens, overturns), within the same budget.
    const reconciler: Reconciler = createReconciler<Queryable>({ ...observing, pollIntervalMs });
    reconciler.start();
    cleanups.push(() => reconciler.stop({ timeoutMs: 5_000 }));

    const label = fake ? 'embedded fake service' : `real service (${clientOptions.environment ?? 'sandbox'})`;
    const app = createApp({
      client,
      webhookSecret: fake ? fake.credentials.webhookSecret : (mode as Extract<typeof mode, { kind: 'real' }>).webhookSecret,
      inbox,
      ledger,
      worker,
      db,
      mode: label,
      sessions,
      operatorSecret: settings.operatorSecret,
      metricsToken: settings.metricsToken,
      trustProxy: settings.trustProxy,
      reviewerUrl: fake?.reviewerUrl,
      // What the app knows of the business, as the hosted page's starting values (the embedded fake only).
      onSignIn: fake ? (who) => fake.kyb.prefill(who.businessRefId, Database.prefillOf(who)) : undefined,
    });
    server.on('request', app);
    fake?.webhooks.addEndpoint(`${url}/verikit/webhook`);
    const operatorPanel = settings.operatorSecret === undefined ? 'off' : 'on';
    const metrics = settings.metricsToken === undefined ? 'off' : 'on';
    return { url, mode: mode.kind, storage: storage.description, fake, operatorPanel, metrics, close };
  } catch (error) {
    await close();
    throw error;
  }
}
