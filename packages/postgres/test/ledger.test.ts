import { PGlite } from '@electric-sql/pglite';
import {
  type LedgerChange,
  type LedgerKey,
  type LedgerLock,
  type Observation,
  StorageTimeoutError,
  TransactionEndedError,
} from '@verikit/core';
import { ledgerContract } from '@verikit/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { startStallingProxy } from '../../../test-support/stalling-proxy.js';
import { createPostgresLedger, type PostgresLedger, type Queryable } from '../src/index.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
const run = `${process.pid}_${Date.now().toString(36)}`;
let schemas = 0;

const PAST = new Date(Date.now() - 60_000);
const observed = (status: string, source: 'webhook' | 'reconcile' = 'webhook'): Observation & { source: 'webhook' | 'reconcile' } => ({
  status,
  final: status === 'COMPLETED',
  fingerprint: `fp-${status}`,
  source,
});
const later = () => new Date(Date.now() + 3_600_000);
const noWork = async () => {};

function asLock(value: LedgerLock | 'busy' | 'untracked'): LedgerLock {
  if (typeof value === 'string') throw new Error(`expected a lock, got ${value}`);
  return value;
}

/**
 * The PostgreSQL specifics every engine runs. `oneConnection`: PGlite, where a statement issued while
 * a transaction is open waits for it instead of running beside it.
 */
