import type { Queryable } from './db.js';

/**
 * Creates verikit's schema and tables when missing. One statement (a DO block runs in one
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
END
$migrate$`);
}

/** A quoted identifier as an SQL string literal (it holds only identifier characters and its quotes). */
function literal(quotedIdentifier: string): string {
  return `'${quotedIdentifier.replace(/'/g, "''")}'`;
}
