// Adapter benchmark: per framework, the verikit webhook route vs the same framework's bare route
// that verifies by hand (the baseline a user would write), compared by the server's CPU time per
// request, which a shared machine disturbs far less than throughput.
//
// Each round loads three processes at once, sharing one CPU core while autocannon drives them
// from another: two identical host apps, one serving verikit's route and the other the bare route
// (rounds come in pairs, one with verikit on each host, so a difference between the hosts
// cancels), and a minimal app of the same framework serving only the bare route. The minimal app
// is the check on the baseline: the host's bare route must cost within 20% of it, so a slow host
// cannot hide verikit's cost again (a host that loaded every framework and driver, and a warm-up
// too short for Hono on Node, once made both of its routes slow and their ratio look fine).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import { median, report } from './lib.mjs';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
const EVENT = Buffer.from(
  JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: 'biz-1', status: 'COMPLETED', note: 'x'.repeat(1500) } }),
);
const CONNECTIONS_PER_ROUTE = 16;
const ROUTES = { verikit: '/verikit/webhook', bare: '/bare/webhook' };
/** Fewer requests than this on any route and a round's CPU per request means nothing. */
const MIN_REQUESTS_PER_ROUND = 200;
let sequence = 0;

/** Headers of one freshly signed delivery with a unique svix-id, so verikit takes the full claim/complete path. */
function signedHeaders() {
  const id = `msg_${++sequence}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', KEY).update(`${id}.${timestamp}.`).update(EVENT).digest('base64');
  return { 'content-type': 'application/json', 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,${signature}` };
}

/**
 * Deliveries signed before the round starts: signing in autocannon's loop made the load generator,
 * not the server, the bottleneck for Fastify. Signs on the fly if the round outruns the pool.
 */
function deliveryPool(size) {
  const pool = Array.from({ length: size }, signedHeaders);
  let next = 0;
  return () => pool[next++] ?? signedHeaders();
}

/** `taskset` pinning, where the machine has it and two cores: servers on the last core, load on the rest. */
function pinning() {
  const cores = availableParallelism();
  if (process.platform !== 'linux' || cores < 2 || spawnSync('taskset', ['-V']).status !== 0) return undefined;
  return { serverCore: String(cores - 1), loadCores: cores === 2 ? '0' : `0-${cores - 2}`, allCores: `0-${cores - 1}` };
}

/** Starts a host app (`mount` 'both': verikit's route and the bare one) or the minimal app ('bare'). */
async function startServer(framework, handlerKind, mount, pin, serverArgs) {
  const script = new URL('./adapter-server.mjs', import.meta.url).pathname;
  const args = [script, framework, SECRET, handlerKind, mount, ...serverArgs];
  const child = pin
    ? spawn('taskset', ['-c', pin.serverCore, process.execPath, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ port }] = await once(child, 'message');
  const cpuMicros = async () => {
    child.send('cpu');
    const [message] = await once(child, 'message');
    return message.cpuMicros;
  };
  return { url: `http://127.0.0.1:${port}`, cpuMicros, stop: () => child.disconnect() };
}

/** Loads one route of one server for the round; answers 2xx/s and the server's CPU µs per request. */
async function load(server, path, durationSeconds, nextHeaders) {
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({
    url: server.url,
    connections: CONNECTIONS_PER_ROUTE,
    duration: durationSeconds,
    requests: [
      {
        method: 'POST',
        path,
        body: EVENT,
        setupRequest(request) {
          request.headers = nextHeaders();
          return request;
        },
      },
    ],
  });
  const cpu = (await server.cpuMicros()) - cpuBefore;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rate: result['2xx'] / durationSeconds, cpuPerRequest: cpu / result['2xx'] };
}

/** One round: verikit's route, the host's bare route and the minimal app's, each on its own process, all at once. */
async function round({ hosts, minimal }, swap, durationSeconds, expectedRate, control) {
  const [forVerikit, forBare] = swap ? [hosts[1], hosts[0]] : hosts;
  const poolSize = Math.ceil(expectedRate * durationSeconds * 1.5);
  const loadVerikit = () => load(forVerikit, control ? ROUTES.bare : ROUTES.verikit, durationSeconds, deliveryPool(poolSize));
  const loadBare = () => load(forBare, ROUTES.bare, durationSeconds, deliveryPool(poolSize));
  // The load that starts first changes as the hosts swap, so a pair evens out the start order too.
  const first = swap ? loadBare() : loadVerikit();
  const second = swap ? loadVerikit() : loadBare();
  const [one, other, alone] = await Promise.all([first, second, load(minimal, ROUTES.bare, durationSeconds, deliveryPool(poolSize))]);
  const [verikit, bare] = swap ? [other, one] : [one, other];
  // CPU per request: the bare route's over verikit's is verikit's speed relative to the bare route.
  return {
    verikit,
    bare,
    minimal: alone,
    ratio: bare.cpuPerRequest / verikit.cpuPerRequest,
    baseline: bare.cpuPerRequest / alone.cpuPerRequest,
  };
}

