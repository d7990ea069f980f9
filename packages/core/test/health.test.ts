import { describe, expect, it } from 'vitest';
import { checkHealth, healthResponse, type InboxStats, type LedgerStats, StorageTimeoutError } from '../src/index.node.js';

const inboxStats: InboxStats = {
  pending: 3,
  retrying: 1,
  dead: 0,
  oldestPendingAt: new Date('2026-01-01T00:00:00Z'),
  oldestPendingAgeMs: 5_000,
};
const ledgerStats: LedgerStats = {
  pending: 2,
  pendingByKind: { kyb: { pending: 2, oldestTrackedAt: new Date('2025-12-31T00:00:00Z') }, kyc: { pending: 0, oldestTrackedAt: null } },
  final: 7,
  lastWebhookAt: new Date('2026-01-01T00:00:03Z'),
};
const answering = <S>(stats: S) => ({ stats: async () => stats });
const hanging = { stats: () => new Promise<never>(() => {}) };

describe('checkHealth', () => {
  it('ok: every engine answered within the thresholds, with its figures (and nothing else it returned)', async () => {
    const inbox = { stats: async () => ({ ...inboxStats, connectionString: 'postgres://u:pw@db/x' }) };
    const report = await checkHealth({ inbox, ledger: answering(ledgerStats), maxDead: 0, maxOldestPendingMs: 60_000 });
    expect(report).toEqual({
      status: 'ok',
      checks: {
        inbox: { status: 'ok', durationMs: expect.any(Number), stats: inboxStats },
        ledger: { status: 'ok', durationMs: expect.any(Number), stats: ledgerStats },
      },
    });
    const response = healthResponse(report);
    expect(response).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
      body: expect.any(String),
    });
    expect(JSON.parse(response.body).checks.inbox.stats.oldestPendingAt).toBe('2026-01-01T00:00:00.000Z');
    expect(response.body).not.toContain('pw@');
  });

  it('degraded: over maxDead and maxOldestPendingMs, each named; still a 200 (the process serves, an operator should look)', async () => {
    const inbox = answering({ ...inboxStats, dead: 2, oldestPendingAgeMs: 120_000 });
    const report = await checkHealth({ inbox, maxDead: 1, maxOldestPendingMs: 60_000 });
    expect(report).toMatchObject({
      status: 'degraded',
      checks: { inbox: { status: 'degraded', problems: ['oldest_pending_too_old', 'too_many_dead_letters'] } },
    });
    expect(healthResponse(report).status).toBe(200);
    expect((await checkHealth({ inbox, maxDead: 2 })).status).toBe('ok');
    expect((await checkHealth({ inbox })).status).toBe('ok');
    const idle = answering({ ...inboxStats, pending: 0, oldestPendingAt: null, oldestPendingAgeMs: null });
    expect((await checkHealth({ inbox: idle, maxOldestPendingMs: 1 })).status).toBe('ok');
  });

  it('down by timeout: an engine that never answers is reported within timeoutMs, the other engine still checked', async () => {
    const started = performance.now();
    const report = await checkHealth({ inbox: hanging, ledger: answering(ledgerStats), timeoutMs: 100 });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(report).toEqual({
      status: 'down',
      checks: {
        inbox: {
          status: 'down',
          durationMs: expect.any(Number),
          reason: 'timeout',
          errorCode: 'timeout',
          message: 'the inbox did not answer within the bound',
        },
        ledger: { status: 'ok', durationMs: expect.any(Number), stats: ledgerStats },
      },
    });
    expect(healthResponse(report).status).toBe(503);
  });

  it("down by error: the error's code when it is a plain code, never its message; the engine's own timeout reads as a timeout", async () => {
    const secretError = Object.assign(new Error('connect to postgres://admin:hunter2@10.0.0.5/prod failed'), { code: 'ECONNREFUSED' });
    const refused = await checkHealth({ inbox: { stats: () => Promise.reject(secretError) } });
    expect(refused.checks.inbox).toEqual({
      status: 'down',
      durationMs: expect.any(Number),
      reason: 'error',
      errorCode: 'ECONNREFUSED',
      message: "the inbox's stats call failed",
    });
    const oddCode = Object.assign(new Error('x'), { code: 'password=hunter2 host=10.0.0.5' });
    const thrownSync = await checkHealth({
      ledger: {
        stats: () => {
          throw oddCode;
        },
      },
    });
    expect(thrownSync.checks.ledger).toMatchObject({ status: 'down', reason: 'error', errorCode: null });
    const body = healthResponse(refused).body + healthResponse(thrownSync).body;
    expect(body).not.toMatch(/hunter2|10\.0\.0\.5|postgres:/);
    const engineTimeout = await checkHealth({ inbox: { stats: () => Promise.reject(new StorageTimeoutError('reading stats', 50)) } });
    expect(engineTimeout.checks.inbox).toMatchObject({ status: 'down', reason: 'timeout', errorCode: 'timeout' });
  });

  it('refuses unusable options at once, naming the option', async () => {
    const inbox = answering(inboxStats);
    await expect(checkHealth({})).rejects.toMatchObject({
      code: 'invalid_config',
      message: expect.stringMatching(/an inbox, a ledger or both/),
    });
    await expect(checkHealth({ inbox: {} as never })).rejects.toThrow(/inbox must be an engine with a stats\(\) method/);
    await expect(checkHealth({ inbox, timeoutMs: 0 })).rejects.toThrow(/timeoutMs must be a positive number/);
    await expect(checkHealth({ inbox, maxDead: -1 })).rejects.toThrow(/maxDead must be a whole number from 0/);
    await expect(checkHealth({ inbox, maxOldestPendingMs: Number.NaN })).rejects.toThrow(/maxOldestPendingMs must be a positive number/);
  });
});
