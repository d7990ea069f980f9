import { fileURLToPath } from 'node:url';
import { createClient } from '@verikit/core';
import { createFakeService, signWebhook } from '@verikit/testing';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { freePort, runScript } from '../../../test-support/readme-snippet.js';

const dir = fileURLToPath(new URL('..', import.meta.url));

/** One sample of a Prometheus text scrape: its metric name, labels and value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a scrape (the `# HELP`, `# TYPE` and `# UNIT` lines left out). */
function parse(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
      if (match === null) throw new Error(`not a Prometheus sample: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** The sum of the samples named `name` whose labels include `labels` (undefined when there is none). */
function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? undefined : found.reduce((total, s) => total + s.value, 0);
}

it('Prometheus scrapes the figures of real deliveries: deliveries by outcome, runs, inbox depth, ledger changes and pending', async () => {
  const fake = await createFakeService({ webhooks: { retrySchedule: [0, 50, 100, 200] } });
  const [port, metricsPort] = [await freePort(), await freePort()];
  const server = runScript(`${dir}/server.mjs`, dir, {
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    VERIKIT_API_KEY: fake.credentials.apiKey,
    VERIKIT_BASE_URL: fake.baseUrl,
    VERIKIT_WEB_URL: fake.webUrl,
    VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
    VERIKIT_WEBHOOK_SECRET: fake.credentials.webhookSecret,
  });
  const client = createClient({ ...fake.clientOptions, logger: false });
  const webhookUrl = `http://127.0.0.1:${port}/verikit/webhook`;
  const post = async (delivery: ReturnType<typeof signWebhook>) => {
    const answer = await request(webhookUrl, { method: 'POST', headers: delivery.headers, body: delivery.body });
    await answer.body.dump();
    return answer.statusCode;
  };
  try {
    // PGlite starts and migrates first: generous, for a busy machine.
    await server.waitFor('listening', 45_000);
    fake.webhooks.addEndpoint(webhookUrl);
    await client.kyb.createCase({ refId: 'biz-1' });
    await client.kyc.createSession({ refId: 'person-1' });
    // Two real deliveries from the fake, each observed through the ledger.
    fake.kyb.setStatus('biz-1', 'IN_REVIEW');
    fake.kyc.setStatus('person-1', 'IN_REVIEW');
    await server.waitFor('verification update: kyb biz-1 -> IN_REVIEW (webhook)', 30_000);
    await server.waitFor('verification update: kyc person-1 -> IN_REVIEW (webhook)', 30_000);
    // An event naming no verification (dead-lettered), delivered twice; and a forged one.
    const unknown = signWebhook({ secret: fake.credentials.webhookSecret, payload: { type: 'account.updated', data: {} } });
    expect(await post(unknown)).toBe(204);
    expect(await post(unknown)).toBe(204);
    expect(
      await post(signWebhook({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', payload: { type: 'kyb.case.status_changed' } })),
    ).toBe(400);
    await server.waitFor('dead-lettered', 30_000);

    const scrape = await request(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scrape.statusCode).toBe(200);
    const text = await scrape.body.text();
    const samples = parse(text);

    expect(sumOf(samples, 'verikit_webhook_deliveries_total', { verikit_outcome: 'accepted' })).toBe(3);
    expect(sumOf(samples, 'verikit_webhook_deliveries_total', { verikit_outcome: 'duplicate' })).toBe(1);
    expect(sumOf(samples, 'verikit_webhook_deliveries_total', { verikit_outcome: 'refused', verikit_reason: 'invalid_signature' })).toBe(1);
    expect(sumOf(samples, 'verikit_webhook_duration_count')).toBe(5);
    expect(sumOf(samples, 'messaging_process_duration_count', { verikit_outcome: 'done' })).toBe(2);
    expect(sumOf(samples, 'messaging_process_duration_count', { verikit_outcome: 'dead_lettered', error_type: 'unidentified_event' })).toBe(
      1,
    );
    expect(sumOf(samples, 'verikit_inbox_pending')).toBe(0);
    expect(sumOf(samples, 'verikit_inbox_dead')).toBe(1);
    expect(sumOf(samples, 'verikit_inbox_oldest_pending_age')).toBe(0);
    expect(sumOf(samples, 'verikit_ledger_reads_total', { verikit_source: 'webhook' })).toBe(2);
    expect(sumOf(samples, 'verikit_ledger_changes_total', { verikit_source: 'webhook', verikit_kind: 'kyb' })).toBe(1);
    expect(sumOf(samples, 'verikit_ledger_changes_total', { verikit_source: 'webhook', verikit_kind: 'kyc' })).toBe(1);
    expect(sumOf(samples, 'verikit_ledger_pending', { verikit_kind: 'kyb' })).toBe(1);
    expect(sumOf(samples, 'verikit_ledger_pending', { verikit_kind: 'kyc' })).toBe(1);
    expect(sumOf(samples, 'verikit_ledger_read_budget')).toBe(60);
    // Seconds, in the conventions' buckets; every series of verikit's own scope, none with an id.
    expect(sumOf(samples, 'verikit_webhook_duration_bucket', { le: '10', otel_scope_name: '@verikit/core' })).toBe(5);
    expect(text).toMatch(/# UNIT verikit_webhook_duration s\n/);
    expect(text).not.toMatch(/msg_|biz-1|person-1/);
  } finally {
    await server.stop();
    await client.close();
    await fake.close();
  }
});
