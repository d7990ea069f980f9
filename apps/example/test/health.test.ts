import type { HealthReport } from '@verikit/core';
import type { FakeService } from '@verikit/testing';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInTempFolder, type TestExample } from './support/example.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const healthz = async (base: string) => {
  const answer = await request(`${base}/healthz`);
  return { status: answer.statusCode, headers: answer.headers, report: (await answer.body.json()) as HealthReport };
};

describe('GET /healthz answers from the inbox and the ledger on the example’s database', () => {
  let running: TestExample;
  beforeAll(async () => {
    running = await startInTempFolder();
  });
  afterAll(async () => {
    await running?.stop();
  });

  it('ok: both engines answered, with their figures, as JSON never cached', async () => {
    const { status, headers, report } = await healthz(running.example.url);
    expect(status).toBe(200);
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers['cache-control']).toBe('no-store');
    expect(report).toMatchObject({
      status: 'ok',
      checks: {
        inbox: { status: 'ok', stats: { pending: 0, retrying: 0, dead: 0, oldestPendingAt: null } },
        ledger: { status: 'ok', stats: { pending: 0, final: 0 } },
      },
    });
  });

  it('a delivery the worker gave up on: degraded (still 200), naming the dead letter; the refId appears nowhere', async () => {
    const fake = running.example.fake as FakeService;
    const person = new Visitor(running.example.url);
    await person.signIn('Hanna Health', 'Health Checks Ltd');
    const refId = await person.startVerification('kyb');
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 500 });
    try {
      fake.kyb.setStatus(refId, 'IN_REVIEW');
      await fake.webhooks.settle();
      const { status, report } = await waitUntil(
        'a degraded health report',
        () => healthz(running.example.url),
        (answer) => answer.report.status === 'degraded',
      );
      expect(status).toBe(200);
      expect(report.checks.inbox).toMatchObject({ status: 'degraded', problems: ['too_many_dead_letters'], stats: { dead: 1 } });
      expect(report.checks.ledger).toMatchObject({ status: 'ok', stats: { pending: 1 } });
      expect(JSON.stringify(report)).not.toContain(refId);
    } finally {
      fake.faults.clear();
    }
  });
});
