import type { ClaimOptions, ClaimResult, IdempotencyStore, Lease, LeaseOutcome } from '@verikit/core';
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
import { migrateSchema } from './migrate.js';
import { createPruner } from './pruner.js';

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions extends PostgresTableOptions {
  /** A `pg` Pool (one per process, shared with your app is fine), a pg Client, or a PGlite instance. */
  db: Queryable;
}

/** An {@link IdempotencyStore} on PostgreSQL, shared by every instance, with its own upkeep. */
export interface PostgresIdempotencyStore extends IdempotencyStore, PostgresMaintenance {}

/**
 * An idempotency store on PostgreSQL (or PGlite): one row per delivery id, every check and change
 * a single atomic statement, every expiry on the database server's own `now()`, never a client's
 * clock. Call `migrate()` once at startup.
 * @example
 * const store = createPostgresStore({ db: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await store.migrate();
 * app.use('/verikit', verikitRouter({ webhook: { secret, store, onEvent } }));
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresIdempotencyStore {
  const { db, schema, retentionMs, pruneIntervalMs, pruneBatchSize, report, timeoutMs } = resolveTableOptions(
    options,
    'createPostgresStore',
  );
  const bound: Bound = { db, timeoutMs };
  const table = `${schema}.verikit_receipts`;

  // Claimed when the upsert wrote our owner; otherwise the row as it stood before this statement.
  const claimSql = statement(`WITH taken AS (
  INSERT INTO ${table} AS r (id, owner, state, expires_at) VALUES ($1, $2, 'leased', ${msFromNow('$3')})
  ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, state = 'leased', expires_at = EXCLUDED.expires_at
    WHERE r.expires_at <= now()
  RETURNING owner
)
SELECT (SELECT owner FROM taken) AS taken, (SELECT state FROM ${table} WHERE id = $1) AS state`);
  const completeSql = statement(`INSERT INTO ${table} AS r (id, owner, state, expires_at) VALUES ($1, $2, 'done', ${msFromNow('$3')})
ON CONFLICT (id) DO UPDATE SET state = 'done', expires_at = EXCLUDED.expires_at WHERE r.owner = EXCLUDED.owner
RETURNING 1 AS ok`);
  const releaseSql = statement(`DELETE FROM ${table} WHERE id = $1 AND owner = $2 AND state = 'leased' RETURNING 1 AS ok`);
  const extendSql = statement(
    `UPDATE ${table} SET expires_at = ${msFromNow('$3')} WHERE id = $1 AND owner = $2 AND state = 'leased' RETURNING 1 AS ok`,
  );
  const pruneSql = `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE expires_at <= now() LIMIT $1)`;

  const pruner = createPruner({ bound, statements: [pruneSql], batchSize: pruneBatchSize, intervalMs: pruneIntervalMs, onError: report });

  const release = (lease: Lease): Promise<LeaseOutcome> => ownersCall(bound, 'a release', releaseSql, [lease.id, lease.owner]);

  return {
    async migrate() {
      await migrateSchema(db, schema);
    },
    prune: pruner.prune,
    close: pruner.stop,
    async claim(id: string, claim: ClaimOptions): Promise<ClaimResult> {
      pruner.start();
      const owner = crypto.randomUUID();
      const { rows } = await runBounded(
        bound,
        'a claim',
        (q) => claimSql.run(q, [id, owner, wholeMs(claim.leaseMs)]),
        // Claimed after the caller was told it failed (503): let the sender's retry claim it, not wait out the lease.
        (late) => {
          if (late.rows[0]?.taken === owner) release({ id, owner }).catch(report);
        },
      );
      const row = rows[0] ?? {};
      if (row.taken === owner) return { status: 'claimed', lease: { id, owner } };
      // No row before, and not ours: another instance inserted it within this very instant.
      return row.state === 'done' ? { status: 'done' } : { status: 'in-progress' };
    },
    complete: (lease: Lease): Promise<LeaseOutcome> =>
      ownersCall(bound, 'a completion', completeSql, [lease.id, lease.owner, wholeMs(retentionMs)]),
    release,
    extend: (lease: Lease, claim: ClaimOptions): Promise<LeaseOutcome> =>
      ownersCall(bound, 'an extension', extendSql, [lease.id, lease.owner, wholeMs(claim.leaseMs)]),
  };
}
