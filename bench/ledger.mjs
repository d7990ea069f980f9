// Ledger benchmarks on the local PostgreSQL (VERIKIT_TEST_DATABASE_URL, else 127.0.0.1:5432/test;
// PGlite when no server answers there), against the fake service in a process of its own:
// (a) two reconcilers over 10,000 tracked pending verifications with a shared budget of 600 reads
// a minute: the read rate the fake measured, the most reads it saw in any 60 s, and the CPU this
// process spent per check; (b) how fast a worker drains events through the ledger (each one a read
// of the fake and a recorded observation) beside a plain inbox worker draining no-op events and one
// whose onEvent makes the same read, all at the same time in one process.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createClient, createInboxWorker, createReconciler } from '@verikit/core';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import pg from 'pg';
import { fmt, rateWindows, report, reportDrain, reportMedian } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MINUTE = 60_000;
/** Due a second after tracking, then the default steps: every row is due when the reconcilers start, and none twice in the run. */
const SCHEDULE = { stepsMs: [1_000, 5 * MINUTE, 15 * MINUTE, 60 * MINUTE, 6 * 60 * MINUTE] };
/**
 * The reconcilers' lock per row: a reconciler stopped while it waits for its read's slot leaves the
 * row it claimed locked until this runs out, so the drain starts only after it has.
 */
const RECONCILER_LOCK_MS = 5_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const noop = () => {};

/**
 * The database: a pool per caller on the server, or one PGlite shared by all when no server
 * answers (then its work is this process's CPU too, and every query waits its turn).
 */
async function openDatabase() {
  const probe = new pg.Client({ connectionString: URL, connectionTimeoutMillis: 2_000 });
  try {
    await probe.connect();
    await probe.end();
    const pools = [];
    return {
      server: true,
      name: `PostgreSQL at ${new globalThis.URL(URL).host}`,
      pool(max) {
        const pool = new pg.Pool({ connectionString: URL, max });
        pools.push(pool);
        return pool;
      },
      end: () => Promise.all(pools.map((pool) => pool.end())),
    };
  } catch {
    await probe.end().catch(noop);
    // PGlite is @verikit/postgres's own dev dependency: found from there, so the bench adds none.
    const require = createRequire(new globalThis.URL('../packages/postgres/package.json', import.meta.url));
    const { PGlite } = await import(require.resolve('@electric-sql/pglite'));
    const db = new PGlite();
    return { server: false, name: `PGlite (no server at ${new globalThis.URL(URL).host})`, pool: () => db, end: () => db.close() };
  }
}

/** The fake service in a child process, and what it says. */
async function startFake() {
  const child = fork(new globalThis.URL('./ledger-fake.mjs', import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ clientOptions }] = await once(child, 'message');
  return {
    clientOptions,
    async reads() {
      child.send({ type: 'reads' });
      const [answer] = await once(child, 'message');
      return answer;
    },
    async close() {
      child.send({ type: 'close' });
      await once(child, 'exit');
    },
  };
}

/** Creates the verifications (half KYB cases, half KYC sessions) through a client with the ledger, which tracks each before its create call. */
async function createVerifications(client, count, concurrency) {
  const keys = Array.from({ length: count }, (_, i) =>
    i % 2 === 0 ? { kind: 'kyb', refId: `biz-${i}` } : { kind: 'kyc', refId: `user-${i}` },
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) {
        const { kind, refId } = keys[next++];
        if (kind === 'kyb') await client.kyb.createCase({ refId });
        else await client.kyc.createSession({ refId });
      }
    }),
  );
  return keys;
}

/**
 * (a): `instances` reconcilers in this process, each with a pool, ledger and client of its own (as
 * on separate instances, but one process's CPU), for `seconds`. The rate is taken at the fake, from
 * `settleSeconds` after the first read to the stop, so the start does not count.
 */