async function benchFramework(
  framework,
  handlerKind,
  { durationSeconds, rounds, warmupRounds, warmupSeconds, verbose, pin, control, serverArgs },
) {
  // One at a time: an inbox kind's processes create their tables as they start.
  const hosts = [];
  for (let i = 0; i < 2; i++) hosts.push(await startServer(framework, handlerKind, 'both', pin, serverArgs));
  const minimal = await startServer(framework, handlerKind, 'bare', pin, serverArgs);
  const servers = { hosts, minimal };
  try {
    // Warm every process on every route it serves: Hono on Node takes seconds of load to reach its
    // steady state (several times its later cost per request before), and each process gets a third of a core.
    let expectedRate = 20_000;
    for (let w = 0; w < warmupRounds; w++) {
      const warm = await round(servers, w % 2 === 1, warmupSeconds, expectedRate, control);
      expectedRate = Math.max(warm.verikit.rate, warm.bare.rate, warm.minimal.rate);
    }
    const results = [];
    let starved = 0;
    // Whole pairs: each pair serves verikit once from either host, and the pairs alternate which goes first.
    const total = 2 * Math.ceil(rounds / 2);
    for (let r = 0; r < total; r++) {
      const swap = (r % 2 === 1) !== (Math.floor(r / 2) % 2 === 1);
      const result = await round(servers, swap, durationSeconds, expectedRate, control);
      if (Math.min(result.verikit.rate, result.bare.rate, result.minimal.rate) * durationSeconds < MIN_REQUESTS_PER_ROUND) {
        // Another job had the machine: too few requests to say anything. Run the round again, within reason.
        if (++starved > total)
          throw new Error(
            `${framework}: the machine was too busy to serve ${MIN_REQUESTS_PER_ROUND} requests per route in ${starved} rounds`,
          );
        console.log(
          `    ${framework} round ${r + 1}: fewer than ${MIN_REQUESTS_PER_ROUND} requests on a route (the machine is busy); running it again`,
        );
        r--;
        continue;
      }
      expectedRate = Math.max(result.verikit.rate, result.bare.rate, result.minimal.rate);
      results.push(result);
      if (verbose) {
        console.log(
          `    ${framework} round ${r + 1} (verikit on host ${swap ? 2 : 1}): CPU/req verikit ${result.verikit.cpuPerRequest.toFixed(1)} µs, bare ${result.bare.cpuPerRequest.toFixed(1)} µs, minimal app ${result.minimal.cpuPerRequest.toFixed(1)} µs; ratio ${result.ratio.toFixed(3)}, bare/minimal ${result.baseline.toFixed(3)}`,
        );
        if (r % 2 === 1) console.log(`    ${framework} pair ${(r + 1) / 2}: ratio ${pairRatios(results).at(-1).toFixed(3)}`);
      }
    }
    return results;
  } finally {
    for (const server of [...hosts, minimal]) server.stop();
  }
}

const spread = (list) => [Math.min(...list), Math.max(...list)];

/**
 * Each pair's ratio: the geometric mean of its two rounds', one with verikit on either host. The two
 * host processes, identical as they are, differ by a few percent in CPU per request (`--control`
 * showed bare/bare alternating about 0.95 and 1.04 as the routes swapped): over a pair that
 * difference cancels, where a median of single rounds leant towards whichever host had more rounds.
 */
const pairRatios = (rounds) =>
  Array.from({ length: rounds.length / 2 }, (_, p) => Math.sqrt(rounds[2 * p].ratio * rounds[2 * p + 1].ratio));

/**
 * A framework's figure over its rounds (as `benchAdapters` answers them, in pairs): the geometric
 * mean of the per-pair ratios, each the bare route's CPU per request over verikit's.
 */
const ratioOf = (rounds) => {
  const pairs = pairRatios(rounds);
  return Math.exp(pairs.reduce((sum, ratio) => sum + Math.log(ratio), 0) / pairs.length);
};

/** Prints an inbox accept benchmark's summary, a line per framework: the figure its bar is set on. */
export function printAcceptSummary(engine, accepted) {
  for (const [key, results] of Object.entries(accepted)) {
    console.log(`inbox accept ${engine} ${key.split('/')[0]}: ${ratioOf(results).toFixed(3)}x CPU (bar >= 0.95x)`);
  }
}

