import type {
  AcceptResult,
  DeadLetter,
  DeadLetterQuery,
  EncryptionOptions,
  InboxAdmin,
  InboxDelivery,
  InboxEngine,
  InboxEvent,
  InboxStats,
  LeaseOutcome,
} from '@verikit/core';
import { checkAcceptRow, createAcceptBatcher } from './accept-batch.js';
import { type Bound, ownersCall, runBounded } from './bounded.js';
import {
  msFromNow,
  type PostgresMaintenance,
  type PostgresTableOptions,
  type Queryable,
  resolveTableOptions,
  statement,
  wholeMs,
} from './db.js';
import { createDoneBatcher } from './done-batch.js';
import { createInboxAdmin } from './inbox-admin.js';
import { checkCanListen, listen } from './listener.js';
import { migrateSchema } from './migrate.js';
import { createNotifier } from './notifier.js';
import { storedPayloads } from './payloads.js';
import { createPruner } from './pruner.js';
import { inboxPruning, type PayloadRetentionOptions, resolvePayloadRetention } from './retention.js';
import { checkTransactional, inLazyTransaction } from './transaction.js';

/** Options of {@link createPostgresInbox}. */
export interface PostgresInboxOptions extends PostgresTableOptions, PayloadRetentionOptions {
  /** A `pg` Pool (each event runs in a transaction on a connection of its own) or a PGlite instance. */
  db: Queryable;
  /**
   * Seals stored bodies with AES-256-GCM under your keys (`{ keys: [{ id, key }] }`: the first seals,
   * any opens, so keys rotate; `reseal()` moves old bodies to the current key). Bodies stored before
   * it was on still open. Without it, bodies are stored as received.
   */
  encryption?: EncryptionOptions;
}

/**
 * An inbox on PostgreSQL: `accept` for the webhook route, the worker's side for `createInboxWorker`
 * (`ctx.sql` is the event's transaction), and the operator's (get, dead letters, purge, erase, reseal).
 */
export interface PostgresInbox extends InboxEngine<Queryable>, InboxAdmin, PostgresMaintenance {
  /** Dead letters, oldest first, a page at a time (`after`: the last id of the previous page). */
  deadLetters(options?: DeadLetterQuery): Promise<DeadLetter[]>;
}

/** Thrown inside an event's transaction when its lease turned out to be someone else's: rolls back the work too. */
class LeaseGone extends Error {}

/**
 * The spec's "store and enqueue once" on PostgreSQL (or PGlite): one table keyed by `svix-id`. A
 * delivery is stored and queued by one INSERT (a repeat is a no-op; deliveries of one turn share it); workers lease due events with
 * `FOR UPDATE SKIP LOCKED`, are woken by `LISTEN/NOTIFY` (polling as the fallback), and mark an
 * event done in the same transaction as `onEvent`'s own writes through `ctx.sql`.
 * @example
 * const inbox = createPostgresInbox({ db: pool });
 * await inbox.migrate();
 * app.use('/verikit', verikitRouter({ webhook: { secret, inbox } }));
 * createInboxWorker({ inbox, onEvent: async (ctx) => { await ctx.sql.query('insert into ...', [ctx.id]) } }).start();
 */