async function reconcile({ db, fake, schema, instances, readsPerMinute, seconds, settleSeconds }) {
  const failures = [];
  const parts = Array.from({ length: instances }, () => {
    const ledger = createPostgresLedger({ db: db.pool(4), schema });
    const client = createClient(fake.clientOptions);
    const reconciler = createReconciler({
      ledger,
      client,
      onChange: noop,
      readsPerMinute,
      schedule: SCHEDULE,
      lockMs: RECONCILER_LOCK_MS,
      logger: false,
      onError: (error) => failures.push(error),
    });
    return { client, reconciler };
  });
  const cpuBefore = process.cpuUsage();
  for (const { reconciler } of parts) reconciler.start();
  await sleep(seconds * 1000);
  const stoppedAt = Date.now();
  await Promise.all(parts.map(({ reconciler }) => reconciler.stop()));
  const cpu = process.cpuUsage(cpuBefore);
  const checks = parts.reduce((sum, { reconciler }) => sum + reconciler.stats().checks, 0);
  await Promise.all(parts.map(({ client }) => client.close()));
  const { reads, maxIn60s } = await fake.reads();
  const from = reads[0].at + settleSeconds * 1000;
  const steady = reads.filter((r) => r.at >= from && r.at < stoppedAt).length;
  return {
    stoppedAt,
    checks,
    failures,
    refused: reads.filter((r) => r.status !== 200).length,
    ratePerMinute: (steady * MINUTE) / (stoppedAt - from),
    steadySeconds: (stoppedAt - from) / 1000,
    maxIn60s,
    cpuMsPerCheck: (cpu.user + cpu.system) / 1000 / checks,
  };
}

/** Inserts `copies` inbox events per key, each naming its verification the way the service's events do. */
async function fillLedgerInbox(db, schema, keys, copies = 1) {
  const events = Array.from({ length: copies }, () => keys).flat();
  const ids = events.map((_, i) => `msg_${i}`);
  const payloads = events.map(({ kind, refId }) =>
    JSON.stringify({ type: kind === 'kyb' ? 'kyb.case.status_changed' : 'kyc.session.status_changed', data: { refId } }),
  );
  await db.query(
    `INSERT INTO ${schema}.verikit_inbox (id, payload, svix_timestamp) SELECT id, payload, 1 FROM unnest($1::text[], $2::text[]) AS t(id, payload)`,
    [ids, payloads],
  );
}

/**
 * The inbox, counting the events it marks done: both sides are counted alike, in this process
 * (a count query would wait its turn on PGlite's one connection, behind the drains it measures).
 */
function counted(inbox) {
  const wrapped = Object.create(inbox);
  wrapped.done = 0;
  wrapped.complete = async (...args) => {
    const outcome = await inbox.complete(...args);
    if (outcome === 'ok') wrapped.done++;
    return outcome;
  };
  return wrapped;
}

/** Reads the verification an event names, as an `onEvent` without the ledger would to react to it. */
const readResult = (client) => async (ctx) => {
  const { kind, refId } = ctx.subject;
  await (kind === 'kyb' ? client.kyb.getCase(refId) : client.kyc.getResult(refId));
};

const READ_COPIES = 5;

/**
 * (b): three workers drain at the same moment, in this process, from inboxes filled beforehand (the
 * redis benchmark's reason: on these VMs a core's speed drifts from second to second, so drains
 * taken one after the other compare different machines): the ledger worker, the plain inbox worker
 * on no-op events, and a plain inbox worker whose `onEvent` makes the read the ledger makes (the
 * least any reaction that fetches the result costs). Each window's figures are the events each
 * finished in it. The ledger worker's budget (`readsPerMinute`) is far above what it reaches, so
 * the budget is not what limits it.
 */
