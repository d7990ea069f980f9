import { PGlite } from '@electric-sql/pglite';
import { createInboxWorker, type InboxContext, type InboxWorker } from '@verikit/core';
import { type SignedWebhook, signWebhook } from '@verikit/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { startStallingProxy } from '../../../test-support/stalling-proxy.js';
import { type ServedWebhook, serveWebhook } from '../../../test-support/webhook-route.js';
import { createPostgresInbox, createPostgresStore, type Queryable } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
// Short, so the tests are quick; the route's bound is what is checked, not how fast it is.
const TIMEOUT_MS = 400;
let schemas = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
};
const delivery = (payload: Record<string, unknown> = {}): SignedWebhook =>
  signWebhook({ secret: SECRET, payload: { type: 'kyb.case.status_changed', data: { refId: 'b1' }, ...payload } });

/** Sends as Svix does once the database is back: again until the answer is a 2xx. */
async function sendUntilAccepted(route: ServedWebhook, signed: SignedWebhook): Promise<void> {
  await until(async () => (await route.send(signed)) === 204, `a 204 for ${signed.id}`);
}

/** What a test starts, stopped in reverse order whatever happens: workers, routes, inboxes and stores, proxies, pools. */
function cleanup() {
  const steps: Array<() => Promise<unknown>> = [];
  return {
    add<T>(thing: T, stop: (thing: T) => Promise<unknown>): T {
      steps.push(() => stop(thing));
      return thing;
    },
    async run() {
      for (const step of steps.reverse()) await step().catch(() => {});
    },
  };
}

/**
 * An effects table and an onEvent that counts into it through ctx.sql, with no unique key: only the
 * transaction that also marks the event done keeps it once.
 */
async function effectsIn(db: Queryable, schema: string) {
  await db.query(`CREATE TABLE ${schema}.effects (id text NOT NULL)`);
  return {
    write: (ctx: InboxContext<Queryable>) => ctx.sql.query(`INSERT INTO ${schema}.effects (id) VALUES ($1)`, [ctx.id]),
    async counts(): Promise<Record<string, number>> {
      const { rows } = await db.query(`SELECT id, count(*)::int AS n FROM ${schema}.effects GROUP BY id`);
      return Object.fromEntries(rows.map((row) => [String(row.id), Number(row.n)]));
    },
  };
}

const worker = (options: Parameters<typeof createInboxWorker<Queryable>>[0]): InboxWorker =>
  createInboxWorker<Queryable>({
    leaseMs: 1_500,
    pollIntervalMs: 100,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    logger: false,
    onError: () => {},
    ...options,
  });

/** Every id handled, then a pause for a doubled one to show, then the counts. */
async function settledCounts(counts: () => Promise<Record<string, number>>, ids: string[]): Promise<Record<string, number>> {
  await until(async () => {
    const seen = await counts();
    return ids.every((id) => (seen[id] ?? 0) > 0);
  }, 'every effect');
  await sleep(300);
  return counts();
}

/**
 * Both modes on `db` while `occupy` keeps it busy (until the function it answers is called): each
 * route answers 503, and once it is free again the sender's retries get each delivery handled once.
 */
async function bothModesWhileBusy(options: {
  stops: ReturnType<typeof cleanup>;
  db: Queryable;
  schema: string;
  /** Where the effects are read: not through `db`, which is busy. */
  observer: Queryable;
  occupy: () => Promise<() => void>;
}): Promise<void> {
  const { stops, db, schema, observer, occupy } = options;
  const inbox = stops.add(createPostgresInbox({ db, schema, timeoutMs: TIMEOUT_MS, onError: () => {} }), (i) => i.close());
  const store = stops.add(createPostgresStore({ db, schema, timeoutMs: TIMEOUT_MS }), (s) => s.close());
  await inbox.migrate();
  const { write, counts } = await effectsIn(observer, schema);
  const ran: string[] = [];
  const inboxRoute = stops.add(await serveWebhook({ secret: SECRET, inbox, logger: false }), (r) => r.close());
  const inlineRoute = stops.add(
    await serveWebhook({ secret: SECRET, store, logger: false, onEvent: (ctx) => void ran.push(ctx.id) }),
    (r) => r.close(),
  );
  stops.add(worker({ inbox, onEvent: write }), (x) => x.stop({ timeoutMs: 2_000 })).start();

  const free = await occupy();
  const [queued, inline] = [delivery(), delivery()];
  try {
    expect(await inboxRoute.send(queued)).toBe(503);
    expect(await inlineRoute.send(inline)).toBe(503);
  } finally {
    free();
  }
  await sendUntilAccepted(inboxRoute, queued);
  await sendUntilAccepted(inlineRoute, inline);
  expect(ran).toEqual([inline.id]);
  expect(await settledCounts(counts, [queued.id])).toEqual({ [queued.id]: 1 });
}

