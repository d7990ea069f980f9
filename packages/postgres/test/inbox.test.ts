import { PGlite } from '@electric-sql/pglite';
import { createInboxWorker, createWebhookHandler, type InboxContext, type InboxWorker } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectHungEventsBounded } from '../../../test-support/inbox-timeout.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { serveWebhook } from '../../../test-support/webhook-route.js';
import { createPostgresInbox, type PostgresInbox, type Queryable } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
let schemas = 0;

const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

function inboxSuite(name: string, open: () => Promise<{ db: Queryable; close(): Promise<void> }>) {
  describe(`${name}: the inbox`, () => {
    let db: Queryable;
    let close: () => Promise<void>;
    const opened: Array<PostgresInbox | InboxWorker> = [];
    beforeAll(async () => {
      ({ db, close } = await open());
    });
    afterAll(async () => {
      for (const thing of opened.reverse()) await ('stop' in thing ? thing.stop({ timeoutMs: 2_000 }) : thing.close());
      await close?.();
    });

    /** A fresh schema with its inbox and an effects table for onEvent to write through ctx.sql. */
    async function fresh() {
      const schema = `verikit_inbox_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
      const inbox = createPostgresInbox({ db, schema });
      opened.push(inbox);
      await inbox.migrate();
      await db.query(`CREATE TABLE ${schema}.effects (id text NOT NULL, attempt int NOT NULL)`);
      const effects = async () =>
        (await db.query(`SELECT id, attempt FROM ${schema}.effects ORDER BY id`)).rows as Array<{ id: string; attempt: number }>;
      const write = (ctx: InboxContext<Queryable>) =>
        ctx.sql.query(`INSERT INTO ${schema}.effects (id, attempt) VALUES ($1, $2)`, [ctx.id, ctx.attempt]);
      const handler = createWebhookHandler({ secret: SECRET, inbox });
      const deliver = async (payload: unknown, id?: string) => {
        const signed = signWebhook({ secret: SECRET, payload, id });
        return { id: signed.id, status: (await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status };
      };
      const worker = (
        options: Partial<Parameters<typeof createInboxWorker<Queryable>>[0]> &
          Pick<Parameters<typeof createInboxWorker<Queryable>>[0], 'onEvent'>,
      ) => {
        const w = createInboxWorker<Queryable>({
          inbox,
          pollIntervalMs: 50,
          retry: { baseDelayMs: 10, maxDelayMs: 50 },
          onError: () => {},
          ...options,
        });
        opened.push(w);
        return w;
      };
      return { schema, inbox, effects, write, deliver, worker };
    }

    it('the webhook route stores and queues a delivery once, answering 204 only once it is stored', async () => {
      const { inbox, deliver, schema } = await fresh();
      const first = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'b1' } }, 'msg_once');
      const repeat = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'b1' } }, 'msg_once');
      expect([first.status, repeat.status]).toEqual([204, 204]);
      const { rows } = await db.query(`SELECT id, state, attempts FROM ${schema}.verikit_inbox`);
      expect(rows).toEqual([{ id: 'msg_once', state: 'pending', attempts: 0 }]);
      expect(await inbox.accept({ id: 'msg_once', timestamp: 1, body: '{}' })).toBe('duplicate');
    });

    it("lease hands each event its receivedAt: the row's received_at, on the database clock the ledger uses too", async () => {
      const { inbox, deliver, schema } = await fresh();
      const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'b1' } });
      const [event] = await inbox.lease('owner-1', 1, 10_000);
      const { rows } = await db.query(`SELECT received_at FROM ${schema}.verikit_inbox WHERE id = $1`, [id]);
      expect(event?.receivedAt).toBeInstanceOf(Date);
      expect(event?.receivedAt).toEqual(rows[0]?.received_at);
    });

    it('accepts in one turn share one INSERT: each answered once committed, a repeat in the turn a duplicate, 150 in three statements', async () => {
      const { inbox, schema } = await fresh();
      const visible = async (id: string) => (await db.query(`SELECT 1 FROM ${schema}.verikit_inbox WHERE id = $1`, [id])).rows.length === 1;
      const ids = Array.from({ length: 150 }, (_, i) => `msg_turn_${i}`);
      // All called in one turn, msg_turn_0 three times (twice in the first statement, once in the third, which may
      // run first on another connection): accepted once, a duplicate twice, and each seen stored when answered.
      const answers = await Promise.all(
        [...ids.slice(0, 10), 'msg_turn_0', ...ids.slice(10), 'msg_turn_0'].map((id) =>
          inbox.accept({ id, timestamp: 1, body: `{"n":"${id}"}` }).then(async (result) => ({ id, result, stored: await visible(id) })),
        ),
      );
      expect(answers.filter((a) => a.result === 'accepted').map((a) => a.id)).toEqual(ids);
      expect(answers.filter((a) => a.id === 'msg_turn_0').map((a) => a.result)).toContain('accepted');
      expect(answers.filter((a) => a.result === 'duplicate').map((a) => a.id)).toEqual(['msg_turn_0', 'msg_turn_0']);
      expect(answers.every((a) => a.stored)).toBe(true);
      // Rows of one statement share its transaction id: 64 rows a statement at most.
      const { rows } = await db.query(`SELECT count(DISTINCT xmin::text)::int AS statements FROM ${schema}.verikit_inbox`);
      expect(rows[0]?.statements).toBe(3);
      // The next turn's repeat finds the committed row.
      expect(await inbox.accept({ id: 'msg_turn_7', timestamp: 1, body: '{}' })).toBe('duplicate');
    });

    it('events whose work writes nothing, finished in one turn, are marked done by one UPDATE each 64; a lease gone elsewhere is answered stale', async () => {
      const { inbox, schema } = await fresh();
      for (let i = 0; i < 70; i++) await inbox.accept({ id: `msg_done_${String(i).padStart(2, '0')}`, timestamp: 1, body: '{}' });
      const leased = await inbox.lease('w1', 70, 60_000);
      expect(leased).toHaveLength(70);
      // msg_done_03's lease ran out and another worker took it.
      await db.query(`UPDATE ${schema}.verikit_inbox SET owner = 'w2' WHERE id = 'msg_done_03'`);
      const outcomes = await Promise.all(leased.map((event) => inbox.complete(event, async () => {})));
      expect(leased.filter((_, i) => outcomes[i] === 'stale').map((event) => event.id)).toEqual(['msg_done_03']);
      expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(69);
      const { rows } = await db.query(
        `SELECT state, owner, count(*)::int AS events, count(DISTINCT xmin::text)::int AS statements FROM ${schema}.verikit_inbox GROUP BY state, owner ORDER BY state`,
      );
      expect(rows).toEqual([
        { state: 'done', owner: 'w1', events: 69, statements: 2 },
        { state: 'pending', owner: 'w2', events: 1, statements: 1 },
      ]);
    });

    it('an UPDATE marking events done that fails fails each completion in it, and every event stays pending, to run again', async () => {
      const { inbox, schema } = await fresh();
      for (const id of ['a', 'b', 'c']) await inbox.accept({ id, timestamp: 1, body: '{}' });
      const leased = await inbox.lease('w1', 3, 60_000);
      await db.query(`ALTER TABLE ${schema}.verikit_inbox ADD CONSTRAINT refuse_done CHECK (state <> 'done') NOT VALID`);
      const outcomes = await Promise.allSettled(leased.map((event) => inbox.complete(event, async () => {})));
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/refuse_done/);
      const { rows } = await db.query(`SELECT id, state FROM ${schema}.verikit_inbox ORDER BY id`);
      expect(rows).toEqual(['a', 'b', 'c'].map((id) => ({ id, state: 'pending' })));
    });

    it('accept refuses a row PostgreSQL could not store (NUL, a timestamp not in whole seconds) alone, not with its turn', async () => {
      const { inbox } = await fresh();
      const answers = await Promise.allSettled([
        inbox.accept({ id: 'msg_ok_1', timestamp: 1, body: '{}' }),
        inbox.accept({ id: 'msg_nul', timestamp: 1, body: 'a raw \u0000 in the body' }),
        inbox.accept({ id: 'msg_nan', timestamp: Number.NaN, body: '{}' }),
        inbox.accept({ id: 'msg\u0000id', timestamp: 1, body: '{}' }),
        inbox.accept({ id: 'msg_ok_2', timestamp: 1, body: '{}' }),
      ]);
      expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as { code: string }).code))).toEqual([
        'accepted',
        'invalid_argument',
        'invalid_argument',
        'invalid_argument',
        'accepted',
      ]);
    });

    it('an INSERT that fails fails every accept in it, and none is answered as stored', async () => {
      const { inbox, schema } = await fresh();
      await db.query(`ALTER TABLE ${schema}.verikit_inbox RENAME TO moved`);
      const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((id) => inbox.accept({ id, timestamp: 1, body: '{}' })));
      await db.query(`ALTER TABLE ${schema}.moved RENAME TO verikit_inbox`);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/verikit_inbox/);
      expect((await db.query(`SELECT id FROM ${schema}.verikit_inbox`)).rows).toEqual([]);
      expect(await Promise.all(['a', 'b'].map((id) => inbox.accept({ id, timestamp: 1, body: '{}' })))).toEqual(['accepted', 'accepted']);
    });

    it('an inbox that fails -> 503, told to onError, and no 2xx', async () => {
      const errors: string[] = [];
      const handler = createWebhookHandler({
        secret: SECRET,
        inbox: {
          accept: async () => {
            throw new Error('database down');
          },
        },
        onError: (_error, { stage }) => errors.push(stage),
      });
      const signed = signWebhook({ secret: SECRET, payload: { type: 'x' } });
      const answer = await handler({ method: 'POST', headers: signed.headers, body: signed.body });
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body).error).toBe('inbox_unavailable');
      expect(errors).toEqual(['accept']);
    });

    it('a worker runs onEvent once per event, with the same ctx as inline mode plus attempt and sql, and the effect commits with "done"', async () => {
      const { deliver, worker, write, effects, schema } = await fresh();
      const seen: Array<{ id: string; attempt: number; subject: unknown }> = [];
      const w = worker({
        onEvent: async (ctx) => {
          seen.push({ id: ctx.id, attempt: ctx.attempt, subject: ctx.subject });
          await write(ctx);
        },
      });
      w.start();
      const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'biz-9' } });
      await until(async () => (await effects()).length === 1, 'the effect');
      expect(seen).toEqual([{ id, attempt: 1, subject: { kind: 'kyb', refId: 'biz-9' } }]);
      const { rows } = await db.query(`SELECT state FROM ${schema}.verikit_inbox WHERE id = $1`, [id]);
      expect(rows[0]?.state).toBe('done');
    });

    it('a failing onEvent rolls its writes back, is retried with backoff, dead-lettered after maxAttempts, and can be replayed', async () => {
      const { deliver, worker, write, effects, inbox } = await fresh();
      let healthy = false;
      const w = worker({
        retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
        onEvent: async (ctx) => {
          await write(ctx);
          if (!healthy) throw new Error(`downstream refused attempt ${ctx.attempt}`);
        },
      });
      w.start();
      const { id } = await deliver({ type: 'kyc.session.status_changed', data: { refId: 'u1' } });
      await until(async () => (await inbox.deadLetters()).length === 1, 'the dead letter');
      const [dead] = await w.deadLetters();
      expect(dead).toMatchObject({ id, attempts: 3, lastError: 'Error: downstream refused attempt 3' });
      expect(await effects()).toEqual([]); // every failed attempt's write was rolled back with it
      healthy = true;
      expect(await w.replay(id)).toBe(true);
      expect(await w.replay('msg_not_dead')).toBe(false);
      await until(async () => (await effects()).length === 1, 'the replayed effect');
      expect(await effects()).toEqual([{ id, attempt: 1 }]);
      expect(await inbox.deadLetters()).toEqual([]);
    });

    it('onEvents that never settle are bounded by eventTimeoutMs: signal aborted, writes rolled back, retried, dead-lettered, slots freed', async () => {
      const { deliver, worker, write, effects } = await fresh();
      await expectHungEventsBounded({
        deliver,
        worker,
        write,
        effects: async () => Object.fromEntries((await effects()).map((e) => [e.id, e.attempt])),
      });
    });

    it('two workers draining 200 events concurrently produce each effect exactly once', async () => {
      const { deliver, worker, write, effects } = await fresh();
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) ids.push((await deliver({ type: 'kyb.case.status_changed', data: { refId: `b${i}` } })).id);
      for (const w of [worker({ concurrency: 5, onEvent: write }), worker({ concurrency: 5, onEvent: write })]) w.start();
      await until(async () => (await effects()).length >= 200, '200 effects', 30_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const done = await effects();
      expect(done.map((e) => e.id).sort()).toEqual([...ids].sort());
    });

    it('a notification wakes an idle worker on another instance long before its polling interval, burst after burst', async () => {
      const { schema, deliver, worker, write, effects } = await fresh();
      // Another instance's inbox on the same tables: only a NOTIFY can reach its worker.
      const elsewhere = createPostgresInbox({ db, schema });
      opened.push(elsewhere);
      const w = worker({ inbox: elsewhere, pollIntervalMs: 60_000, onEvent: write });
      w.start();
      await new Promise((resolve) => setTimeout(resolve, 200)); // idle, listening
      let expected = 0;
      for (const burst of [1, 12, 1, 5]) {
        await Promise.all(
          Array.from({ length: burst }, (_, i) => deliver({ type: 'kyb.case.status_changed', data: { refId: `${burst}-${i}` } })),
        );
        expected += burst;
        await until(async () => (await effects()).length === expected, `the woken worker (${expected} events)`, 10_000);
      }
    });

    it('a ctx.sql kept past its event (a late promise, a closure) refuses every query, so no ended attempt writes after the fact', async () => {
      const { deliver, worker, write, effects, schema } = await fresh();
      // Each attempt keeps its ctx.sql in a closure; they are all used once the event is done, however long that took.
      const kept: Array<() => Promise<unknown>> = [];
      const outcome = (query: Promise<unknown>) =>
        query.then(
          () => 'ran',
          (error: { name: string; code: string }) => ({ name: error.name, code: error.code }),
        );
      const w = worker({
        retry: { maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 20 },
        onEvent: async (ctx) => {
          kept.push(() =>
            outcome(ctx.sql.query(`INSERT INTO ${schema}.effects (id, attempt) VALUES ($1, $2)`, [ctx.id, 100 + ctx.attempt])),
          );
          if (ctx.attempt === 1) {
            await write(ctx);
            throw new Error('fails after writing');
          }
          if (ctx.attempt === 2) throw new Error('fails before writing');
          await write(ctx);
        },
      });
      w.start();
      const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'kept' } });
      await until(async () => kept.length === 3 && (await effects()).length > 0, 'the third attempt');
      const outcomes = await Promise.all(kept.map((use) => use()));
      expect(await effects()).toEqual([{ id, attempt: 3 }]);
      expect(outcomes).toEqual(Array(3).fill({ name: 'TransactionEndedError', code: 'transaction_ended' }));
    });

    it('stop() lets running work finish and takes nothing new', async () => {
      const { deliver, worker, write, effects } = await fresh();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const started: string[] = [];
      const w = worker({
        concurrency: 1,
        onEvent: async (ctx) => {
          started.push(ctx.id);
          await gate;
          await write(ctx);
        },
      });
      w.start();
      await deliver({ type: 'kyb.case.status_changed', data: { refId: 'slow' } });
      await until(async () => started.length === 1, 'the first event to start');
      let stoppedYet = false;
      const stopped = w.stop({ timeoutMs: 5_000 }).then(() => {
        stoppedYet = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stoppedYet).toBe(false); // waiting for the running event
      release();
      await stopped;
      expect(await effects()).toHaveLength(1);
      // Stopped: a new event is stored, and nothing takes it.
      await deliver({ type: 'kyb.case.status_changed', data: { refId: 'after' } });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(started).toHaveLength(1);
    });
  });
}

inboxSuite('PGlite (embedded)', async () => {
  const db = await PGlite.create();
  return { db, close: () => db.close() };
});

if (serverAvailable) {
  const created: string[] = [];
  inboxSuite('PostgreSQL server', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 20 });
    return {
      db: pool,
      close: async () => {
        const { rows } = await pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`verikit_inbox_${process.pid}_%`]);
        for (const row of rows) await pool.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
        void created;
        await pool.end();
      },
    };
  });
}

describe('createPostgresInbox options', () => {
  it('refuses a db that cannot run a transaction on a connection of its own', () => {
    expect(() => createPostgresInbox({ db: { query: async () => ({ rows: [] }) } })).toThrow(/pg Pool or a PGlite instance/);
  });

  it('an onError that throws is told of a background failure (pruning) and nothing more: no unhandled rejection', async () => {
    const db = new PGlite();
    const heard: unknown[] = [];
    const unhandled: unknown[] = [];
    const hear = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', hear);
    const inbox = createPostgresInbox({
      db,
      pruneIntervalMs: 10,
      onError: (error) => {
        heard.push(error);
        throw new Error('the alerting sink is down');
      },
    });
    try {
      await inbox.migrate();
      await inbox.accept({ id: 'msg_prune', timestamp: 1, body: '{}' });
      // Every pruning round fails from here on.
      await db.query('ALTER TABLE verikit.verikit_inbox RENAME TO moved');
      await vi.waitFor(() => expect(heard.length).toBeGreaterThanOrEqual(2));
      await inbox.close();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(String(heard[0])).toMatch(/verikit_inbox/);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', hear);
      await inbox.close();
      await db.close();
    }
  });
});

describe.runIf(serverAvailable)('the listening connection', () => {
  it("is not one of the pool's: with max: 1 the route keeps its connection (204), and a NOTIFY still wakes another instance's worker", async () => {
    const app = `verikit-listen-own-${process.pid}`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1, application_name: app });
    pool.on('error', () => {});
    // Looks on from outside the pool, which has room for one connection only.
    const observer = new pg.Client({ connectionString: POSTGRES_URL });
    await observer.connect();
    const schema = `verikit_listen_${process.pid}_${Date.now().toString(36)}_own`;
    const inbox = createPostgresInbox({ db: pool, schema });
    const elsewhere = createPostgresInbox({ db: pool, schema });
    await inbox.migrate();
    await observer.query(`CREATE TABLE ${schema}.effects (id text NOT NULL)`);
    const worker = createInboxWorker<Queryable>({
      inbox: elsewhere,
      pollIntervalMs: 60_000, // only a notification can wake it in time
      logger: false,
      onEvent: async (ctx) => {
        await ctx.sql.query(`INSERT INTO ${schema}.effects (id) VALUES ($1)`, [ctx.id]);
      },
    });
    const route = await serveWebhook({ secret: SECRET, inbox, logger: false });
    try {
      worker.start();
      await until(
        async () =>
          (await observer.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, [app])).rows
            .length === 1,
        'the LISTEN connection',
      );
      const signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.status_changed', data: { refId: 'max1' } } });
      expect(await route.send(signed)).toBe(204);
      await until(async () => (await observer.query(`SELECT id FROM ${schema}.effects`)).rows.length === 1, 'the woken worker');
      expect((await observer.query(`SELECT id FROM ${schema}.effects`)).rows).toEqual([{ id: signed.id }]);
    } finally {
      await route.close();
      await worker.stop({ timeoutMs: 2_000 });
      await elsewhere.close();
      await inbox.close();
      await observer.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await observer.end();
      await pool.end();
    }
  });

  it('is closed on close(), not left LISTENing, and a later server error on it is neither unheard nor a double release', async () => {
    const app = `verikit-listen-close-${process.pid}`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4, application_name: app });
    pool.on('error', () => {});
    const schema = `verikit_listen_${process.pid}_${Date.now().toString(36)}`;
    const inbox = createPostgresInbox({ db: pool, schema });
    await inbox.migrate();
    try {
      const controller = new AbortController();
      const waited = inbox.waitForWork(controller.signal, 200); // opens the LISTEN connection
      await until(
        async () =>
          (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, [app])).rows.length ===
          1,
        'the LISTEN connection',
      );
      await waited;
      const listener = (await pool.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`, [app]))
        .rows[0]?.pid as number;
      await inbox.close();
      const unhandled: unknown[] = [];
      const onUncaught = (error: unknown) => unhandled.push(error);
      process.on('uncaughtException', onUncaught);
      try {
        // The server ends that backend (a restart, an admin): nothing may throw in this process.
        await pool.query('SELECT pg_terminate_backend($1)', [listener]);
        await new Promise((resolve) => setTimeout(resolve, 200));
      } finally {
        process.off('uncaughtException', onUncaught);
      }
      expect(unhandled).toEqual([]);
      const stillListening = await pool.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%' AND state = 'idle'`,
        [app],
      );
      expect(stillListening.rows).toEqual([]);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });
});

