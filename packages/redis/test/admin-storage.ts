import type { AdminStorage } from '../../../test-support/inbox-admin.js';
import { rawScan, removeKeys } from '../../../test-support/redis-raw-scan.js';
import { createRedisInbox, createRedisLedger, type RedisClient, type RedisInbox, type RedisInboxOptions } from '../src/index.js';
import { jobIdFor } from '../src/job-id.js';
import { defineScript } from '../src/scripts.js';

const run = `${process.pid}-${Date.now().toString(36)}`;
let storages = 0;

/**
 * KEYS: the job's hash, then the sorted sets scored by its times (completed, failed, verikit's body
 * and dead-letter indexes). ARGV: job id, ms. Moves every time kept about the job back by ms.
 */
const AGE = `local ms = tonumber(ARGV[2])
for _, field in ipairs({'timestamp', 'processedOn', 'finishedOn'}) do
  local at = redis.call('HGET', KEYS[1], field)
  if at then redis.call('HSET', KEYS[1], field, tonumber(at) - ms) end
end
for i = 2, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if score then redis.call('ZADD', KEYS[i], tonumber(score) - ms, ARGV[1]) end
end
return 1`;

/** Storages for the engine-neutral InboxAdmin cases on `redis()`: each a queue (and a ledger) under a hash tag of its own. */
export function redisAdminStorages(redis: () => RedisClient) {
  const opened: RedisInbox[] = [];
  const prefixes: string[] = [];

  async function fresh(): Promise<AdminStorage> {
    const tag = `{verikit-admin-${run}-${++storages}}`;
    const ledgerPrefix = `verikit-admin-ledger:${run}:${storages}:${tag}:`;
    prefixes.push(tag, ledgerPrefix);
    const client = redis();
    const age = defineScript(client, AGE, 5);
    const inboxOn = (options: Partial<RedisInboxOptions> = {}): RedisInbox => {
      // Upkeep runs when the test says (prune()), not on a timer beside it.
      const inbox = createRedisInbox({ redis: client, prefix: tag, persistence: 'ignore', logger: false, pruneIntervalMs: 0, ...options });
      opened.push(inbox);
      return inbox;
    };
    const queue = inboxOn().queue;
    return {
      acceptTellsRepeats: false,
      inbox: async (options) => inboxOn(options),
      async age(id, ms) {
        const jobId = jobIdFor(id);
        const sets = ['completed', 'failed', 'verikit:bodies', 'verikit:dead'].map((name) => queue.toKey(name));
        await age([queue.toKey(jobId), ...sets], [jobId, String(ms)]);
      },
      upkeep: async (inbox) => {
        await (inbox as RedisInbox).prune();
      },
      dump: async () => (await rawScan(client, [tag, ledgerPrefix])).text,
      ledger: async () => createRedisLedger({ redis: client, prefix: ledgerPrefix, persistence: 'ignore', logger: false }),
    };
  }

  return {
    fresh,
    /** Closes every inbox made, and removes every key written (on a Cluster, each storage's keys are on the master of its tag). */
    async cleanup(): Promise<void> {
      for (const inbox of opened.splice(0)) await inbox.close();
      await removeKeys(redis(), prefixes);
    },
  };
}