async function drainTogether({ db, fake, schema, keys, plainEvents, concurrency, readsPerMinute, warmupSeconds, windowSeconds, windows }) {
  const plainSchema = `${schema}_plain`;
  const plainPool = db.pool(concurrency + 4);
  const plainInbox = counted(createPostgresInbox({ db: plainPool, schema: plainSchema, pruneIntervalMs: 0 }));
  await plainInbox.migrate();
  await plainPool.query(
    `INSERT INTO ${plainSchema}.verikit_inbox (id, payload, svix_timestamp) SELECT 'msg_' || i, '{"type":"noop"}', 1 FROM generate_series(1, $1) i`,
    [plainEvents],
  );
  const readSchema = `${schema}_read`;
  const readPool = db.pool(concurrency + 4);
  const readInbox = counted(createPostgresInbox({ db: readPool, schema: readSchema, pruneIntervalMs: 0 }));
  await readInbox.migrate();
  // An event per refId READ_COPIES times over: the plain worker's read drains faster than the ledger's one per refId.
  await fillLedgerInbox(readPool, readSchema, keys, READ_COPIES);
  const ledgerPool = db.pool(concurrency + 4);
  const ledgerInbox = counted(createPostgresInbox({ db: ledgerPool, schema, pruneIntervalMs: 0 }));
  await ledgerInbox.migrate();
  await fillLedgerInbox(ledgerPool, schema, keys);
  const client = createClient(fake.clientOptions);
  const readClient = createClient(fake.clientOptions);
  let failed = 0;
  const plainWorker = createInboxWorker({ inbox: plainInbox, concurrency, pollIntervalMs: 1_000, onEvent: noop });
  const readWorker = createInboxWorker({ inbox: readInbox, concurrency, pollIntervalMs: 1_000, onEvent: readResult(readClient) });
  const ledgerWorker = createInboxWorker({
    inbox: ledgerInbox,
    ledger: createPostgresLedger({ db: ledgerPool, schema }),
    client,
    readsPerMinute,
    schedule: SCHEDULE,
    concurrency,
    pollIntervalMs: 1_000,
    logger: false,
    onChange: noop,
    onError: (_error, { stage }) => {
      if (stage === 'event') failed++;
    },
  });
  const workers = [plainWorker, readWorker, ledgerWorker];
  for (const worker of workers) worker.start();
  const rounds = await rateWindows(
    { ledger: () => ledgerInbox.done, plain: () => plainInbox.done, read: () => readInbox.done },
    { warmupSeconds, windowSeconds, windows },
  );
  // Failures after this are the stop's own: observations still running are aborted by it.
  const failedInWindows = failed;
  const dry = [
    ['ledger', ledgerInbox.done >= keys.length],
    ['same read', readInbox.done >= keys.length * READ_COPIES],
    ['no-op', plainInbox.done >= plainEvents],
  ].filter(([, ranDry]) => ranDry);
  await Promise.all(workers.map((worker) => worker.stop()));
  await Promise.all([plainInbox.close(), readInbox.close(), ledgerInbox.close(), client.close(), readClient.close()]);
  await plainPool.query(`DROP SCHEMA ${plainSchema} CASCADE`);
  await readPool.query(`DROP SCHEMA ${readSchema} CASCADE`);
  if (dry.length > 0)
    throw new Error(`the ${dry.map(([name]) => name).join(' and ')} inbox ran dry during the measurement: raise its event count`);
  if (failedInWindows > 0) throw new Error(`${failedInWindows} ledger observations failed during the drain`);
  return rounds;
}

