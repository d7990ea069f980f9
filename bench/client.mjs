// Client benchmark: client.kyb.getCase at concurrency 32 vs what a user writes by hand with raw
// undici (a Pool on the same origin with the same settings, pool.request + body.json()), against a
// fixed-answer server in another process. The figure is the client process's CPU time per request,
// rounds interleaved (alternating which goes first): on this shared machine req/s drifts with the
// neighbours, CPU per request far less.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createClient, VERSION } from '@verikit/core';
import { Pool } from 'undici';
import { median, report } from './lib.mjs';

const CONCURRENCY = 32;
const BAR = 0.95;
const details = JSON.stringify({
  id: 'case_1',
  refId: 'biz-1',
  status: 'COMPLETED',
  businessName: 'Acme Ltd',
  flow: { id: 'flow_1', title: 'Standard', country: 'GB' },
  steps: [
    { id: 's1', type: 'form', title: 'Company', fields: [{ key: 'name', title: 'Name', value: 'Acme Ltd', required: true }] },
    { id: 's2', type: 'address', title: 'Address', fields: [{ key: 'city', title: 'City', value: 'London', required: true }] },
    { id: 's3', type: 'document', title: 'Docs', documents: [], additionalFiles: [] },
  ],
  amlScreening: { primary: [{ status: 'CLEAR', businessRole: 'primary' }], related: [] },
  reopenHistory: [],
});

/** Runs `op` from `concurrency` loops for `durationMs`; answers this process's CPU µs per operation and ops/s. */
async function cpuPerOp(op, { concurrency, durationMs }) {
  let done = 0;
  const started = performance.now();
  const stopAt = started + durationMs;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < stopAt) {
        await op();
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu: (cpu.user + cpu.system) / done, rate: done / ((performance.now() - started) / 1000) };
}

/** Runs the client benchmark and returns its figures. */
export async function benchClient({ durationMs = 1000, rounds = 15, verbose = false } = {}) {
  const server = spawn(process.execPath, [new URL('./json-server.mjs', import.meta.url).pathname, details], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [port] = await once(server, 'message');
  const origin = `http://127.0.0.1:${port}`;
  const settings = { connections: CONCURRENCY, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 };
  const client = createClient({
    apiKey: 'bench-key',
    baseUrl: origin,
    connections: settings.connections,
    keepAliveTimeoutMs: settings.keepAliveTimeout,
  });
  const pool = new Pool(origin, settings);
  // The same request on the wire as the client sends, so the ratio measures client overhead, not header bytes.
  const headers = { 'x-api-key': 'bench-key', 'user-agent': `verikit/${VERSION} (node ${process.version})`, accept: 'application/json' };
  const subject = () => client.kyb.getCase('biz-1');
  const baseline = async () => {
    const { body } = await pool.request({ path: '/kyb/case/biz-1/details', method: 'GET', headers });
    await body.json();
  };
  const run = { concurrency: CONCURRENCY, durationMs };
  // Warm both paths: the first calls run unoptimised code.
  await cpuPerOp(subject, { ...run, durationMs: 500 });
  await cpuPerOp(baseline, { ...run, durationMs: 500 });
  const results = [];
  for (let round = 0; round < rounds; round++) {
    const first = round % 2 === 0;
    const a = first ? await cpuPerOp(subject, run) : undefined;
    const b = await cpuPerOp(baseline, run);
    const s = a ?? (await cpuPerOp(subject, run));
    results.push({ subject: s, baseline: b, ratio: b.cpu / s.cpu });
    if (verbose) {
      console.log(`    round ${round + 1}: ${s.cpu.toFixed(1)} vs ${b.cpu.toFixed(1)} µs CPU/req = ${(b.cpu / s.cpu).toFixed(3)}x`);
    }
  }
  await client.close();
  await pool.close();
  server.disconnect();
  await once(server, 'exit');
  const ratios = results.map((r) => r.ratio);
  const ratio = median(ratios);
  console.log(
    `client: kyb.getCase vs raw undici Pool.request + body.json(), concurrency ${CONCURRENCY}, CPU per request of the client process, ${rounds} interleaved rounds of ${durationMs} ms (medians):`,
  );
  for (const [side, key, label] of [
    ['subject', 'getCase', 'client.kyb.getCase '],
    ['baseline', 'undici', 'undici Pool.request'],
  ]) {
    report({ name: `client/${key}/cpu`, label: `${label} CPU`, value: median(results.map((r) => r[side].cpu)), unit: 'µs/req' });
    report({ name: `client/${key}/rate`, label: `${label} served`, value: median(results.map((r) => r[side].rate)), unit: 'req/s' });
  }
  report({
    name: `client/getCase-c${CONCURRENCY}/ratio`,
    label: `client getCase c${CONCURRENCY} vs undici by CPU per request`,
    value: ratio,
    unit: 'x',
    bar: { min: BAR },
    range: [Math.min(...ratios), Math.max(...ratios)],
  });
  return { ratio, ratios, bar: BAR };
}
