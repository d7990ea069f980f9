export { RedisCrossSlotError } from './cluster.js';
export { createRedisInbox, type RedisInbox, type RedisInboxOptions } from './inbox.js';
export type { RedisRetentionOptions } from './inbox-admin.js';
export { createRedisLedger, type RedisLedger, type RedisLedgerOptions } from './ledger.js';
export { type RedisBaseOptions, type RedisClient, RedisTimeoutError } from './options.js';
export { type PersistencePolicy, type PersistenceReport, RedisNotDurableError, readPersistence } from './persistence.js';
export { createRedisStore, type RedisIdempotencyStore, type RedisStoreOptions } from './store.js';
export type { RedisTransaction } from './transaction.js';