describe.runIf(serverAvailable)('an onEvent past eventTimeoutMs with its query still running', () => {
  it('has its connection destroyed and its backend stopped (no ROLLBACK queued behind the query), and the pool keeps serving', async () => {
    const app = `verikit-hung-query-${process.pid}`;
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2, application_name: app });
    pool.on('error', () => {});
    const schema = `verikit_hung_${process.pid}_${Date.now().toString(36)}`;
    const inbox = createPostgresInbox({ db: pool, schema });
    await inbox.migrate();
    await pool.query(`CREATE TABLE ${schema}.effects (id text NOT NULL, attempt int NOT NULL)`);
    const sleeping = async () =>
      (
        await pool.query(
          `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()`,
          [app],
        )
      ).rows.length;
    const worker = createInboxWorker<Queryable>({
      inbox,
      concurrency: 1,
      pollIntervalMs: 50,
      eventTimeoutMs: 1_500,
      retry: { baseDelayMs: 10, maxDelayMs: 20 },
      logger: false,
      onEvent: async (ctx) => {
        await ctx.sql.query(`INSERT INTO ${schema}.effects (id, attempt) VALUES ($1, $2)`, [ctx.id, ctx.attempt]);
        // The first attempt waits on the database for ten minutes (a lock, a slow query): the transaction is mid-query.
        if (ctx.attempt === 1) await ctx.sql.query('SELECT pg_sleep(600)');
      },
    });
    try {
      await inbox.accept({ id: 'msg_hung_query', timestamp: 1, body: '{"type":"kyb.case.status_changed"}' });
      worker.start();
      await until(async () => (await sleeping()) === 1, 'the first attempt to be in pg_sleep');
      await until(
        async () => (await pool.query(`SELECT state FROM ${schema}.verikit_inbox WHERE id = 'msg_hung_query'`)).rows[0]?.state === 'done',
        'the second attempt to complete',
        20_000,
      );
      expect((await pool.query(`SELECT id, attempt FROM ${schema}.effects`)).rows).toEqual([{ id: 'msg_hung_query', attempt: 2 }]);
      // The first attempt's backend was stopped, not left sleeping in its transaction; the pool was not drained by it.
      await until(async () => (await sleeping()) === 0, 'the sleeping backend to be gone');
      expect(pool.totalCount).toBeLessThanOrEqual(2);
      expect((await pool.query('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
    } finally {
      await worker.stop({ timeoutMs: 2_000 });
      await inbox.close();
      // Should the test fail, no backend of it may stay asleep holding its locks.
      await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [
        app,
      ]);
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });
});