/** Reports one framework's figures: the ratio and the baseline check beside their bars, then the costs. */
function reportFramework(prefix, framework, results, control) {
  const ratios = pairRatios(results);
  const baselines = results.map((r) => r.baseline);
  const cpu = (side) => median(results.map((r) => r[side].cpuPerRequest));
  const rate = (side) => median(results.map((r) => r[side].rate));
  report({
    name: `${prefix}/${framework}/ratio`,
    label: `${framework.padEnd(8)} ${control ? 'bare/bare  ' : 'verikit/bare'} by CPU per request`,
    value: ratioOf(results),
    unit: 'x',
    range: spread(ratios),
    ...(control ? {} : { bar: { min: 0.95 } }),
    indent: 4,
  });
  report({
    name: `${prefix}/${framework}/bare-vs-minimal`,
    label: `${' '.repeat(8)} bare route's CPU/req over a minimal ${framework} app's`,
    value: median(baselines),
    unit: 'x',
    range: spread(baselines),
    bar: { min: 0.8, max: 1.2 },
    indent: 4,
  });
  for (const side of ['verikit', 'bare', 'minimal']) {
    report({
      name: `${prefix}/${framework}/${side}-cpu`,
      label: `${' '.repeat(8)} ${side.padEnd(8)} CPU`,
      value: cpu(side),
      unit: 'µs/req',
      indent: 4,
    });
  }
  for (const side of ['verikit', 'bare', 'minimal']) {
    report({
      name: `${prefix}/${framework}/${side}-rate`,
      label: `${' '.repeat(8)} ${side.padEnd(8)} served`,
      value: rate(side),
      unit: 'req/s',
      indent: 4,
    });
  }
}

/**
 * Runs the adapter benchmark for Express, Fastify and Hono, with a sync and an async no-op `onEvent`;
 * answers each framework's rounds, in pairs (CPU per request and rate of each route, ratio, bare/minimal);
 * `rounds` is rounded up to whole pairs.
 * `control` loads the bare route in place of verikit's: the method's own spread (a ratio near 1).
 * Kind `inbox` (with `serverArgs` [database URL, schema]) compares the route storing into a
 * PostgreSQL inbox with a bare route that inserts on the same pool; kind `redis-inbox` (with
 * [Redis URL, key prefix]) the route adding to a BullMQ inbox with a bare route adding the job itself.
 */
export async function benchAdapters({
  durationSeconds = 3,
  rounds = 8,
  warmupRounds = 4,
  warmupSeconds = 2,
  verbose = false,
  frameworks = ['express', 'fastify', 'hono'],
  handlerKinds = ['sync', 'async'],
  control = false,
  serverArgs = [],
} = {}) {
  const pin = pinning();
  if (pin) execFileSync('taskset', ['-a', '-p', '-c', pin.loadCores, String(process.pid)], { stdio: 'ignore' });
  const placement = pin
    ? `three processes sharing CPU ${pin.serverCore} (two identical host apps, one serving each route, and a minimal app of the framework serving only the bare route), autocannon on CPU ${pin.loadCores}`
    : 'three processes, unpinned (no taskset here)';
  console.log(
    `adapters: webhook route, verikit vs the framework's bare hand-verified route (HMAC + compare + JSON.parse + dedupe, calling the same no-op onEvent), by the server's CPU time per request; served at once by ${placement}; ${CONNECTIONS_PER_ROUTE} connections per route, a unique pre-signed delivery per request, ${warmupRounds} warm-up rounds of ${warmupSeconds} s, ${Math.ceil(rounds / 2)} pairs of rounds of ${durationSeconds} s (in a pair, verikit's route on either host; the figure the geometric mean of the per-pair ratios):`,
  );
  const results = {};
  try {
    for (const handlerKind of handlerKinds) {
      console.log(
        control
          ? '  control: the bare route in place of verikit (both sides bare)'
          : handlerKind === 'inbox'
            ? '  inbox on PostgreSQL: verikit { inbox } vs bare verify + INSERT ... ON CONFLICT DO NOTHING on the same pool'
            : handlerKind === 'redis-inbox'
              ? '  inbox on Redis: verikit { inbox: createRedisInbox } vs bare verify + BullMQ queue.add with jobId = svix-id on the same client'
              : `  onEvent: ${handlerKind === 'async' ? 'async () => {}' : '() => {}'}`,
      );
      for (const framework of frameworks) {
        const frameworkRounds = await benchFramework(framework, handlerKind, {
          durationSeconds,
          rounds,
          warmupRounds,
          warmupSeconds,
          verbose,
          pin,
          control,
          serverArgs,
        });
        results[`${framework}/${handlerKind}`] = frameworkRounds;
        reportFramework(`adapters/${control ? 'control' : handlerKind}`, framework, frameworkRounds, control);
      }
    }
  } finally {
    if (pin) execFileSync('taskset', ['-a', '-p', '-c', pin.allCores, String(process.pid)], { stdio: 'ignore' });
  }
  return results;
}
