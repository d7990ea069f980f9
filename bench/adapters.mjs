// Adapter benchmark: per framework, the verikit webhook route vs the same framework's bare route
// that verifies by hand, under the same autocannon load, alternating in one run.
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { fmt, median } from './lib.mjs';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const KEY = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
const EVENT = JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: 'biz-1', status: 'COMPLETED', note: 'x'.repeat(1500) } });
let sequence = 0;

/** A fresh, validly signed delivery per request (unique svix-id, so verikit does the full claim/complete path). */
function signedRequest(path) {
  return {
    method: 'POST',
    path,
    setupRequest(req) {
      const id = `msg_${++sequence}`;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', KEY).update(`${id}.${timestamp}.${EVENT}`).digest('base64');
      return {
        ...req,
        headers: { 'content-type': 'application/json', 'svix-id': id, 'svix-timestamp': timestamp, 'svix-signature': `v1,${signature}` },
        body: EVENT,
      };
    },
  };
}

async function load(url, path, durationSeconds) {
  const result = await autocannon({ url, connections: 32, duration: durationSeconds, requests: [signedRequest(path)] });
  const ok = result['2xx'];
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return ok / durationSeconds;
}

/** Runs the adapter benchmark for Express, Fastify and Hono. */
export async function benchAdapters({ durationSeconds = 3, rounds = 5, warmupSeconds = 3, verbose = false } = {}) {
  const results = {};
  for (const framework of ['express', 'fastify', 'hono']) {
    const worker = new Worker(new URL('./adapter-server.mjs', import.meta.url), { workerData: { framework, secret: SECRET } });
    const [port] = await once(worker, 'message');
    const url = `http://127.0.0.1:${port}`;
    // Warm both routes well: the first seconds run unoptimised code and would skew the first rounds.
    await load(url, '/verikit/webhook', warmupSeconds);
    await load(url, '/bare/webhook', warmupSeconds);
    const ours = [];
    const bare = [];
    const ratios = [];
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0;
      const a = first ? await load(url, '/verikit/webhook', durationSeconds) : undefined;
      const b = await load(url, '/bare/webhook', durationSeconds);
      const o = a ?? (await load(url, '/verikit/webhook', durationSeconds));
      ours.push(o);
      bare.push(b);
      ratios.push(o / b);
      if (verbose) console.log(`    ${framework} round ${round + 1}: verikit ${fmt(o)} vs bare ${fmt(b)} = ${(o / b).toFixed(3)}`);
    }
    await worker.terminate();
    results[framework] = { verikit: median(ours), bare: median(bare), ratio: median(ratios) };
  }
  console.log(
    `adapters: webhook route, verikit vs the framework's bare hand-verified route (HMAC + compare + JSON.parse, mounted like verikit's; autocannon, 32 connections, ${warmupSeconds} s warm-up each, ${rounds} alternating rounds of ${durationSeconds} s, medians):`,
  );
  for (const [framework, r] of Object.entries(results)) {
    console.log(
      `  ${framework.padEnd(8)} verikit ${fmt(r.verikit).padStart(7)} req/s   bare ${fmt(r.bare).padStart(7)} req/s   ratio ${r.ratio.toFixed(3)}  (target >= 0.9)`,
    );
  }
  return results;
}
