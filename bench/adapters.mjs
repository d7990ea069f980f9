// Adapter benchmark: per framework, the verikit webhook route vs the same framework's bare route
// that verifies by hand, under the same autocannon load, in the same run.
//
// Both routes are served at the same time, by two identical host-app processes that share one
// CPU core, while autocannon drives both from another core. On this kind of VM the speed of a
// core drifts by a third from one second to the next, so rounds taken one after the other
// compared different machines; serving both at once, each process gets an equal share of the
// same core at the same moment, and the ratio of their throughputs is the ratio of their costs.
// The processes swap routes every round, so any difference between them cancels out.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import autocannon from 'autocannon';
import { fmt, median } from './lib.mjs';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
const EVENT = Buffer.from(
  JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: 'biz-1', status: 'COMPLETED', note: 'x'.repeat(1500) } }),
);
const CONNECTIONS_PER_ROUTE = 16;
const ROUTES = { verikit: '/verikit/webhook', bare: '/bare/webhook' };
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

async function startServer(framework, handlerKind, pin, serverArgs) {
  const script = new URL('./adapter-server.mjs', import.meta.url).pathname;
  const args = [script, framework, SECRET, handlerKind, ...serverArgs];
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

/** One round: both routes at once, each on its own server process. */
async function round(servers, swap, durationSeconds, expectedRate, control) {
  const [forVerikit, forBare] = swap ? [servers[1], servers[0]] : servers;
  const poolSize = Math.ceil(expectedRate * durationSeconds * 1.5);
  const verikitHeaders = deliveryPool(poolSize);
  const bareHeaders = deliveryPool(poolSize);
  const [verikit, bare] = await Promise.all([
    load(forVerikit, control ? ROUTES.bare : ROUTES.verikit, durationSeconds, verikitHeaders),
    load(forBare, ROUTES.bare, durationSeconds, bareHeaders),
  ]);
  return { verikit, bare, ratio: verikit.rate / bare.rate };
}

async function benchFramework(framework, handlerKind, { durationSeconds, rounds, warmupSeconds, verbose, pin, control, serverArgs }) {
  const servers = [await startServer(framework, handlerKind, pin, serverArgs), await startServer(framework, handlerKind, pin, serverArgs)];
  try {
    // Warm both processes on both routes: the first seconds run unoptimised code.
    let expectedRate = 20_000;
    for (const swap of [false, true]) {
      const warm = await round(servers, swap, warmupSeconds, expectedRate, control);
      expectedRate = Math.max(warm.verikit.rate, warm.bare.rate);
    }
    const results = [];
    for (let r = 0; r < rounds; r++) {
      const result = await round(servers, r % 2 === 1, durationSeconds, expectedRate, control);
      expectedRate = Math.max(result.verikit.rate, result.bare.rate);
      results.push(result);
      if (verbose) {
        console.log(
          `    ${framework} round ${r + 1}: verikit ${fmt(result.verikit.rate)} vs bare ${fmt(result.bare.rate)} = ${result.ratio.toFixed(3)}`,
        );
      }
    }
    return {
      verikit: median(results.map((r) => r.verikit.rate)),
      bare: median(results.map((r) => r.bare.rate)),
      verikitCpu: median(results.map((r) => r.verikit.cpuPerRequest)),
      bareCpu: median(results.map((r) => r.bare.cpuPerRequest)),
      ratio: median(results.map((r) => r.ratio)),
      ratios: results.map((r) => r.ratio),
    };
  } finally {
    for (const server of servers) server.stop();
  }
}

/**
 * Runs the adapter benchmark for Express, Fastify and Hono, with a sync and an async no-op `onEvent`.
 * `control` loads the bare route in place of verikit's: the method's own spread (a ratio near 1).
 * Kind `inbox` (with `serverArgs` [database URL, schema]) compares the route storing into a
 * PostgreSQL inbox with a bare route that inserts on the same pool; kind `redis-inbox` (with
 * [Redis URL, key prefix]) the route adding to a BullMQ inbox with a bare route adding the job itself.
 */
export async function benchAdapters({
  durationSeconds = 3,
  rounds = 7,
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
    ? `two identical host-app processes sharing CPU ${pin.serverCore}, autocannon on CPU ${pin.loadCores}`
    : 'two identical host-app processes, unpinned (no taskset here)';
  console.log(
    `adapters: webhook route, verikit vs the framework's bare hand-verified route (HMAC + compare + JSON.parse), served at once by ${placement}; ${CONNECTIONS_PER_ROUTE} connections per route, a unique pre-signed delivery per request, ${warmupSeconds} s warm-up per process and route, median of ${rounds} rounds of ${durationSeconds} s, routes swapping processes each round:`,
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
        const r = await benchFramework(framework, handlerKind, {
          durationSeconds,
          rounds,
          warmupSeconds,
          verbose,
          pin,
          control,
          serverArgs,
        });
        results[`${framework}/${handlerKind}`] = r;
        console.log(
          `    ${framework.padEnd(8)} ${control ? 'bare   ' : 'verikit'} ${fmt(r.verikit).padStart(6)} req/s (${r.verikitCpu.toFixed(1)} µs CPU/req)   bare ${fmt(r.bare).padStart(6)} req/s (${r.bareCpu.toFixed(1)} µs CPU/req)   ratio ${r.ratio.toFixed(3)} [${Math.min(...r.ratios).toFixed(3)}-${Math.max(...r.ratios).toFixed(3)}]${control ? '' : '  (target >= 0.9)'}`,
        );
      }
    }
  } finally {
    if (pin) execFileSync('taskset', ['-a', '-p', '-c', pin.allCores, String(process.pid)], { stdio: 'ignore' });
  }
  return results;
}
