import type { FakeService } from '@verikit/testing';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInTempFolder, type TestExample } from './support/example.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const TOKEN = 'metrics-token-for-the-test-0123';

const scrape = async (base: string, authorization?: string) => {
  const answer = await request(`${base}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
};

/** The value of the sample `name{...labels}` whose labels include `labels`, summed; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const values = text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
  return values.length === 0 ? undefined : values.reduce((total, value) => total + value, 0);
}

describe('GET /metrics: verikit’s OpenTelemetry metrics in Prometheus text, for a scraper with the metrics token', () => {
  let running: TestExample;
  beforeAll(async () => {
    running = await startInTempFolder({ env: { VERIKIT_EXAMPLE_METRICS_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('refuses a scrape without the token, or with another (401, a Bearer challenge, no figures)', async () => {
    expect(running.example.metrics).toBe('on');
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}`]) {
      const { status, headers, text } = await scrape(running.example.url, authorization);
      expect(status).toBe(401);
      expect(headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(text).not.toContain('verikit_');
    }
  });

  it('after a real verification: the delivery, the worker run, the ledger change and the pending verification, with no refId', async () => {
    const fake = running.example.fake as FakeService;
    const person = new Visitor(running.example.url);
    await person.signIn('Mira Metrics', 'Metrics Ltd');
    const refId = await person.startVerification('kyb');
    fake.kyb.setStatus(refId, 'IN_REVIEW');
    await fake.webhooks.settle();
    // The change is counted inside the event's transaction, before it commits with the event marked done: a scrape
    // in between still sees the event pending, so the wait is for both.
    const { status, headers, text } = await waitUntil(
      'the change counted and the event done',
      () => scrape(running.example.url, `Bearer ${TOKEN}`),
      (answer) =>
        sample(answer.text, 'verikit_ledger_changes_total', { verikit_source: 'webhook' }) === 1 &&
        sample(answer.text, 'verikit_inbox_pending') === 0,
    );
    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^text\/plain/);
    expect(sample(text, 'verikit_webhook_deliveries_total', { verikit_outcome: 'accepted' })).toBe(1);
    expect(sample(text, 'messaging_process_duration_count', { verikit_outcome: 'done' })).toBe(1);
    expect(sample(text, 'verikit_ledger_changes_total', { verikit_source: 'webhook', verikit_kind: 'kyb' })).toBe(1);
    expect(sample(text, 'verikit_ledger_pending', { verikit_kind: 'kyb' })).toBe(1);
    expect(sample(text, 'verikit_inbox_pending')).toBe(0);
    expect(sample(text, 'verikit_inbox_dead')).toBe(0);
    expect(text).not.toContain(refId);
  });
});

describe('GET /metrics without a token set', () => {
  it('is off: 404, saying how to turn it on', async () => {
    const running = await startInTempFolder();
    try {
      expect(running.example.metrics).toBe('off');
      const { status, text } = await scrape(running.example.url, `Bearer ${TOKEN}`);
      expect(status).toBe(404);
      expect(text).toContain('VERIKIT_EXAMPLE_METRICS_TOKEN');
    } finally {
      await running.stop();
    }
  });
});
