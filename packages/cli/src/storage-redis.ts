import type { RedisInbox, RedisLedger } from '@verikit/redis';
import { CliError } from './errors.js';
import { CONNECT_TIMEOUT_MS, describeEngine, loadPeer, type Storage, type StorageOptions } from './storage.js';
import type { Target } from './target.js';

/** verikit on Redis through the app's `@verikit/redis`, on a connection of the CLI's own. */
export async function openRedis(target: Target, options: StorageOptions): Promise<Storage> {
  const [{ Redis }, engine] = await Promise.all([
    loadPeer('redis', () => import('ioredis')),
    loadPeer('redis', () => import('@verikit/redis')),
  ]);
  const queue = options.queue ?? 'verikit-inbox';
  const prefix = options.prefix ?? '{verikit}';
  const where = target.where;
  // No reconnection: a CLI reports a lost server at once rather than wait for it.
  const redis = new Redis(target.url, {
    lazyConnect: true,
    connectionName: 'verikit-cli',
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  // Failures reach the caller through the commands; an unheard 'error' event would end the process.
  let lastError: unknown;
  redis.on('error', (error) => {
    lastError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    // Already ended without reconnection; disconnect() on an ended client would hold the process for its 2 s disconnectTimeout.
    if (redis.status !== 'end') redis.disconnect();
    // Without reconnection, connect() rejects with "Connection is closed."; the event before it says why (ECONNREFUSED).
    throw lastError ?? error;
  }
  let inbox: RedisInbox | undefined;
  let ledger: RedisLedger | undefined;
  const quiet = { persistence: 'ignore', logger: false } as const;

  return {
    ...describeEngine('redis', where),
    async inbox() {
      if (inbox === undefined) {
        // BullMQ writes the queue's meta key when a Queue is made, so look before making one: a wrong
        // --queue or --prefix must not leave a queue of that name behind.
        if ((await redis.exists(`${prefix}:${queue}:meta`)) === 0)
          throw new CliError(
            'notSetUp',
            `${where} has no inbox queue ${JSON.stringify(queue)} under the prefix ${JSON.stringify(prefix)}: the app has not run against this Redis, or names them otherwise (pass --queue and --prefix)`,
          );
        // No upkeep here: pruning and payload retention run in the app, with the app's retention settings.
        inbox = engine.createRedisInbox({ redis, queueName: queue, prefix, pruneIntervalMs: 0, encryption: options.encryption, ...quiet });
      }
      return inbox;
    },
    async ledger() {
      ledger ??= engine.createRedisLedger({ redis, ...(options.ledgerPrefix !== undefined && { prefix: options.ledgerPrefix }), ...quiet });
      return ledger;
    },
    async close() {
      const own = inbox;
      inbox = ledger = undefined;
      await own?.close();
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else if (redis.status !== 'end') redis.disconnect();
    },
  };
}
