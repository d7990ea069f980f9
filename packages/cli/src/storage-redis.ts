import type { RedisInbox, RedisLedger } from '@verikit/redis';
import { CliError } from './errors.js';
import { connectRedis } from './redis-client.js';
import { describeEngine, loadPeer, type Storage, type StorageOptions } from './storage.js';
import { redisModeOf, type Target } from './target.js';

/** verikit on Redis (one server, or a Cluster with `--cluster`) through the app's `@verikit/redis`, on a connection of the CLI's own. */
export async function openRedis(target: Target, options: StorageOptions): Promise<Storage> {
  const [ioredis, engine] = await Promise.all([
    loadPeer('redis', () => import('ioredis')),
    loadPeer('redis', () => import('@verikit/redis')),
  ]);
  const queue = options.queue ?? 'verikit-inbox';
  const prefix = options.prefix ?? '{verikit}';
  const where = target.where;
  const redis = await connectRedis(ioredis, target);
  let inbox: RedisInbox | undefined;
  let ledger: RedisLedger | undefined;
  const quiet = { persistence: 'ignore', logger: false } as const;

  return {
    ...describeEngine('redis', where, redisModeOf(target)),
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
      // The inbox's close() lets BullMQ's opening read end before the client quits (an unheard 'error' otherwise).
      await own?.close();
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else if (redis.status !== 'end') redis.disconnect();
    },
  };
}
