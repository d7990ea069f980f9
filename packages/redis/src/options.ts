import { ConfigurationError, DEFAULT_RETENTION_MS, type Logger, resolveLogger, StorageTimeoutError, sharedTimeouts } from '@verikit/core';
import type { Cluster, Redis } from 'ioredis';
import { type PersistencePolicy, persistenceGuard } from './persistence.js';

/** A connected ioredis client: a single server (`Redis`) or a `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Options the store and the inbox share. */
export interface RedisBaseOptions {
  /** Your ioredis client. verikit never ends it; `close()` ends only the connections verikit opened itself. */
  redis: RedisClient;
  /** How long handled ids are kept (default 7 days, beyond Svix's ~27.6 h of retries): a repeat within it is recognised. */
  retentionMs?: number;
  /**
   * What to do when the server can lose what verikit wrote (`appendonly no`, an eviction policy other
   * than `noeviction`): `'warn'` (default) logs it once at the first use, `'require'` refuses to work
   * (every delivery answers 503 until the server is fixed), `'ignore'` says nothing. See the README.
   */
  persistence?: PersistencePolicy;
  /** Where warnings and failures are written (default: `console` for warnings and errors; `false`: nowhere). */
  logger?: Logger | false;
  /**
   * The longest the webhook route waits for Redis, in ms (default 5 000, well within Svix's 15 s):
   * past it, the delivery is answered 503 and retried by the sender, instead of hanging while
   * Redis is unreachable (ioredis and BullMQ otherwise wait for the reconnection).
   */
  timeoutMs?: number;
}

/** Redis did not answer the webhook route's call in time (it is down or unreachable); the delivery is answered 503. */
export class RedisTimeoutError extends StorageTimeoutError {
  override name = 'RedisTimeoutError';
  constructor(what: string, timeoutMs: number) {
    super(what, timeoutMs, 'Redis');
  }
}

/** Core's `sharedTimeouts`, rejecting with {@link RedisTimeoutError}: a call that answers after the deadline is let go. */
export const redisTimeouts = (timeoutMs: number): (<T>(call: Promise<T>, what: string) => Promise<T>) =>
  sharedTimeouts(timeoutMs, RedisTimeoutError);

/** The shared options, checked at creation so a wrong one fails at startup and not at the first delivery. */
export function resolveBaseOptions(options: RedisBaseOptions, factory: string) {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', `${factory} needs an options object`);
  const { redis } = options;
  if (redis === null || typeof redis !== 'object' || typeof (redis as { defineCommand?: unknown }).defineCommand !== 'function') {
    throw new ConfigurationError('redis', `${factory}: redis is required, an ioredis client (new Redis(url) or new Cluster(nodes))`);
  }
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  if (!Number.isInteger(retentionMs) || retentionMs < 1) {
    throw new ConfigurationError('retentionMs', 'retentionMs must be a positive whole number of ms');
  }
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new ConfigurationError('timeoutMs', 'timeoutMs must be a positive whole number of ms');
  const logger = resolveLogger(options.logger);
  const persistence = persistenceGuard(redis, options.persistence ?? 'warn', logger);
  return { redis, retentionMs, logger, persistence, timeoutMs };
}

/** A key prefix: any non-empty text; `what` names the option in the error. */
export function checkPrefix(prefix: string, what: string): string {
  if (typeof prefix !== 'string' || prefix === '') throw new ConfigurationError(what, `${what} must be a non-empty string`);
  return prefix;
}