export function createPostgresInbox(options: PostgresInboxOptions): PostgresInbox {
  const { db, schemaName, schema, retentionMs, pruneIntervalMs, pruneBatchSize, report, timeoutMs } = resolveTableOptions(
    options,
    'createPostgresInbox',
  );
  const retention = resolvePayloadRetention(options);
  const payloads = storedPayloads(options.encryption);
  const { sealer } = payloads;
  checkTransactional(db, 'the inbox', 'each event');
  checkCanListen(db);
  const bound: Bound = { db, timeoutMs };
  const table = `${schema}.verikit_inbox`;
  const channel = `vk_inbox_${schemaName}`.slice(0, 63);

  const store = createAcceptBatcher({ bound, table });
  const leaseSql = statement(`UPDATE ${table} SET owner = $1, leased_until = ${msFromNow('$3')}, attempts = attempts + 1
WHERE id IN (
  SELECT id FROM ${table}
  WHERE next_run_at <= now() AND (leased_until IS NULL OR leased_until <= now())
  ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED
)
RETURNING id, payload, svix_timestamp, attempts, received_at`);
  const unleaseSql = `UPDATE ${table} SET owner = NULL, leased_until = NULL, attempts = attempts - 1 WHERE owner = $1 AND state = 'pending'`;
  // A done row keeps its owner, so an extension racing the commit reads as ok, not as a lost lease.
  const extendSql = statement(
    `UPDATE ${table} SET leased_until = ${msFromNow('$3')} WHERE id = $1 AND owner = $2 AND state IN ('pending', 'done') RETURNING 1 AS ok`,
  );
  // With no payload retention the body goes as the event is done, in the same statement.
  const doneSet = `state = 'done', next_run_at = NULL, finished_at = now(), leased_until = NULL${retention.payloadRetentionMs === 0 ? ', payload = NULL' : ''}`;
  const doneSql = statement(`UPDATE ${table} SET ${doneSet} WHERE id = $1 AND owner = $2 AND state = 'pending' RETURNING 1 AS ok`);
  const markDone = createDoneBatcher({ bound, table, set: doneSet });
  const failSql = statement(`UPDATE ${table} SET owner = NULL, leased_until = NULL, last_error = $3,
  state = CASE WHEN $4::double precision IS NULL THEN 'dead' ELSE 'pending' END,
  next_run_at = CASE WHEN $4::double precision IS NULL THEN NULL ELSE ${msFromNow('$4')} END,
  finished_at = CASE WHEN $4::double precision IS NULL THEN now() ELSE NULL END
WHERE id = $1 AND owner = $2 AND state = 'pending' RETURNING 1 AS ok`);
  // Pending rows through the due index, dead ones through theirs: the done rows kept for dedupe are never read. The age is
  // taken on the database's clock, the one received_at is on.
  const statsSql = statement(`WITH pending AS (
  SELECT count(*)::int AS pending,
    (count(*) FILTER (WHERE attempts > 0 AND leased_until IS NULL AND next_run_at > now()))::int AS retrying,
    min(received_at) AS oldest
  FROM ${table} WHERE next_run_at IS NOT NULL
)
SELECT pending, retrying, (SELECT count(*) FROM ${table} WHERE state = 'dead')::int AS dead, oldest,
  extract(epoch FROM now() - oldest)::double precision * 1000 AS age_ms
FROM pending`);
  const pruner = createPruner({
    bound,
    statements: inboxPruning(table, { retentionMs, ...retention }),
    batchSize: pruneBatchSize,
    intervalMs: pruneIntervalMs,
    onError: report,
  });

  const notifier = createNotifier({ bound, channel, onError: report });
  const admin = createInboxAdmin({ bound, table, channel, payloads, batchSize: pruneBatchSize });

  // Waiters woken by a notification; the listening connection is made on the first wait and remade after a failure.
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const resolve of waiters) resolve();
  };
  let listening: Promise<() => Promise<void>> | undefined;
  const listenForWork = () =>
    listen({
      db,
      channel,
      timeoutMs,
      onNotification: wake,
      // Listen again on the next wait; polling covers the gap.
      onClosed: () => {
        listening = undefined;
      },
    });

  return {
    ...admin,
    async migrate() {
      await migrateSchema(db, schema);
    },
    prune: pruner.prune,
    async close() {
      await pruner.stop();
      await notifier.settled();
      const stop = await listening?.catch(() => undefined);
      listening = undefined;
      await stop?.();
      wake();
    },
    async accept(delivery: InboxDelivery): Promise<AcceptResult> {
      pruner.start();
      // Without encryption the body is stored as it came: no await, no copy on the route's path.
      const payload = sealer === undefined ? delivery.body : await sealer.seal(delivery.body, delivery.id);
      const row = { id: delivery.id, payload, timestamp: delivery.timestamp };
      checkAcceptRow(row);
      if ((await store(row)) === 'duplicate') return 'duplicate';
      // Committed: wake this process's workers now, and every instance's through NOTIFY.
      wake();
      notifier.notify();
      return 'accepted';
    },
    async lease(owner: string, limit: number, leaseMs: number): Promise<InboxEvent[]> {
      const { rows } = await runBounded(
        bound,
        'a lease',
        (q) => leaseSql.run(q, [owner, limit, wholeMs(leaseMs)]),
        // Leased after the worker was told it failed: nobody runs them, so they are handed back, their attempt uncounted.
        (late) => {
          if (late.rows.length > 0) runBounded(bound, 'handing back a late lease', (q) => q.query(unleaseSql, [owner])).catch(report);
        },
      );
      // A body that does not open is handed over empty, with the error: the worker fails that attempt, and the stored value stays.
      return Promise.all(
        rows.map(async (row) => ({
          id: String(row.id),
          ...(await payloads.forLease(String(row.payload), String(row.id))),
          timestamp: Number(row.svix_timestamp),
          attempt: Number(row.attempts),
          owner,
          receivedAt: new Date(row.received_at as string | Date),
        })),
      );
    },
    extend: (event: InboxEvent, leaseMs: number): Promise<LeaseOutcome> =>
      ownersCall(bound, 'an extension', extendSql, [event.id, event.owner, wholeMs(leaseMs)]),
    async complete(event: InboxEvent, work: (tx: Queryable) => Promise<void>): Promise<LeaseOutcome> {
      // Marked done last, in the work's transaction: if the lease is gone, the work's writes go too.
      const marked = await inLazyTransaction(bound, work, {
        what: 'marking the event done',
        run: async (tx) => {
          if ((await doneSql.run(tx, [event.id, event.owner])).rows.length > 0) return true;
          throw new LeaseGone();
        },
        alone: () => markDone({ id: event.id, owner: event.owner }),
      }).catch((error: unknown) => {
        if (error instanceof LeaseGone) return false;
        throw error;
      });
      return marked ? 'ok' : 'stale';
    },
    async fail(event: InboxEvent, failure: { error: string; retryInMs: number | null }): Promise<LeaseOutcome> {
      const retry = failure.retryInMs === null ? null : wholeMs(failure.retryInMs);
      return ownersCall(bound, 'recording a failure', failSql, [event.id, event.owner, failure.error, retry]);
    },
    async waitForWork(signal: AbortSignal, maxWaitMs: number): Promise<void> {
      if (signal.aborted) return;
      listening ??= listenForWork().catch((error: unknown) => {
        report(error);
        listening = undefined;
        return async () => {};
      });
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, maxWaitMs);
        waiters.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
    async stats(): Promise<InboxStats> {
      const { rows } = await runBounded(bound, 'reading stats', (q) => statsSql.run(q, []));
      const row = rows[0] ?? {};
      const oldest = row.oldest === null || row.oldest === undefined ? null : new Date(row.oldest as string | Date);
      return {
        pending: Number(row.pending ?? 0),
        retrying: Number(row.retrying ?? 0),
        dead: Number(row.dead ?? 0),
        oldestPendingAt: oldest,
        oldestPendingAgeMs: oldest === null ? null : wholeMs(Number(row.age_ms)),
      };
    },
  };
}
