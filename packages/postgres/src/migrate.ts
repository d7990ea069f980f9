import type { Queryable } from './db.js';

/**
 * Creates verikit's schema and tables (receipts for the store, the inbox) when missing. One statement (a DO block runs in one
 * transaction) under a transaction-scoped advisory lock, so every instance may run it at start at
 * once: the others wait, then find everything there.
 */
export async function migrateSchema(db: Queryable, schema: string): Promise<void> {
  await db.query(`DO $migrate$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('verikit:migrate:' || ${literal(schema)}));
  CREATE SCHEMA IF NOT EXISTS ${schema};
  CREATE TABLE IF NOT EXISTS ${schema}.verikit_receipts (
    id text PRIMARY KEY,
    owner text NOT NULL,
    state text NOT NULL CHECK (state IN ('leased', 'done')),
    expires_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS verikit_receipts_expires_at ON ${schema}.verikit_receipts (expires_at);
  CREATE TABLE IF NOT EXISTS ${schema}.verikit_inbox (
    id text PRIMARY KEY,
    payload text NOT NULL,
    svix_timestamp bigint NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    next_run_at timestamptz DEFAULT now(),
    leased_until timestamptz,
    owner text,
    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
    last_error text,
    finished_at timestamptz,
    -- Only a pending event is due at a time; finished ones have none. The lease query filters on
    -- next_run_at alone, which the planner reads right even before the table has statistics.
    CONSTRAINT verikit_inbox_due_when_pending CHECK ((state = 'pending') = (next_run_at IS NOT NULL))
  );
  CREATE INDEX IF NOT EXISTS verikit_inbox_due ON ${schema}.verikit_inbox (next_run_at) WHERE next_run_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS verikit_inbox_finished ON ${schema}.verikit_inbox (finished_at) WHERE state = 'done';
END
$migrate$`);
}

/** A quoted identifier as an SQL string literal (it holds only identifier characters and its quotes). */
function literal(quotedIdentifier: string): string {
  return `'${quotedIdentifier.replace(/'/g, "''")}'`;
}
