export type { PostgresMaintenance, PostgresTableOptions, Queryable } from './db.js';
export { createPostgresInbox, type PostgresInbox, type PostgresInboxOptions } from './inbox.js';
export { createPostgresStore, type PostgresIdempotencyStore, type PostgresStoreOptions } from './store.js';