function engineSuite(name: string, open: () => Promise<{ db: Queryable; close(): Promise<void> }>, oneConnection: boolean) {
  describe(`${name}: the ledger's PostgreSQL specifics`, () => {
    let db: Queryable;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await open());
    });
    afterAll(async () => close?.());

    /** A fresh schema with its ledger and an effects table for onChange to write through ctx.sql. */
    async function fresh(options: { timeoutMs?: number } = {}) {
      const schema = `verikit_ledger_${run}_${++schemas}`;
      const ledger = createPostgresLedger({ db, schema, ...options });
      await ledger.migrate();
      await db.query(`CREATE TABLE ${schema}.effects (ref_id text NOT NULL, version int NOT NULL)`);
      const effects = async () => (await db.query(`SELECT ref_id, version FROM ${schema}.effects ORDER BY ref_id, version`)).rows;
      const write = (schemaTx: Queryable, key: LedgerKey, version: number) =>
        schemaTx.query(`INSERT INTO ${schema}.effects (ref_id, version) VALUES ($1, $2)`, [key.refId, version]);
      return { schema, ledger, effects, write };
    }

    describe('the ledger contract', () => {
      // One effects table for every case (their tags are unique), beside each case's own schema.
      const effectsTable = `verikit_ledger_${run}_effects.effects`;
      beforeAll(async () => {
        await db.query(`CREATE SCHEMA verikit_ledger_${run}_effects`);
        await db.query(`CREATE TABLE ${effectsTable} (tag text NOT NULL)`);
      });
      for (const c of ledgerContract<Queryable>({
        createLedger: async () => {
          const ledger = createPostgresLedger({ db, schema: `verikit_ledger_${run}_${++schemas}` });
          await ledger.migrate();
          return ledger;
        },
        effects: {
          write: async (tx, tag) => {
            await tx.query(`INSERT INTO ${effectsTable} (tag) VALUES ($1)`, [tag]);
          },
          count: async (tag) => Number((await db.query(`SELECT count(*)::int AS n FROM ${effectsTable} WHERE tag = $1`, [tag])).rows[0]?.n),
        },
        disposeLedger: (ledger) => ledger.close?.(),
      })) {
        it(c.name, c.run);
      }
    });

    it('migrate() runs from several instances at once, and again, and keeps one state row', async () => {
      const schema = `verikit_ledger_${run}_${++schemas}`;
      await Promise.all(Array.from({ length: 5 }, () => createPostgresLedger({ db, schema }).migrate()));
      const ledger = createPostgresLedger({ db, schema });
      await ledger.track({ kind: 'kyb', refId: 'kept' }, { nextCheckAt: PAST });
      await ledger.migrate();
      const { rows } = await db.query(
        `SELECT (SELECT count(*) FROM ${schema}.verikit_ledger)::int AS rows, (SELECT count(*) FROM ${schema}.verikit_ledger_state)::int AS state`,
      );
      expect(rows[0]).toEqual({ rows: 1, state: 1 });
    });

    it('lock, record and get keep the row on the database clock; lockedAt comes from the database', async () => {
      const { ledger, effects, write } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'business-42' };
      expect(await ledger.lock(key, { leaseMs: 10_000 })).toBe('untracked');
      expect(await ledger.track(key, { nextCheckAt: PAST })).toBe('tracked');
      expect(await ledger.track(key, { nextCheckAt: later() })).toBe('already-tracked');
      const now = (await db.query('SELECT now() AS now')).rows[0]?.now as Date;
      const lock = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      expect(lock.lockedAt.getTime()).toBeGreaterThanOrEqual(now.getTime());
      expect(lock.entry).toMatchObject({ version: 0, status: null, nextCheckAt: PAST });
      expect(await ledger.lock(key, { leaseMs: 10_000 })).toBe('busy');
      const next = later();
      const changes: unknown[] = [];
      const outcome = await ledger.record(
        lock,
        observed('IN_REVIEW'),
        () => next,
        async (change, tx) => {
          changes.push(change);
          await write(tx, change, change.version);
        },
      );
      expect(outcome).toBe('changed');
      expect(changes).toEqual([
        { kind: 'kyb', refId: 'business-42', previous: null, current: 'IN_REVIEW', final: false, version: 1, source: 'webhook' },
      ]);
      expect(await effects()).toEqual([{ ref_id: 'business-42', version: 1 }]);
      expect(await ledger.get(key)).toMatchObject({
        status: 'IN_REVIEW',
        fingerprint: 'fp-IN_REVIEW',
        version: 1,
        observedAt: lock.lockedAt,
        source: 'webhook',
        nextCheckAt: next,
        failures: 0,
      });
      // The same result again: recorded as seen, nothing run, the version kept.
      const again = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      expect(await ledger.record(again, observed('IN_REVIEW', 'reconcile'), (changed) => (changed ? null : next), noWork)).toBe(
        'unchanged',
      );
      expect(await ledger.get(key)).toMatchObject({ version: 1, source: 'reconcile', observedAt: again.lockedAt });
      const stats = await ledger.stats();
      expect(stats).toMatchObject({ pending: 1, final: 0 });
      expect(stats.lastWebhookAt?.getTime()).toBeGreaterThanOrEqual(lock.lockedAt.getTime());
    });

    it('refIds with NUL and backslashes are rows of their own and read back exactly (text cannot hold NUL)', async () => {
      const { ledger } = await fresh();
      const refIds = ['a\u0000b', 'a\\0b', 'a\\\u0000b', 'a\\\\0b', 'a\\', '\\', '\u0000', 'a0b'];
      for (const refId of refIds) expect(await ledger.track({ kind: 'kyc', refId }, { nextCheckAt: PAST })).toBe('tracked');
      for (const refId of refIds) expect((await ledger.get({ kind: 'kyc', refId }))?.refId).toBe(refId);
      expect((await ledger.list()).map((e) => e.refId).sort()).toEqual([...refIds].sort());
      const claimed = await ledger.claimDue({ limit: 100, leaseMs: 10_000 });
      expect(claimed.map((lock) => lock.key.refId).sort()).toEqual([...refIds].sort());
      const nul = claimed.find((lock) => lock.key.refId === 'a\u0000b') as LedgerLock;
      expect(await ledger.record(nul, observed('IN_REVIEW'), () => null, noWork)).toBe('changed');
      expect(
        await ledger.release(claimed.find((lock) => lock.key.refId === 'a\\0b') as LedgerLock, { nextCheckAt: null, failures: 2 }),
      ).toBe('ok');
      expect(await ledger.get({ kind: 'kyc', refId: 'a\u0000b' })).toMatchObject({ version: 1, failures: 0 });
      expect(await ledger.get({ kind: 'kyc', refId: 'a\\0b' })).toMatchObject({ version: 0, failures: 2 });
    });

    it('two locks of one refId at once: exactly one is taken, the other is busy', async () => {
      const { ledger } = await fresh();
      const key: LedgerKey = { kind: 'kyc', refId: 'person-1' };
      await ledger.track(key, { nextCheckAt: PAST });
      const results = await Promise.all(Array.from({ length: 6 }, () => ledger.lock(key, { leaseMs: 10_000 })));
      expect(results.filter((r) => typeof r !== 'string')).toHaveLength(1);
      expect(results.filter((r) => r === 'busy')).toHaveLength(5);
    });

    it('onChange throwing rolls back its writes and the change; the lock stays the caller’s to release', async () => {
      const { ledger, effects, write } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'throws' };
      await ledger.track(key, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      const boom = new Error('onChange failed after writing');
      await expect(
        ledger.record(
          lock,
          observed('COMPLETED'),
          () => null,
          async (change, tx) => {
            await write(tx, change, change.version);
            throw boom;
          },
        ),
      ).rejects.toBe(boom);
      expect(await effects()).toEqual([]);
      expect(await ledger.get(key)).toMatchObject({ version: 0, status: null, fingerprint: null, observedAt: null, nextCheckAt: PAST });
      expect(await ledger.stats()).toMatchObject({ lastWebhookAt: null });
      expect(await ledger.lock(key, { leaseMs: 10_000 })).toBe('busy');
      expect(await ledger.release(lock, { nextCheckAt: PAST, failures: 1 })).toBe('ok');
      expect(await ledger.get(key)).toMatchObject({ failures: 1 });
      // Tried again: recorded once, as version 1.
      const retry = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      expect(
        await ledger.record(
          retry,
          observed('COMPLETED'),
          () => null,
          async (change, tx) => void (await write(tx, change, change.version)),
        ),
      ).toBe('changed');
      expect(await effects()).toEqual([{ ref_id: 'throws', version: 1 }]);
    });

    it('ctx.sql kept past record is refused with TransactionEndedError and writes nothing', async () => {
      const { ledger, effects, write } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'kept-sql' };
      await ledger.track(key, { nextCheckAt: PAST });
      let kept: Queryable | undefined;
      const lock = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      await ledger.record(
        lock,
        observed('IN_REVIEW'),
        () => null,
        async (_change, tx) => {
          kept = tx;
        },
      );
      await expect(write(kept as Queryable, key, 99)).rejects.toBeInstanceOf(TransactionEndedError);
      expect(await effects()).toEqual([]);
    });

    it('a lock taken over by another (its lease ran out) makes record stale: nothing runs, nothing changes', async () => {
      const { ledger } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'taken-over' };
      await ledger.track(key, { nextCheckAt: PAST });
      const first = asLock(await ledger.lock(key, { leaseMs: 1 }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      let ran = false;
      expect(
        await ledger.record(
          first,
          observed('IN_REVIEW'),
          () => null,
          async () => {
            ran = true;
          },
        ),
      ).toBe('stale');
      expect(await ledger.release(first, { nextCheckAt: null, failures: 3 })).toBe('stale');
      expect(ran).toBe(false);
      expect(await ledger.get(key)).toMatchObject({ version: 0, failures: 0 });
      expect(await ledger.record(second, observed('IN_REVIEW'), () => null, noWork)).toBe('changed');
    });

    /**
     * Records a change through `lock` whose work runs `work` and then waits; once `takeAfter` has
     * settled, another lock of the row is tried: busy until the change commits (PGlite runs that lock
     * after the transaction: then it is free, and the change is in).
     */
    async function takeOverDuringChange(
      ledger: PostgresLedger,
      lock: LedgerLock,
      work: (change: LedgerChange, tx: Queryable) => Promise<void>,
      takeAfter: Promise<unknown>,
    ): Promise<void> {
      let finish!: () => void;
      const gate = new Promise<void>((resolve) => (finish = resolve));
      let committed = false;
      const recording = ledger
        .record(
          lock,
          observed('IN_REVIEW'),
          () => null,
          async (change, tx) => {
            await work(change, tx);
            await gate;
          },
        )
        .then((outcome) => {
          committed = true;
          return outcome;
        });
      await takeAfter;
      const taking = ledger.lock(lock.key, { leaseMs: 10_000 }).then((result) => ({ result, afterCommit: committed }));
      if (!oneConnection) expect((await taking).result).toBe('busy'); // skipped, not waited for
      finish();
      expect(await recording).toBe('changed');
      const { result, afterCommit } = await taking;
      if (oneConnection) expect(afterCommit && typeof result !== 'string' && result.entry.version === 1).toBe(true);
    }

    it('a lock whose lease runs out while onChange runs is not taken over before the change commits', async () => {
      const { ledger, effects, write } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'slow-change' };
      await ledger.track(key, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock(key, { leaseMs: 1 }));
      let entered!: () => void;
      const inWork = new Promise<void>((resolve) => (entered = resolve));
      const leaseOver = inWork.then(() => new Promise((resolve) => setTimeout(resolve, 20)));
      await takeOverDuringChange(
        ledger,
        lock,
        async (change, tx) => {
          await write(tx, change, change.version);
          entered();
        },
        leaseOver,
      );
      expect(await effects()).toEqual([{ ref_id: 'slow-change', version: 1 }]);
    });

    it('a change whose onChange writes nothing through ctx.sql and outlives half the lease still holds its row until it commits', async () => {
      const { ledger } = await fresh();
      const key: LedgerKey = { kind: 'kyb', refId: 'slow-change-no-sql' };
      await ledger.track(key, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock(key, { leaseMs: 200 }));
      const leaseOver = new Promise((resolve) => setTimeout(resolve, 400));
      await takeOverDuringChange(ledger, lock, async () => {}, leaseOver);
      expect(await ledger.get(key)).toMatchObject({ version: 1, status: 'IN_REVIEW' });
    });

    it('a quick change whose onChange writes nothing through ctx.sql is recorded without a transaction, by one statement', async () => {
      // Every statement sent and every transaction opened, through the pool's clients or PGlite's transactions.
      const counted = { statements: 0, transactions: 0 };
      const countStatement = (text: unknown) => {
        counted.statements++;
        if (text === 'BEGIN') counted.transactions++;
      };
      const watching = <T extends object>(target: T): T =>
        new Proxy(target, {
          get(object, property) {
            const value = Reflect.get(object, property, object);
            if (property === 'query' && typeof value === 'function')
              return (text: unknown, ...rest: unknown[]) => {
                countStatement(text);
                return value.call(object, text, ...rest);
              };
            if (property === 'connect' && typeof value === 'function')
              return (done: (error: Error | undefined, client?: object, ...rest: unknown[]) => void) =>
                value.call(object, (error: Error | undefined, client?: object, ...rest: unknown[]) =>
                  done(error, client && watching(client), ...rest),
                );
            if (property === 'transaction' && typeof value === 'function')
              return (work: (tx: Queryable) => Promise<unknown>) => {
                counted.transactions++;
                return value.call(object, (tx: Queryable) => work(watching(tx)));
              };
            return typeof value === 'function' ? value.bind(object) : value;
          },
        });
      const watched = watching(db);
      const { schema } = await fresh();
      const ledger = createPostgresLedger({ db: watched, schema });
      const key: LedgerKey = { kind: 'kyc', refId: 'quick-change' };
      await ledger.track(key, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock(key, { leaseMs: 10_000 }));
      const before = { ...counted };
      let ran = 0;
      expect(
        await ledger.record(
          lock,
          observed('APPROVED'),
          () => null,
          async () => void ran++,
        ),
      ).toBe('changed');
      expect(ran).toBe(1);
      expect(counted).toEqual({ statements: before.statements + 1, transactions: before.transactions });
      expect(await ledger.get(key)).toMatchObject({ version: 1, status: 'APPROVED' });
    });

    it('3 claimDue at once over 50 due rows never hand out one row twice, and leave none behind', async () => {
      const { ledger } = await fresh();
      for (let i = 0; i < 50; i++)
        await ledger.track({ kind: i % 2 ? 'kyb' : 'kyc', refId: `due-${i}` }, { nextCheckAt: new Date(PAST.getTime() + i) });
      await ledger.track({ kind: 'kyb', refId: 'not-due' }, { nextCheckAt: later() });
      const batches = await Promise.all([0, 1, 2].map(() => ledger.claimDue({ limit: 20, leaseMs: 10_000 })));
      const rest = await ledger.claimDue({ limit: 50, leaseMs: 10_000 });
      const handed = [...batches.flat(), ...rest].map((lock) => `${lock.key.kind}:${lock.key.refId}`);
      expect(new Set(handed).size).toBe(handed.length);
      expect(handed).toHaveLength(50);
      expect(handed).not.toContain('kyb:not-due');
      for (const batch of batches) {
        const due = batch.map((lock) => lock.entry.nextCheckAt?.getTime() ?? 0);
        expect(due).toEqual([...due].sort((a, b) => a - b));
      }
      expect(await ledger.claimDue({ limit: 50, leaseMs: 10_000 })).toEqual([]);
      expect(new Set([...batches.flat(), ...rest].map((lock) => lock.token)).size).toBe(50);
    });

    it('reserveRead spaces reads by the interval, and pauseReads holds them back', async () => {
      const { ledger } = await fresh();
      const minute = 60_000;
      expect(await ledger.reserveRead({ intervalMs: minute })).toBe(0);
      const second = await ledger.reserveRead({ intervalMs: minute });
      expect(second).toBeGreaterThan(minute - 5_000);
      expect(second).toBeLessThanOrEqual(minute);
      await ledger.pauseReads(10 * minute);
      const paused = await ledger.reserveRead({ intervalMs: minute });
      expect(paused).toBeGreaterThan(10 * minute - 5_000);
      expect(paused).toBeLessThanOrEqual(10 * minute);
      // A pause shorter than the reservations already made moves nothing.
      await ledger.pauseReads(1_000);
      expect(await ledger.reserveRead({ intervalMs: minute })).toBeGreaterThan(11 * minute - 5_000);
    });

    it('list and stats: pending and final rows, soonest due first', async () => {
      const { ledger } = await fresh();
      await ledger.track({ kind: 'kyb', refId: 'b' }, { nextCheckAt: new Date(PAST.getTime() + 2) });
      await ledger.track({ kind: 'kyc', refId: 'a' }, { nextCheckAt: new Date(PAST.getTime() + 1) });
      await ledger.track({ kind: 'kyb', refId: 'done' }, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock({ kind: 'kyb', refId: 'done' }, { leaseMs: 10_000 }));
      await ledger.record(lock, observed('COMPLETED', 'reconcile'), () => null, noWork);
      expect((await ledger.list()).map((e) => e.refId)).toEqual(['a', 'b', 'done']);
      expect((await ledger.list({ pending: true })).map((e) => e.refId)).toEqual(['a', 'b']);
      expect((await ledger.list({ kind: 'kyb', limit: 1 })).map((e) => e.refId)).toEqual(['b']);
      expect(await ledger.stats()).toEqual({
        pending: 2,
        pendingByKind: { kyb: { pending: 1, oldestTrackedAt: expect.any(Date) }, kyc: { pending: 1, oldestTrackedAt: expect.any(Date) } },
        final: 1,
        lastWebhookAt: null,
      });
      expect(await ledger.forget({ kind: 'kyb', refId: 'done' })).toBe(false);
      expect(await ledger.forget({ kind: 'kyb', refId: 'b' })).toBe(true);
      expect(await ledger.get({ kind: 'kyb', refId: 'b' })).toBeUndefined();
    });

    it('bad input is refused with a typed error before it reaches SQL', async () => {
      const { ledger } = await fresh();
      await expect(ledger.track({ kind: 'kyx', refId: 'a' } as never, { nextCheckAt: PAST })).rejects.toMatchObject({
        code: 'invalid_argument',
      });
      await expect(ledger.track({ kind: 'kyb', refId: '' }, { nextCheckAt: PAST })).rejects.toMatchObject({ code: 'invalid_argument' });
      await expect(ledger.track({ kind: 'kyb', refId: 'x'.repeat(257) }, { nextCheckAt: PAST })).rejects.toMatchObject({
        code: 'invalid_argument',
      });
      await expect(ledger.track({ kind: 'kyb', refId: 'a' }, { nextCheckAt: new Date(Number.NaN) })).rejects.toMatchObject({
        code: 'invalid_argument',
      });
      await expect(ledger.list({ kind: 'kyx' as never })).rejects.toMatchObject({ code: 'invalid_argument' });
      await expect(ledger.claimDue({ limit: -1, leaseMs: 1_000 })).rejects.toMatchObject({ code: 'invalid_argument' });
      expect(await ledger.list()).toEqual([]);
    });

    it('a row or database held by another transaction: calls fail with StorageTimeoutError within timeoutMs; late locks are handed back', async () => {
      // A short bound for the calls that must give up; every other call on a patient ledger over the same tables, so a busy machine fails none of them.
      const { schema, ledger: bounded } = await fresh({ timeoutMs: 300 });
      const ledger = createPostgresLedger({ db, schema });
      const key: LedgerKey = { kind: 'kyb', refId: 'held' };
      const other: LedgerKey = { kind: 'kyb', refId: 'other' };
      await ledger.track(key, { nextCheckAt: PAST });
      await ledger.track(other, { nextCheckAt: PAST });
      const lock = asLock(await ledger.lock(key, { leaseMs: 60_000 }));
      let letGo!: () => void;
      const holder = holdRow(schema, key, new Promise<void>((resolve) => (letGo = resolve)));
      try {
        await holder.held;
        // Waits for the row (and on PGlite for the only connection): bounded, not a hang.
        await expect(bounded.release(lock, { nextCheckAt: PAST, failures: 1 })).rejects.toBeInstanceOf(StorageTimeoutError);
        if (oneConnection) {
          await expect(bounded.lock(other, { leaseMs: 60_000 })).rejects.toBeInstanceOf(StorageTimeoutError);
          await expect(bounded.claimDue({ limit: 10, leaseMs: 60_000 })).rejects.toBeInstanceOf(StorageTimeoutError);
        } else {
          // A row held elsewhere is skipped, not waited for.
          expect(await ledger.claimDue({ limit: 10, leaseMs: 10_000 }).then((locks) => locks.map((l) => l.key.refId))).toEqual(['other']);
        }
      } finally {
        letGo();
        await holder.done;
      }
      // The release that timed out may still have landed ('stale' then); either way the row comes free.
      expect(['ok', 'stale']).toContain(await ledger.release(lock, { nextCheckAt: PAST, failures: 1 }));
      expect(typeof (await ledger.lock(key, { leaseMs: 10_000 }))).toBe('object');
      if (oneConnection) {
        // The lock and the claim answered after their callers gave up: handed back, not held for their 60 s lease.
        let late: LedgerLock | 'busy' | 'untracked' = 'busy';
        for (let i = 0; i < 100 && late === 'busy'; i++) {
          late = await ledger.lock(other, { leaseMs: 10_000 });
          if (late === 'busy') await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(typeof late).toBe('object');
      }
    });

    /** A transaction holding `key`'s row FOR UPDATE until `until` (on PGlite, the only connection too). */
    function holdRow(schema: string, key: LedgerKey, until: Promise<void>): { held: Promise<void>; done: Promise<void> } {
      const sql = `SELECT 1 FROM ${schema}.verikit_ledger WHERE kind = $1 AND ref_id = $2 FOR UPDATE`;
      let held!: () => void;
      const holding = new Promise<void>((resolve) => (held = resolve));
      const inTransaction = async (tx: Queryable) => {
        await tx.query(sql, [key.kind, key.refId]);
        held();
        await until;
      };
      if (oneConnection) return { held: holding, done: (db as PGlite).transaction(inTransaction) };
      const done = (async () => {
        const client = await (db as pg.Pool).connect();
        try {
          await client.query('BEGIN');
          await inTransaction(client);
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
      })();
      return { held: holding, done };
    }
  });
}

