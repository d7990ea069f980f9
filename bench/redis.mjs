// Inbox benchmarks on the local Redis (VERIKIT_TEST_REDIS_URL, else 127.0.0.1:6379): (a) the webhook
// route in inbox mode (createRedisInbox) against the same framework's bare route that verifies by hand
// and adds a BullMQ job with jobId = svix-id on the same client; (b) how fast createInboxWorker drains
// no-op events over the BullMQ inbox, beside a bare BullMQ Worker draining as many no-op jobs with
// the same concurrency on the same server.
import { createInboxWorker } from '@verikit/core';
import { createRedisInbox } from '@verikit/redis';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { benchAdapters } from './adapters.mjs';
import { fmt, median } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BODY = JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: 'biz-1' } });

/** Resolves once `count` ticks have happened, with the time of the last. */
function counter(count) {
  let done = 0;
  let resolve;
  const all = new Promise((r) => (resolve = r));
  return {
    all,
    tick() {
      if (++done === count) resolve(performance.now());
    },
  };
}

/** Adds `events` jobs shaped as the inbox adds them, in batches, and answers the queue's prefix. */
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

async function drainVerikit(events, concurrency) {
  const redis = new Redis(URL);
  const prefix = `{verikit-bench-${Date.now().toString(36)}}`;
  const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore' });
  await fill(redis, 'verikit-inbox', prefix, events, inbox.queue.defaultJobOptions);
  const finished = counter(events);
  const worker = createInboxWorker({ inbox, concurrency, pollIntervalMs: 1_000, onEvent: () => finished.tick() });
  const started = performance.now();
  worker.start();
  const ended = await finished.all;
  await worker.stop();
  await inbox.close();
  await cleanup(redis, prefix);
  redis.disconnect();
  return events / ((ended - started) / 1000);
}

async function drainBullmq(events, concurrency) {
  const redis = new Redis(URL, { maxRetriesPerRequest: null });
  const prefix = `{bullmq-bench-${Date.now().toString(36)}}`;
  await fill(redis, 'bare', prefix, events, { removeOnComplete: { age: 7 * 24 * 3600 } });
  const finished = counter(events);
  const started = performance.now();
  const worker = new Worker('bare', async () => finished.tick(), { connection: redis, prefix, concurrency });
  const ended = await finished.all;
  await worker.close();
  await cleanup(redis, prefix);
  redis.disconnect();
  return events / ((ended - started) / 1000);
}

/** Runs the Redis inbox benchmarks and prints their figures. */
export async function benchRedis({ events = 20_000, concurrency = 8, rounds = 5, accept = {} } = {}) {
  const namespace = `verikit-bench-accept-${Date.now().toString(36)}`;
  try {
    await benchAdapters({ handlerKinds: ['redis-inbox'], serverArgs: [URL, namespace], ...accept });
  } finally {
    const redis = new Redis(URL);
    await cleanup(redis, `{${namespace}`);
    redis.disconnect();
  }
  console.log(
    `inbox (Redis at ${new globalThis.URL(URL).host}): worker drain of ${fmt(events)} no-op events, concurrency ${concurrency}, createInboxWorker over createRedisInbox vs a bare BullMQ Worker, median of ${rounds} alternating rounds after one warm-up round of each:`,
  );
  // A round of each first, not counted: the first thousands of jobs run unoptimised code on both sides.
  await drainVerikit(events, concurrency);
  await drainBullmq(events, concurrency);
  const ours = [];
  const theirs = [];
  for (let round = 0; round < rounds; round++) {
    ours.push(await drainVerikit(events, concurrency));
    theirs.push(await drainBullmq(events, concurrency));
  }
  const ratio = median(ours.map((o, i) => o / theirs[i]));
  console.log(`  verikit worker      ${fmt(median(ours)).padStart(7)} events/s   [${ours.map(fmt).join(', ')}]`);
  console.log(`  BullMQ Worker       ${fmt(median(theirs)).padStart(7)} jobs/s     [${theirs.map(fmt).join(', ')}]`);
  console.log(`  ratio               ${ratio.toFixed(2)}  (median of per-round ratios; target >= 0.9)`);
  return { ratio };
}
