// Inbox benchmarks on the local PostgreSQL (VERIKIT_TEST_DATABASE_URL, else 127.0.0.1:5432/test):
// (a) the webhook route in inbox mode against the same framework's bare route that verifies by hand
// and inserts the delivery with INSERT ... ON CONFLICT DO NOTHING on the same pool; (b) how fast a worker drains no-op events, beside graphile-worker draining as many no-op jobs on
// the same server with the same concurrency; (c) the time from the webhook route's 204 to onEvent's
// start on another instance's worker (woken by NOTIFY), at a steady 500 deliveries a second.
import { createInboxWorker, createWebhookHandler } from '@verikit/core';
import { createPostgresInbox } from '@verikit/postgres';
import { signWebhook } from '@verikit/testing';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import { benchAdapters, printAcceptSummary } from './adapters.mjs';
import { fmt, report, reportDrain } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `count` calls of the returned tick have happened; `at` holds when it did. */
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

async function drainVerikit(events, concurrency) {
  const schema = `verikit_bench_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: URL, max: concurrency + 4 });
  const inbox = createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0 });
  await inbox.migrate();
  await pool.query(
    `INSERT INTO ${schema}.verikit_inbox (id, payload, svix_timestamp) SELECT 'msg_' || i, '{"type":"noop"}', 1 FROM generate_series(1, $1) i`,
    [events],
  );
  const finished = counter(events);
  const worker = createInboxWorker({ inbox, concurrency, pollIntervalMs: 1_000, onEvent: () => finished.tick() });
  const started = performance.now();
  worker.start();
  const ended = await finished.all;
  await worker.stop();
  await inbox.close();
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
  return events / ((ended - started) / 1000);
}

async function drainGraphile(events, concurrency) {
  const schema = `graphile_bench_${Date.now().toString(36)}`;
  const utils = await makeWorkerUtils({ connectionString: URL, schema, logger: new Logger(() => () => {}) });
  await utils.migrate();
  const pool = new pg.Pool({ connectionString: URL, max: 2 });
  await pool.query(`SELECT ${schema}.add_job('noop', '{}'::json) FROM generate_series(1, $1)`, [events]);
  const finished = counter(events);
  const started = performance.now();
  const runner = await run({
    connectionString: URL,
    schema,
    concurrency,
    maxPoolSize: concurrency + 4,
    pollInterval: 1_000,
    noHandleSignals: true,
    logger: new Logger(() => () => {}),
    taskList: { noop: async () => finished.tick() },
  });
  const ended = await finished.all;
  await runner.stop();
  await utils.release();
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
  return events / ((ended - started) / 1000);
}

async function latencyAt(ratePerSecond, seconds) {
  const schema = `verikit_bench_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: URL, max: 16 });
  const inbox = createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0 });
  await inbox.migrate();
  const handle = createWebhookHandler({ secret: SECRET, inbox });
  const answeredAt = new Map();
  const startedAt = new Map();
  // The worker drains through an inbox of its own on the same tables, as on another instance: the
  // route's in-process wake-up cannot reach it, so this measures the NOTIFY path.
  const elsewhere = createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0 });
  const worker = createInboxWorker({
    inbox: elsewhere,
    concurrency: 8,
    pollIntervalMs: 1_000,
    onEvent: (ctx) => startedAt.set(ctx.id, performance.now()),
  });
  worker.start();
  const total = ratePerSecond * seconds;
  const sends = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    // A steady schedule: delivery i leaves at i / rate seconds, however long the earlier ones took.
    const wait = t0 + (i * 1000) / ratePerSecond - performance.now();
    if (wait > 0) await sleep(wait);
    const signed = signWebhook({
      secret: SECRET,
      payload: { type: 'kyb.case.status_changed', data: { refId: `b${i}` } },
      id: `msg_lat_${i}`,
    });
    sends.push(
      handle({ method: 'POST', headers: signed.headers, body: signed.body }).then((answer) => {
        if (answer.status === 204) answeredAt.set(signed.id, performance.now());
      }),
    );
  }
  await Promise.all(sends);
  while (startedAt.size < total) await sleep(20);
  await worker.stop();
  await elsewhere.close();
  await inbox.close();
  await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await pool.end();
  // onEvent can start before the sender has its 204 (the commit's notification races the answer): 0 then.
  const delays = [...answeredAt].map(([id, at]) => Math.max(0, startedAt.get(id) - at)).sort((a, b) => a - b);
  const pct = (p) => delays[Math.min(delays.length - 1, Math.floor((p / 100) * delays.length))];
  return { p50: pct(50), p99: pct(99), max: delays.at(-1), count: delays.length, seconds };
}

/** (a): the adapter benchmark's method (both routes loaded at once, swapping processes) on an inbox schema of its own. */
async function acceptRoute(options) {
  const schema = `verikit_bench_accept_${Date.now().toString(36)}`;
  try {
    return await benchAdapters({ handlerKinds: ['inbox'], serverArgs: [URL, schema], ...options });
  } finally {
    const pool = new pg.Pool({ connectionString: URL, max: 1 });
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
}

/** Runs the inbox benchmarks and prints their figures. */
export async function benchInbox({ events = 5_000, concurrency = 8, rounds = 5, rate = 500, seconds = 10, accept = {} } = {}) {
  const accepted = await acceptRoute(accept);
  printAcceptSummary('postgres', accepted);
  console.log(
    `inbox (PostgreSQL at ${new globalThis.URL(URL).host}): worker drain of ${fmt(events)} no-op events, concurrency ${concurrency}, vs graphile-worker, median of ${rounds} alternating rounds:`,
  );
  const ours = [];
  const theirs = [];
  for (let round = 0; round < rounds; round++) {
    ours.push(await drainVerikit(events, concurrency));
    theirs.push(await drainGraphile(events, concurrency));
  }
  const ratio = reportDrain(
    'inbox/postgres/drain',
    [
      { key: 'verikit', label: 'verikit worker', rates: ours },
      { key: 'graphile-worker', label: 'graphile-worker', rates: theirs },
    ],
    { ratioLabel: 'ratio (median of per-round ratios)', bar: { min: 1 } },
  );
  const latency = await latencyAt(rate, seconds);
  console.log(
    `inbox: 204 -> onEvent start on another instance (NOTIFY) at a steady ${rate} deliveries/s for ${latency.seconds} s (${fmt(latency.count)} deliveries):`,
  );
  report({ name: 'inbox/postgres/notify/p50', label: 'p50', value: latency.p50, unit: 'ms' });
  report({ name: 'inbox/postgres/notify/p99', label: 'p99', value: latency.p99, unit: 'ms', bar: { max: 100 } });
  report({ name: 'inbox/postgres/notify/max', label: 'max', value: latency.max, unit: 'ms' });
  return { ratio, latency };
}
