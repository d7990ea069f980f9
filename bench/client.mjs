// Client benchmark: client.kyb.getCase at concurrency 32 vs raw undici.request with the same pool settings.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { createClient, VERSION } from '@verikit/core';
import { Agent } from 'undici';
import { comparePair, fmt } from './lib.mjs';

const CONCURRENCY = 32;
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

/** Runs the client benchmark and returns its figures. */
export async function benchClient({ durationMs = 1000, rounds = 15, verbose = false } = {}) {
  const server = new Worker(new URL('./server-worker.mjs', import.meta.url), { workerData: { body: details } });
  const [port] = await once(server, 'message');
  const origin = `http://127.0.0.1:${port}`;
  const pool = { connections: CONCURRENCY, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 };

  const client = createClient({
    apiKey: 'bench-key',
    baseUrl: origin,
    connections: pool.connections,
    keepAliveTimeoutMs: pool.keepAliveTimeout,
  });
  const agent = new Agent(pool);
  // The same request on the wire as the client sends, so the ratio measures client overhead, not header bytes.
  const headers = { 'x-api-key': 'bench-key', 'user-agent': `verikit/${VERSION} (node ${process.version})`, accept: 'application/json' };
  const result = await comparePair(
    () => client.kyb.getCase('biz-1'),
    async () => {
      const { body } = await agent.request({ origin, path: '/kyb/case/biz-1/details', method: 'GET', headers });
      JSON.parse(await body.text());
    },
    { concurrency: CONCURRENCY, durationMs, rounds, verbose },
  );
  await client.close();
  await agent.close();
  server.postMessage('close');
  await once(server, 'exit');
  console.log(
    `client: kyb.getCase vs raw undici.request, concurrency ${CONCURRENCY}, ${rounds} alternating rounds of ${durationMs} ms (medians):`,
  );
  console.log(`  client.kyb.getCase   ${fmt(result.subject).padStart(9)} req/s`);
  console.log(`  raw undici.request   ${fmt(result.baseline).padStart(9)} req/s`);
  console.log(`  ratio                ${result.ratio.toFixed(3)}  (median of per-round ratios; target >= 0.85)`);
  return result;
}
