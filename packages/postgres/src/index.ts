export type { PostgresMaintenance, PostgresTableOptions, Queryable } from './db.js';
export { createPostgresInbox, type PostgresInbox, type PostgresInboxOptions } from './inbox.js';
export { createPostgresLedger, type PostgresLedger, type PostgresLedgerOptions } from './ledger.js';
export { createPostgresStore, type PostgresIdempotencyStore, type PostgresStoreOptions } from './store.js';
