import {
  ConfigurationError,
  checkLedgerKey,
  type EventKind,
  InvalidArgumentError,
  type LeaseOutcome,
  type LedgerAdmin,
  type LedgerChange,
  type LedgerEngine,
  type LedgerEntry,
  type LedgerKey,
  type LedgerListOptions,
  type LedgerLock,
  type LedgerStats,
  type Observation,
  type ObservationSource,
  type RecordOutcome,
  type TrackOutcome,
} from '@verikit/core';
import { type Bound, ownersCall, runBounded } from './bounded.js';
import {
  msFromNow,
  msInterval,
  type PostgresMaintenance,
  type PostgresTableOptions,
  type Queryable,
  resolveTableOptions,
  statement,
  timestamp,
  wholeCount,
  wholeMs,
} from './db.js';
import { migrateSchema } from './migrate.js';
import { checkTransactional, inLazyTransaction } from './transaction.js';

/** Options of {@link createPostgresLedger}. */
export interface PostgresLedgerOptions extends Pick<PostgresTableOptions, 'schema' | 'timeoutMs' | 'onError'> {
  /** A `pg` Pool (each change is recorded in a transaction on a connection of its own) or a PGlite instance. */
  db: Queryable;
}

/** The verification ledger on PostgreSQL: `ctx.sql` of `onChange` is the transaction that records the change. */
export interface PostgresLedger extends LedgerEngine<Queryable>, LedgerAdmin, Omit<PostgresMaintenance, 'prune'> {
  /** Nothing to stop: the ledger runs no background work and never ends the `db` you passed in. */
  close(): Promise<void>;
}

/** Thrown inside the record transaction when the lock is no longer the caller's: rolls it back. */
class LockLost extends Error {}

/** The columns a {@link LedgerEntry} is read from. */
const ENTRY = 'kind, ref_id, status, final, fingerprint, version, observed_at, source, tracked_at, next_check_at, failures';
/** What a statement that took locks answers: the rows, their tokens and the server's time of taking them. */
const LOCKED = `${ENTRY}, lock_token, now() AS locked_at`;

const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : new Date(value as string | Date));
const stringOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

/**
 * A refId as `ref_id` holds it. PostgreSQL text cannot hold NUL, which a refId may: it is stored as
 * `\0`, with `\` itself doubled so every stored value reads back as exactly one refId. Any other
 * refId is stored as it is.
 */
const storedRefId = (refId: string): string => refId.replace(/[\\\u0000]/g, (c) => (c === '\\' ? '\\\\' : '\\0'));
const refIdOf = (stored: string): string => stored.replace(/\\([\\0])/g, (_, c: string) => (c === '0' ? '\u0000' : '\\'));

/** A key checked, as the parameters `kind` and `ref_id` take. */
function keyParams(key: LedgerKey): [EventKind, string] {
  const { kind, refId } = checkLedgerKey(key);
  return [kind, storedRefId(refId)];
}

function entryOf(row: Record<string, unknown>): LedgerEntry {
  return {
    kind: row.kind as EventKind,
    refId: refIdOf(String(row.ref_id)),
    status: stringOrNull(row.status),
    final: row.final === true,
    fingerprint: stringOrNull(row.fingerprint),
    version: Number(row.version),
    observedAt: dateOrNull(row.observed_at),
    source: stringOrNull(row.source) as ObservationSource | null,
    trackedAt: new Date(row.tracked_at as string | Date),
    nextCheckAt: dateOrNull(row.next_check_at),
    failures: Number(row.failures),
  };
}

/** When (this process's monotonic clock) half of each lock's lease is gone: a change being recorded holds its row from then. */
const halfLease = new WeakMap<LedgerLock, number>();

/** Milliseconds until half of `lock`'s lease is gone (0 for a lock this process did not take). */
const halfLeaseLeft = (lock: LedgerLock): number => Math.max(0, (halfLease.get(lock) ?? 0) - performance.now());