engineSuite(
  'PGlite (embedded)',
  async () => {
    const db = await PGlite.create();
    return { db, close: () => db.close() };
  },
  true,
);

if (serverAvailable) {
  const dropSchemas = async (db: Queryable) => {
    const { rows } = await db.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`verikit_ledger_${run}_%`]);
    for (const row of rows) await db.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
  };
  engineSuite(
    'PostgreSQL server',
    async () => {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 10 });
      return {
        db: pool,
        close: async () => {
          await dropSchemas(pool);
          await pool.end();
        },
      };
    },
    false,
  );

  describe('PostgreSQL server: the ledger across pools and a stalled network', () => {
    const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    afterAll(async () => {
      await dropSchemas(admin);
      await admin.end();
    });

    it('reserveRead from two pools at once: slots spaced by the interval, none shared', async () => {
      const schema = `verikit_ledger_${run}_${++schemas}`;
      const pools = [new pg.Pool({ connectionString: POSTGRES_URL, max: 5 }), new pg.Pool({ connectionString: POSTGRES_URL, max: 5 })];
      try {
        const [a, b] = pools.map((db) => createPostgresLedger({ db, schema })) as [PostgresLedger, PostgresLedger];
        await Promise.all([a.migrate(), b.migrate()]);
        const interval = 60_000;
        const waits = (await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).reserveRead({ intervalMs: interval })))).sort(
          (x, y) => x - y,
        );
        // Slot i is i intervals after the first, less the time the calls took to arrive (well under 5 s).
        waits.forEach((wait, i) => {
          expect(wait).toBeLessThanOrEqual(i * interval);
          expect(wait).toBeGreaterThan(i * interval - 5_000);
        });
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
    });

    it('behind a network that stalls: record fails with StorageTimeoutError in time, rolled back; the same lock records once after', async () => {
      const schema = `verikit_ledger_${run}_${++schemas}`;
      const proxy = await startStallingProxy(POSTGRES_URL);
      const pool = new pg.Pool({ connectionString: proxy.url, max: 4 });
      pool.on('error', () => {});
      try {
        const ledger = createPostgresLedger({ db: pool, schema, timeoutMs: 400 });
        await ledger.migrate();
        await admin.query(`CREATE TABLE ${schema}.effects (ref_id text NOT NULL, version int NOT NULL)`);
        const key: LedgerKey = { kind: 'kyb', refId: 'stalled' };
        await ledger.track(key, { nextCheckAt: PAST });
        const lock = asLock(await ledger.lock(key, { leaseMs: 60_000 }));
        const work = async (change: { version: number }, tx: Queryable) => {
          await tx.query(`INSERT INTO ${schema}.effects (ref_id, version) VALUES ($1, $2)`, [key.refId, change.version]);
          proxy.stall(); // the record statement and COMMIT go into the black hole
        };
        await expect(ledger.record(lock, observed('COMPLETED'), () => null, work)).rejects.toBeInstanceOf(StorageTimeoutError);
        await expect(ledger.lock(key, { leaseMs: 1_000 })).rejects.toBeInstanceOf(StorageTimeoutError);
        proxy.heal();
        // The cut transaction is rolled back once its backend notices (the proxy closes the server side).
        const effects = async () => (await admin.query(`SELECT version FROM ${schema}.effects`)).rows;
        expect(await effects()).toEqual([]);
        let outcome: string | undefined;
        for (let i = 0; i < 100 && outcome === undefined; i++) {
          outcome = await ledger
            .record(
              lock,
              observed('COMPLETED'),
              () => null,
              (change, tx) =>
                tx.query(`INSERT INTO ${schema}.effects (ref_id, version) VALUES ($1, $2)`, [key.refId, change.version]).then(() => {}),
            )
            .catch(() => undefined);
          if (outcome === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(outcome).toBe('changed');
        expect(await effects()).toEqual([{ version: 1 }]);
        expect((await admin.query(`SELECT version, lock_token FROM ${schema}.verikit_ledger`)).rows).toEqual([
          { version: 1, lock_token: null },
        ]);
      } finally {
        await proxy.stop();
        await pool.end();
      }
    });
  });
}

describe('createPostgresLedger options', () => {
  it('refuses a db that cannot run a transaction of its own, and a schema that is not a plain identifier, at creation', () => {
    const db: Queryable = { query: async () => ({ rows: [] }) };
    expect(() => createPostgresLedger({ db })).toThrow(/the ledger needs a pg Pool or a PGlite instance/);
    expect(() => createPostgresLedger({} as never)).toThrow(/db is required/);
    expect(() => createPostgresLedger({ db, schema: 'x"; DROP TABLE y; --' })).toThrow(/schema must be/);
  });
});
