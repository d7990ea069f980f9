export type { Queryable } from './db.js';
export { createPostgresStore, type PostgresIdempotencyStore, type PostgresStoreOptions } from './store.js';