/** The lock a row answered, its lease counted from `askedAt` (before the statement was sent, so never later than the server's). */
function lockOf(row: Record<string, unknown>, askedAt: number, leaseMs: number): LedgerLock {
  const entry = entryOf(row);
  const lock: LedgerLock = {
    key: { kind: entry.kind, refId: entry.refId },
    token: String(row.lock_token),
    entry,
    lockedAt: new Date(row.locked_at as string | Date),
  };
  halfLease.set(lock, askedAt + leaseMs / 2);
  return lock;
}

/**
 * The verification ledger on PostgreSQL (or PGlite): a row per `(kind, refId)` in
 * `<schema>.verikit_ledger`, and one row of shared state (the read budget, the last webhook) in
 * `<schema>.verikit_ledger_state`. Every time is the database's clock. A lock is taken by one
 * statement; a change is recorded, and `onChange`'s writes through `ctx.sql` made, in one
 * transaction that holds the row, so two observations of a refId never overlap on any number of
 * instances. Call `migrate()` once at startup.
 * @example
 * const ledger = createPostgresLedger({ db: pool });
 * await ledger.migrate();
 * await ledger.track({ kind: 'kyb', refId: 'business-42' }, { nextCheckAt: new Date() });
 */
export function createPostgresLedger(options: PostgresLedgerOptions): PostgresLedger {
  const { db, schema, report, timeoutMs } = resolveTableOptions(options, 'createPostgresLedger');
  checkTransactional(db, 'the ledger', 'each change');
  const bound: Bound = { db, timeoutMs };
  const table = `${schema}.verikit_ledger`;
  const state = `${schema}.verikit_ledger_state`;

  const trackSql = statement(
    `INSERT INTO ${table} (kind, ref_id, next_check_at) VALUES ($1, $2, $3::timestamptz) ON CONFLICT (kind, ref_id) DO NOTHING RETURNING 1 AS ok`,
  );
  const forgetSql = statement(`DELETE FROM ${table} WHERE kind = $1 AND ref_id = $2 AND version = 0 RETURNING 1 AS ok`);
  // A change being recorded holds the row: the erasure waits for it, then takes the row, and the holder's lock is gone with it.
  const eraseSql = `DELETE FROM ${table} WHERE kind = $1 AND ref_id = $2 RETURNING 1 AS ok`;
  const checkSoonSql = `UPDATE ${table} SET next_check_at = now() WHERE kind = $1 AND ref_id = $2 RETURNING 1 AS ok`;
  const getSql = statement(`SELECT ${ENTRY} FROM ${table} WHERE kind = $1 AND ref_id = $2`);
  // A row held by a record transaction (its lock run out while onChange runs) is skipped, not waited
  // for: it is busy until that commits, and waiting would hold this call up for as long as onChange.
  const lockSql = statement(`WITH taken AS (
  UPDATE ${table} SET lock_token = gen_random_uuid()::text, lock_until = ${msFromNow('$3')}
  WHERE (kind, ref_id) IN (
    SELECT kind, ref_id FROM ${table}
    WHERE kind = $1 AND ref_id = $2 AND (lock_until IS NULL OR lock_until <= now())
    FOR UPDATE SKIP LOCKED
  )
  RETURNING ${LOCKED}
)
SELECT taken.*, EXISTS (SELECT 1 FROM ${table} WHERE kind = $1 AND ref_id = $2) AS tracked
FROM (VALUES (true)) AS one LEFT JOIN taken ON true`);
  const claimDueSql = statement(`UPDATE ${table} SET lock_token = gen_random_uuid()::text, lock_until = ${msFromNow('$2')}
WHERE (kind, ref_id) IN (
  SELECT kind, ref_id FROM ${table}
  WHERE next_check_at <= now() AND (lock_until IS NULL OR lock_until <= now())
  ORDER BY next_check_at LIMIT $1 FOR UPDATE SKIP LOCKED
)
RETURNING ${LOCKED}`);
  // Locks taken by a statement that answered after its caller was told it failed: nobody holds them.
  const unlockSql = `UPDATE ${table} AS l SET lock_token = NULL, lock_until = NULL
FROM json_to_recordset($1::json) AS gone(kind text, ref_id text, token text)
WHERE l.kind = gone.kind AND l.ref_id = gone.ref_id AND l.lock_token = gone.token`;
  const heldSql = statement(`SELECT ${ENTRY} FROM ${table} WHERE kind = $1 AND ref_id = $2 AND lock_token = $3 FOR UPDATE`);
  const recordSql = statement(`WITH recorded AS (
  UPDATE ${table} SET status = $4, final = $5, fingerprint = $6, version = $7, observed_at = $8::timestamptz, source = $9,
    failures = 0, next_check_at = $10::timestamptz, lock_token = NULL, lock_until = NULL
  WHERE kind = $1 AND ref_id = $2 AND lock_token = $3
  RETURNING 1
), heard AS (
  UPDATE ${state} SET last_webhook_at = clock_timestamp()
  -- At most once a second: the one state row is also where every read is reserved, and this
  -- transaction holds it until it commits (onChange included).
  WHERE $9 = 'webhook' AND EXISTS (SELECT 1 FROM recorded)
    AND (last_webhook_at IS NULL OR last_webhook_at < clock_timestamp() - interval '1 second')
  RETURNING 1
)
SELECT (SELECT count(*) FROM recorded)::int AS recorded`);
  const releaseSql = statement(`UPDATE ${table} SET next_check_at = $4::timestamptz, failures = $5, lock_token = NULL, lock_until = NULL
WHERE kind = $1 AND ref_id = $2 AND lock_token = $3 RETURNING 1 AS ok`);
  // clock_timestamp(), not now(): a reservation that waited for another's row lock takes its slot
  // from the time it got the row, and the wait it answers is counted from the time it answers.
  const reserveSql = statement(`UPDATE ${state} SET next_read_at = GREATEST(clock_timestamp(), next_read_at) + ${msInterval('$1')}
RETURNING extract(epoch FROM next_read_at - ${msInterval('$1')} - clock_timestamp())::double precision * 1000 AS wait_ms`);
  const pauseSql = statement(
    `UPDATE ${state} SET next_read_at = GREATEST(next_read_at, clock_timestamp() + ${msInterval('$1')}) RETURNING 1 AS ok`,
  );
  const listSql = statement(`SELECT ${ENTRY} FROM ${table}
WHERE ($1::boolean IS NOT TRUE OR NOT final) AND ($2::text IS NULL OR kind = $2)
ORDER BY next_check_at ASC NULLS LAST, tracked_at, kind, ref_id LIMIT $3`);
  const statsSql = statement(`SELECT count(*) FILTER (WHERE NOT final)::int AS pending, count(*) FILTER (WHERE final)::int AS finals,
  count(*) FILTER (WHERE NOT final AND kind = 'kyb')::int AS kyb_pending, min(tracked_at) FILTER (WHERE NOT final AND kind = 'kyb') AS kyb_oldest,
  count(*) FILTER (WHERE NOT final AND kind = 'kyc')::int AS kyc_pending, min(tracked_at) FILTER (WHERE NOT final AND kind = 'kyc') AS kyc_oldest,
  (SELECT last_webhook_at FROM ${state}) AS last_webhook_at
FROM ${table}`);

  /** Hands back locks a timed-out call took after all, so their rows are not held for a lease nobody uses. */
  const unlockLate = (rows: Array<Record<string, unknown>>) => {
    const gone = rows.filter((row) => row.lock_token != null).map((row) => ({ kind: row.kind, ref_id: row.ref_id, token: row.lock_token }));
    if (gone.length > 0) runBounded(bound, 'handing back late locks', (q) => q.query(unlockSql, [JSON.stringify(gone)])).catch(report);
  };
  const stateMissing = () =>
    new ConfigurationError('db', `the ledger's state row in ${schema}.verikit_ledger_state is missing: run ledger.migrate()`);

  return {
    async migrate() {
      await migrateSchema(db, schema);
    },
    async close() {},
    async track(key: LedgerKey, { nextCheckAt }: { nextCheckAt: Date }): Promise<TrackOutcome> {
      const params = keyParams(key);
      const due = timestamp(nextCheckAt, 'nextCheckAt', false);
      const { rows } = await runBounded(bound, 'tracking a verification', (q) => trackSql.run(q, [...params, due]));
      return rows.length > 0 ? 'tracked' : 'already-tracked';
    },
    async forget(key: LedgerKey): Promise<boolean> {
      const params = keyParams(key);
      const { rows } = await runBounded(bound, 'forgetting a verification', (q) => forgetSql.run(q, params));
      return rows.length > 0;
    },
    async get(key: LedgerKey): Promise<LedgerEntry | undefined> {
      const params = keyParams(key);
      const { rows } = await runBounded(bound, 'reading a ledger row', (q) => getSql.run(q, params));
      return rows[0] && entryOf(rows[0]);
    },
    async lock(key: LedgerKey, { leaseMs }: { leaseMs: number }): Promise<LedgerLock | 'busy' | 'untracked'> {
      const params = keyParams(key);
      const askedAt = performance.now();
      const { rows } = await runBounded(
        bound,
        'locking a ledger row',
        (q) => lockSql.run(q, [...params, wholeMs(leaseMs)]),
        (late) => unlockLate(late.rows),
      );
      const row = rows[0] ?? {};
      if (row.lock_token != null) return lockOf(row, askedAt, leaseMs);
      return row.tracked === true ? 'busy' : 'untracked';
    },
    async record(
      lock: LedgerLock,
      observation: Observation & { source: ObservationSource },
      next: (changed: boolean) => Date | null,
      work: (change: LedgerChange, tx: Queryable) => Promise<void>,
    ): Promise<RecordOutcome> {
      const { kind, refId } = checkLedgerKey(lock.key);
      const params = [kind, storedRefId(refId)];
      const observedAt = timestamp(lock.lockedAt, 'lock.lockedAt', false);
      // The row as the lock took it: only the token's holder writes a locked row, and the record
      // statement checks the token, so it is still the row this change is measured against.
      const row = lock.entry;
      const changed = row.fingerprint !== observation.fingerprint;
      const version = changed ? row.version + 1 : row.version;
      const kept = changed ? observation : { status: row.status, final: row.final, fingerprint: row.fingerprint };
      const recordWith = (due: string | null) => [
        ...params,
        lock.token,
        kept.status,
        kept.final,
        kept.fingerprint,
        version,
        observedAt,
        observation.source,
        due,
      ];
      if (!changed) {
        const due = timestamp(next(false), 'the next check', true);
        const { rows } = await runBounded(bound, 'recording an observation', (q) => recordSql.run(q, recordWith(due)));
        return Number(rows[0]?.recorded) === 0 ? 'stale' : 'unchanged';
      }
      const change: LedgerChange = {
        kind,
        refId,
        previous: row.status,
        current: observation.status,
        final: observation.final,
        version,
        source: observation.source,
      };
      try {
        await inLazyTransaction(
          bound,
          async (tx, own) => {
            // The row is held FOR UPDATE, until the commit, from the first ctx.sql query or once half
            // the lease is gone (at once when it already is): nobody takes the lock over while work
            // runs, even past its lease, and work never runs on a lock another has taken. Work that is
            // quick and writes nothing through ctx.sql needs no transaction: one statement records it.
            let held: Promise<void> | undefined;
            const hold = () =>
              (held ??= own('holding the locked row', (q) => heldSql.run(q, [...params, lock.token])).then(({ rows }) => {
                if (rows[0] === undefined) throw new LockLost();
              }));
            const left = halfLeaseLeft(lock);
            if (left === 0) await hold();
            const timer = setTimeout(() => hold().catch(() => {}), left);
            try {
              await work(change, {
                query: async (text, values) => {
                  await hold();
                  return tx.query(text, values);
                },
              });
              await held;
            } finally {
              clearTimeout(timer);
            }
          },
          {
            what: 'recording an observation',
            run: async (q) => {
              const { rows } = await recordSql.run(q, recordWith(timestamp(next(true), 'the next check', true)));
              if (Number(rows[0]?.recorded) === 0) throw new LockLost();
            },
          },
        );
      } catch (error) {
        if (error instanceof LockLost) return 'stale';
        throw error;
      }
      return 'changed';
    },
    async release(lock: LedgerLock, { nextCheckAt, failures }: { nextCheckAt: Date | null; failures: number }): Promise<LeaseOutcome> {
      const due = timestamp(nextCheckAt, 'nextCheckAt', true);
      return ownersCall(bound, 'releasing a ledger lock', releaseSql, [
        ...keyParams(lock.key),
        lock.token,
        due,
        wholeCount(failures, 'failures', 0),
      ]);
    },
    async claimDue({ limit, leaseMs }: { limit: number; leaseMs: number }): Promise<LedgerLock[]> {
      const askedAt = performance.now();
      const { rows } = await runBounded(
        bound,
        'claiming due ledger rows',
        (q) => claimDueSql.run(q, [wholeCount(limit, 'limit', 0), wholeMs(leaseMs)]),
        (late) => unlockLate(late.rows),
      );
      // RETURNING keeps no order: oldest due first, as the contract says.
      return rows
        .map((row) => lockOf(row, askedAt, leaseMs))
        .sort((a, b) => (a.entry.nextCheckAt?.getTime() ?? 0) - (b.entry.nextCheckAt?.getTime() ?? 0));
    },
    async reserveRead({ intervalMs }: { intervalMs: number }): Promise<number> {
      const { rows } = await runBounded(bound, 'reserving a read', (q) => reserveSql.run(q, [wholeMs(intervalMs)]));
      if (rows[0] === undefined) throw stateMissing();
      // Rounded up: waiting a fraction of a ms too long keeps the spacing; too short would not.
      return Math.max(0, Math.ceil(Number(rows[0].wait_ms)));
    },
    async pauseReads(ms: number): Promise<void> {
      const { rows } = await runBounded(bound, 'pausing reads', (q) => pauseSql.run(q, [wholeMs(ms)]));
      if (rows[0] === undefined) throw stateMissing();
    },
    async list(options: LedgerListOptions = {}): Promise<LedgerEntry[]> {
      const { pending = false, kind, limit = 100 } = options;
      if (kind !== undefined && kind !== 'kyb' && kind !== 'kyc') {
        throw new InvalidArgumentError(`ledger kind must be "kyb" or "kyc", not ${JSON.stringify(kind)}`);
      }
      const { rows } = await runBounded(bound, 'listing the ledger', (q) =>
        listSql.run(q, [pending === true, kind ?? null, wholeCount(limit, 'limit', 0)]),
      );
      return rows.map(entryOf);
    },
    async erase(key: LedgerKey): Promise<boolean> {
      const params = keyParams(key);
      const { rows } = await runBounded(bound, 'erasing a ledger row', (q) => q.query(eraseSql, params));
      return rows.length > 0;
    },
    async checkSoon(key: LedgerKey): Promise<boolean> {
      const params = keyParams(key);
      const { rows } = await runBounded(bound, 'making a ledger row due', (q) => q.query(checkSoonSql, params));
      return rows.length > 0;
    },
    async stats(): Promise<LedgerStats> {
      const { rows } = await runBounded(bound, 'counting the ledger', (q) => statsSql.run(q, []));
      const row = rows[0] ?? {};
      return {
        pending: Number(row.pending ?? 0),
        pendingByKind: {
          kyb: { pending: Number(row.kyb_pending ?? 0), oldestTrackedAt: dateOrNull(row.kyb_oldest) },
          kyc: { pending: Number(row.kyc_pending ?? 0), oldestTrackedAt: dateOrNull(row.kyc_oldest) },
        },
        final: Number(row.finals ?? 0),
        lastWebhookAt: dateOrNull(row.last_webhook_at),
      };
    },
  };
}