describe.runIf(serverAvailable)('a stalled or exhausted PostgreSQL: the webhook route answers 503 within timeoutMs', () => {
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  afterAll(async () => {
    const { rows } = await admin.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`verikit_bound_${process.pid}_%`]);
    for (const row of rows) await admin.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
    await admin.end();
  });
  const freshSchema = () => `verikit_bound_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
  const poolTo = (url: string, max: number) => {
    const pool = new pg.Pool({ connectionString: url, max });
    // Connections the proxy cuts surface here when idle: expected.
    pool.on('error', () => {});
    return pool;
  };
  /** A pool behind a stalling proxy, both stopped with the test: the proxy first, as pg's pool waits for a connection the stall caught mid-handshake. */
  const poolBehindProxy = async (stops: ReturnType<typeof cleanup>) => {
    const proxy = await startStallingProxy(POSTGRES_URL);
    const pool = stops.add(poolTo(proxy.url, 4), (p) => p.end());
    stops.add(proxy, (p) => p.stop());
    return { proxy, pool };
  };

  it('inbox mode, behind a network that stalls: 503 instead of no answer; a transaction cut mid-commit is rolled back; each delivery handled once after', async () => {
    const stops = cleanup();
    try {
      const { proxy, pool } = await poolBehindProxy(stops);
      const schema = freshSchema();
      const inbox = stops.add(createPostgresInbox({ db: pool, schema, timeoutMs: TIMEOUT_MS, onError: () => {} }), (i) => i.close());
      await inbox.migrate();
      const { write, counts } = await effectsIn(admin, schema);
      let reachedGate!: () => void;
      const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const w = stops.add(
        worker({
          inbox,
          onEvent: async (ctx) => {
            await write(ctx);
            // The first attempt of the gated event holds its transaction open, its write in it, until the network stalls.
            if ((ctx.event as { gated?: boolean }).gated && ctx.attempt === 1) {
              reachedGate();
              await gate;
            }
          },
        }),
        (x) => x.stop({ timeoutMs: 2_000 }),
      );
      w.start();
      const route = stops.add(await serveWebhook({ secret: SECRET, inbox, logger: false }), (r) => r.close());

      const before = delivery();
      expect(await route.send(before)).toBe(204);
      const gated = delivery({ gated: true });
      expect(await route.send(gated)).toBe(204);
      await atGate;
      proxy.stall();
      openGate(); // its "done" and COMMIT go into the black hole
      const during = delivery();
      expect(await route.send(during)).toBe(503);
      expect(await route.send(during)).toBe(503); // and again: the route does not wedge either
      proxy.heal();
      await sendUntilAccepted(route, during);

      expect(await settledCounts(counts, [before.id, gated.id, during.id])).toEqual({ [before.id]: 1, [gated.id]: 1, [during.id]: 1 });
    } finally {
      await stops.run();
    }
  });

  it('inline mode, behind a network that stalls: 503 instead of no answer, and onEvent runs once after', async () => {
    const stops = cleanup();
    try {
      const { proxy, pool } = await poolBehindProxy(stops);
      const store = stops.add(createPostgresStore({ db: pool, schema: freshSchema(), timeoutMs: TIMEOUT_MS }), (s) => s.close());
      await store.migrate();
      const ran: string[] = [];
      const route = stops.add(await serveWebhook({ secret: SECRET, store, logger: false, onEvent: (ctx) => void ran.push(ctx.id) }), (r) =>
        r.close(),
      );
      const before = delivery();
      expect(await route.send(before)).toBe(204);
      proxy.stall();
      const during = delivery();
      expect(await route.send(during)).toBe(503);
      proxy.heal();
      await sendUntilAccepted(route, during);
      expect(ran).toEqual([before.id, during.id]);
    } finally {
      await stops.run();
    }
  });

  it('a pool with every connection checked out (max: 1, held elsewhere): 503 in both modes, each delivery handled once when it is free', async () => {
    const stops = cleanup();
    try {
      const pool = stops.add(poolTo(POSTGRES_URL, 1), (p) => p.end());
      await bothModesWhileBusy({
        stops,
        db: pool,
        schema: freshSchema(),
        observer: admin,
        occupy: async () => {
          const holder = await pool.connect();
          return () => holder.release();
        },
      });
    } finally {
      await stops.run();
    }
  });
});

describe('PGlite held by a long transaction: the webhook route answers 503 within timeoutMs', () => {
  it('in both modes, and each delivery is handled once when PGlite is free again', async () => {
    const stops = cleanup();
    try {
      const db = stops.add(new PGlite(), (d) => d.close());
      await bothModesWhileBusy({
        stops,
        db,
        schema: 'verikit',
        observer: db,
        // PGlite has one connection: while this transaction is open, every other statement waits.
        occupy: () =>
          new Promise((opened) => {
            void db.transaction(() => new Promise<void>((release) => opened(release)));
          }),
      });
    } finally {
      await stops.run();
    }
    // Starting PGlite (PostgreSQL in WebAssembly) alone takes seconds on a busy machine.
  }, 120_000);
});
