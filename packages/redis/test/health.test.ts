import { checkHealth, healthResponse } from '@verikit/core';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisInbox, createRedisLedger, type RedisInbox } from '../src/index.js';

const serverAvailable = await requireService('Redis', REDIS_URL);
const run = `${process.pid}-${Date.now().toString(36)}`;
// Short, so the tests are quick; what is checked is that the report comes within it, not how fast.
const BOUND_MS = 500;

describe.runIf(serverAvailable)('health of the Redis engines', () => {
  let redis: Redis;
  const opened: Array<{ close(): Promise<void> }> = [];
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const thing of opened.reverse()) await thing.close();
    for (const pattern of [`{verikit-health-${run}}*`, `verikit-health-${run}:*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
  });

  it('the inbox and the ledger on a live server: ok, with their figures', async () => {
    const inbox = createRedisInbox({ redis, prefix: `{verikit-health-${run}}`, persistence: 'ignore', logger: false });
    const ledger = createRedisLedger({ redis, prefix: `verikit-health-${run}:ledger:`, persistence: 'ignore', logger: false });
    opened.push(inbox);
    await inbox.accept({ id: 'msg_health_1', timestamp: Math.floor(Date.now() / 1000), body: '{}' });
    await ledger.track({ kind: 'kyc', refId: 'person-1' }, { nextCheckAt: new Date(Date.now() + 60_000) });
    const report = await checkHealth({ inbox, ledger, timeoutMs: BOUND_MS });
    expect(report).toMatchObject({
      status: 'ok',
      checks: {
        inbox: { status: 'ok', stats: { pending: 1, retrying: 0, dead: 0, oldestPendingAt: expect.any(Date) } },
        ledger: {
          status: 'ok',
          stats: {
            pending: 1,
            pendingByKind: { kyb: { pending: 0, oldestTrackedAt: null }, kyc: { pending: 1, oldestTrackedAt: expect.any(Date) } },
            final: 0,
            lastWebhookAt: null,
          },
        },
      },
    });
  });

  it('a Redis that is down (ioredis waiting to reconnect) is down within the bound, with no URL or password in the report', async () => {
    const broken = new Redis('redis://:s3cret-pw@127.0.0.1:1', { retryStrategy: () => 200 });
    broken.on('error', () => {});
    const inbox: RedisInbox = createRedisInbox({ redis: broken, prefix: `{verikit-health-${run}-down}`, logger: false });
    try {
      const started = Date.now();
      const report = await checkHealth({ inbox, timeoutMs: BOUND_MS });
      expect(Date.now() - started).toBeLessThan(BOUND_MS + 250);
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
        },
      });
      const response = healthResponse(report);
      expect(response.status).toBe(503);
      expect(response.body).not.toMatch(/s3cret|redis:|127\.0\.0\.1/);
    } finally {
      await inbox.close().catch(() => {});
      broken.disconnect();
    }
  });
});
