import type { Queryable } from './db.js';

/**
 * Creates verikit's schema and tables (receipts for the store, the inbox, the ledger) when missing. One statement (a DO block runs in one
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
    -- The body (sealed when encryption is on); NULL once payload retention, a purge or an erasure removed it.
    payload text,
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
  -- Room on each page for a leased row's new version: the lease's UPDATE changes no indexed column,
  -- so with room it stays on the page (HOT) and writes no index entry (bench/inbox.mjs: drain +10%).
  ) WITH (fillfactor = 80);
  -- Tables made before payload retention kept every body: the check makes the upgrade (a catalog
  -- change under a short exclusive lock) run once, not take that lock at every start.
  IF EXISTS (
    SELECT 1 FROM pg_attribute WHERE attrelid = ${literal(`${schema}.verikit_inbox`)}::regclass AND attname = 'payload' AND attnotnull
  ) THEN
    ALTER TABLE ${schema}.verikit_inbox ALTER COLUMN payload DROP NOT NULL;
  END IF;
  -- Tables made before the fillfactor get it once (a short SHARE UPDATE EXCLUSIVE lock; pages filled
  -- from then on leave the room), never over one an operator chose.
  IF NOT EXISTS (
    SELECT 1 FROM pg_class, unnest(reloptions) AS option
    WHERE pg_class.oid = ${literal(`${schema}.verikit_inbox`)}::regclass AND option LIKE 'fillfactor=%'
  ) THEN
    ALTER TABLE ${schema}.verikit_inbox SET (fillfactor = 80);
  END IF;
  CREATE INDEX IF NOT EXISTS verikit_inbox_due ON ${schema}.verikit_inbox (next_run_at) WHERE next_run_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS verikit_inbox_finished ON ${schema}.verikit_inbox (finished_at) WHERE state = 'done';
  -- Done rows whose body payload retention has yet to remove: not touched by an accept, and the
  -- rows whose body is gone (nearly all of the dedupe retention) are not in it.
  CREATE INDEX IF NOT EXISTS verikit_inbox_kept ON ${schema}.verikit_inbox (finished_at) WHERE state = 'done' AND payload IS NOT NULL;
  -- Dead letters are read (listed oldest first, counted by stats) without a scan of the done rows kept for dedupe.
  CREATE INDEX IF NOT EXISTS verikit_inbox_dead ON ${schema}.verikit_inbox (received_at) WHERE state = 'dead';
  CREATE TABLE IF NOT EXISTS ${schema}.verikit_ledger (
    kind text NOT NULL CHECK (kind IN ('kyb', 'kyc')),
    ref_id text NOT NULL,
    status text,
    final boolean NOT NULL DEFAULT false,
    fingerprint text,
    version integer NOT NULL DEFAULT 0,
    observed_at timestamptz,
    source text CHECK (source IN ('webhook', 'reconcile')),
    tracked_at timestamptz NOT NULL DEFAULT now(),
    next_check_at timestamptz,
    failures integer NOT NULL DEFAULT 0,
    lock_token text,
    lock_until timestamptz,
    PRIMARY KEY (kind, ref_id)
  );
  -- Rows never due again (final, past their reopen window) stay out of the reconciler's index.
  CREATE INDEX IF NOT EXISTS verikit_ledger_due ON ${schema}.verikit_ledger (next_check_at) WHERE next_check_at IS NOT NULL;
  -- One row: the read budget every instance shares, and when a webhook last led to an observation.
  CREATE TABLE IF NOT EXISTS ${schema}.verikit_ledger_state (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    next_read_at timestamptz NOT NULL,
    last_webhook_at timestamptz
  );
  INSERT INTO ${schema}.verikit_ledger_state (id, next_read_at) VALUES (true, '-infinity') ON CONFLICT (id) DO NOTHING;
END
$migrate$`);
}

/** A quoted identifier (or a qualified name of them) as an SQL string literal (it holds only identifier characters, dots and double quotes). */
function literal(quotedIdentifier: string): string {
  return `'${quotedIdentifier.replace(/'/g, "''")}'`;
}