/** Runs the ledger benchmarks and prints their figures. */
export async function benchLedger({
  verifications = 10_000,
  instances = 2,
  readsPerMinute = 600,
  seconds = 75,
  settleSeconds = 10,
  concurrency = 8,
  plainEvents = 400_000,
  drainReadsPerMinute = 600_000,
  warmupSeconds = 2,
  windowSeconds = 2,
  windows = 5,
} = {}) {
  const db = await openDatabase();
  const fake = await startFake();
  const schema = `verikit_bench_ledger_${Date.now().toString(36)}`;
  const setupPool = db.pool(concurrency + 4);
  try {
    const ledger = createPostgresLedger({ db: setupPool, schema });
    await ledger.migrate();
    const creating = createClient({ ...fake.clientOptions, ledger, ledgerSchedule: SCHEDULE });
    const created = performance.now();
    const keys = await createVerifications(creating, verifications, 16);
    await creating.close();
    const createdSeconds = (performance.now() - created) / 1000;
    console.log(
      `ledger (${db.name}, fake service in its own process): ${fmt(verifications)} pending verifications created and tracked in ${createdSeconds.toFixed(1)} s`,
    );
    console.log(
      `ledger: ${instances} reconcilers (one process, ${db.server ? 'a pool, ledger' : 'one PGlite; a ledger'} and client each), budget ${fmt(readsPerMinute)} reads/min shared, ${seconds} s:`,
    );
    const run = await reconcile({ db, fake, schema, instances, readsPerMinute, seconds, settleSeconds });
    report({
      name: 'ledger/reconcile/read-rate',
      label: `read rate at the fake, ${run.ratePerMinute.toFixed(1)} reads/min over the ${run.steadySeconds.toFixed(0)} s after the first ${settleSeconds}, off the budget by`,
      value: (run.ratePerMinute / readsPerMinute - 1) * 100,
      unit: '%',
      bar: { min: -2, max: 2 },
    });
    report({
      name: 'ledger/reconcile/most-in-60s',
      label: 'most reads in any 60 s',
      value: run.maxIn60s,
      unit: 'reads',
      bar: { max: readsPerMinute },
    });
    report({
      name: 'ledger/reconcile/cpu-per-check',
      label: `CPU per check (this process's user + system time / ${fmt(run.checks)} checks; the fake's not included, ${db.server ? "nor the server's" : "PGlite's is"})`,
      value: run.cpuMsPerCheck,
      unit: 'ms',
    });
    if (run.refused > 0 || run.failures.length > 0)
      console.log(
        `  ${run.refused} reads answered other than 200, ${run.failures.length} failed checks (first: ${run.failures[0]?.code ?? run.failures[0]})`,
      );
    if (!db.server) {
      // One in-process connection: two drains at once would take turns on it, and its queue of
      // promises starves the timers the windows are measured with.
      console.log(`ledger: worker drain skipped: it needs the PostgreSQL server at ${new globalThis.URL(URL).host}`);
      return { reconcile: run };
    }
    console.log(
      `ledger: worker drain, concurrency ${concurrency}, ledger mode (an event per refId, ${fmt(keys.length)} refIds, a read of the fake each, no-op onChange, budget ${fmt(drainReadsPerMinute)} reads/min so the budget is not the limit) vs the plain inbox (no-op onEvent, and an onEvent making the same read), all three at the same time in one process, ${warmupSeconds} s warm-up, median of ${windows} windows of ${windowSeconds} s:`,
    );
    await sleep(run.stoppedAt + RECONCILER_LOCK_MS - Date.now());
    const rounds = await drainTogether({
      db,
      fake,
      schema,
      keys,
      plainEvents,
      concurrency,
      readsPerMinute: drainReadsPerMinute,
      warmupSeconds,
      windowSeconds,
      windows,
    });
    const ratio = reportDrain(
      'ledger/drain',
      [
        { key: 'ledger', label: 'ledger worker', rates: rounds.map((r) => r.ledger) },
        { key: 'plain', label: 'plain inbox worker, no-op', rates: rounds.map((r) => r.plain) },
        { key: 'plain-read', label: 'plain inbox worker, same read', rates: rounds.map((r) => r.read) },
      ],
      { ratioLabel: 'ratio to the no-op plain worker (median of per-window ratios)', bar: { min: 0.8 } },
    );
    const readRatio = reportMedian({
      name: 'ledger/drain/ratio-to-read',
      label: "ratio to the plain worker's read (what the ledger costs beyond the read it must make)",
      list: rounds.map((r) => r.ledger / r.read),
      unit: 'x',
    }).value;
    const floor = reportMedian({
      name: 'ledger/drain/read-floor',
      label: 'the read alone, plain to no-op (the most the first ratio can be on this machine)',
      list: rounds.map((r) => r.read / r.plain),
      unit: 'x',
    }).value;
    return { reconcile: run, ratio, readRatio, floor };
  } finally {
    await setupPool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(noop);
    await fake.close();
    await db.end();
  }
}
