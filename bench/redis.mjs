// Inbox benchmarks on the local Redis (VERIKIT_TEST_REDIS_URL, else 127.0.0.1:6379): (a) the webhook
// route in inbox mode (createRedisInbox) against the same framework's bare route that verifies by hand
// and adds a BullMQ job with jobId = svix-id on the same client; (b) how fast createInboxWorker drains
// no-op events over the BullMQ inbox, beside a bare BullMQ Worker draining no-op jobs with the same
// concurrency on the same server at the same time.
import { createInboxWorker } from '@verikit/core';
import { createRedisInbox } from '@verikit/redis';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { benchAdapters, printAcceptSummary } from './adapters.mjs';
import { rateWindows, reportDrain } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BODY = JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: 'biz-1' } });

/** Adds `events` jobs shaped as the inbox adds them, in batches. */
async function fill(redis, queueName, prefix, events, options = {}) {
  const queue = new Queue(queueName, { connection: redis, prefix });
  for (let i = 0; i < events; i += 500) {
    const batch = Array.from({ length: Math.min(500, events - i) }, (_, k) => {
      const id = `msg_${i + k}`;
      return { name: 'event', data: { id, timestamp: 1, body: BODY }, opts: { jobId: id, ...options } };
    });
    await queue.addBulk(batch);
  }
  await queue.close();
}

async function cleanup(redis, prefix) {
  const keys = await redis.keys(`${prefix}*`);
  for (let i = 0; i < keys.length; i += 1_000) await redis.del(...keys.slice(i, i + 1_000));
}

/**
 * (b): both drain at the same moment, from queues of their own filled beforehand, in one process:
 * on these VMs a core's speed drifts by a third from second to second, so drains taken one after
 * the other compared different machines (the adapter benchmark's reason too). Each window's ratio
 * is the count of events each finished in it; the queues hold more than both can drain.
 */
async function drainTogether({ events, concurrency, warmupSeconds, windowSeconds, windows }) {
  const redis = new Redis(URL, { maxRetriesPerRequest: null });
  const stamp = Date.now().toString(36);
  const ours = { prefix: `{verikit-bench-${stamp}}`, done: 0 };
  const theirs = { prefix: `{bullmq-bench-${stamp}}`, done: 0 };
  const inbox = createRedisInbox({ redis, prefix: ours.prefix, persistence: 'ignore' });
  await fill(redis, 'verikit-inbox', ours.prefix, events, inbox.queue.defaultJobOptions);
  await fill(redis, 'bare', theirs.prefix, events, { removeOnComplete: { age: 7 * 24 * 3600 } });
  const worker = createInboxWorker({
    inbox,
    concurrency,
    pollIntervalMs: 1_000,
    onEvent: () => {
      ours.done++;
    },
  });
  worker.start();
  const bare = new Worker(
    'bare',
    async () => {
      theirs.done++;
    },
    { connection: redis, prefix: theirs.prefix, concurrency },
  );
  const rounds = await rateWindows({ ours: () => ours.done, theirs: () => theirs.done }, { warmupSeconds, windowSeconds, windows });
  if (ours.done >= events || theirs.done >= events) throw new Error('a queue ran dry during the measurement: raise events');
  await worker.stop();
  await bare.close();
  await inbox.close();
  await cleanup(redis, ours.prefix);
  await cleanup(redis, theirs.prefix);
  redis.disconnect();
  return rounds;
}

/** Runs the Redis inbox benchmarks and prints their figures. */
export async function benchRedis({
  events = 250_000,
  concurrency = 8,
  windows = 5,
  windowSeconds = 2,
  warmupSeconds = 2,
  accept = {},
} = {}) {
  const namespace = `verikit-bench-accept-${Date.now().toString(36)}`;
  try {
    const accepted = await benchAdapters({ handlerKinds: ['redis-inbox'], serverArgs: [URL, namespace], ...accept });
    printAcceptSummary('redis', accepted);
  } finally {
    const redis = new Redis(URL);
    await cleanup(redis, `{${namespace}`);
    redis.disconnect();
  }
  console.log(
    `inbox (Redis at ${new globalThis.URL(URL).host}): worker drain of no-op events, concurrency ${concurrency}, createInboxWorker over createRedisInbox and a bare BullMQ Worker draining at the same time in one process, ${warmupSeconds} s warm-up, median of ${windows} windows of ${windowSeconds} s:`,
  );
  const rounds = await drainTogether({ events, concurrency, warmupSeconds, windowSeconds, windows });
  const ratio = reportDrain(
    'inbox/redis/drain',
    [
      { key: 'verikit', label: 'verikit worker', rates: rounds.map((r) => r.ours) },
      { key: 'bullmq', label: 'BullMQ Worker', rates: rounds.map((r) => r.theirs) },
    ],
    { ratioLabel: 'ratio (median of per-window ratios)', bar: { min: 0.9 } },
  );
  return { ratio };
}
