export type { RedisBaseOptions, RedisClient } from './options.js';
export { type PersistencePolicy, type PersistenceReport, RedisNotDurableError, readPersistence } from './persistence.js';
export { createRedisStore, type RedisIdempotencyStore, type RedisStoreOptions } from './store.js';
