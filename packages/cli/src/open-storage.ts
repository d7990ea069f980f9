import type { Storage, StorageOptions } from './storage.js';
import { openPostgres } from './storage-postgres.js';
import { openRedis } from './storage-redis.js';
import type { Target } from './target.js';

/** Connects to `target` with the engine its URL names. */
export function openStorage(target: Target, options: StorageOptions): Promise<Storage> {
  return target.engine === 'postgres' ? openPostgres(target, options) : openRedis(target, options);
}
