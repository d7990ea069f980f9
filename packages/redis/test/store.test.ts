import { createWebhookHandler, type Logger } from '@verikit/core';
import { idempotencyStoreContract, signWebhook } from '@verikit/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisStore, RedisNotDurableError, readPersistence } from '../src/index.js';

// Each run writes under its own prefix, so parallel or repeated runs never collide.
const prefix = `verikit-test:${process.pid}:${Date.now().toString(36)}:`;
const serverAvailable = await requireService('Redis', REDIS_URL);
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe.runIf(serverAvailable)('the Redis store on the real server', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL, { lazyConnect: false });
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  describe('the store contract', () => {
    for (const c of idempotencyStoreContract({
      createStore: ({ retentionMs }) => createRedisStore({ redis, prefix, retentionMs, persistence: 'ignore' }),
    })) {
      it(c.name, c.run);
    }
  });

  it('keeps one key per id under the prefix: the lease deadline in its value (server clock), the key itself for the retention', async () => {
    const store = createRedisStore({ redis, prefix: `${prefix}keys:`, retentionMs: 60_000, persistence: 'ignore' });
    const claim = await store.claim('msg_1', { leaseMs: 5_000 });
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const [seconds] = await redis.time();
    const value = (await redis.get(`${prefix}keys:msg_1`)) as string;
    const [, until, owner] = /^l:(\d+):(.+)$/.exec(value) ?? [];
    expect(owner).toBe(claim.lease.owner);
    expect(Number(until) - Number(seconds) * 1000).toBeGreaterThan(3_000);
    expect(Number(until) - Number(seconds) * 1000).toBeLessThanOrEqual(6_000);
    expect(await redis.pttl(`${prefix}keys:msg_1`)).toBeGreaterThan(59_000);
    expect(await store.complete(claim.lease)).toBe('ok');
    expect(await redis.get(`${prefix}keys:msg_1`)).toBe(`d:${claim.lease.owner}`);
    expect(await redis.pttl(`${prefix}keys:msg_1`)).toBeGreaterThan(59_000);
    expect(await redis.keys(`${prefix}keys:*`)).toEqual([`${prefix}keys:msg_1`]);
  });

  it('answers the same when ioredis resends a script whose reply was lost (a claim, then a completion, twice)', async () => {
    const store = createRedisStore({ redis, prefix, persistence: 'ignore' });
    const claim = await store.claim('msg_resent', { leaseMs: 5_000 });
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    // The same owner's value is found again: what a resent script meets.
    expect(await store.complete(claim.lease)).toBe('ok');
    expect(await store.complete(claim.lease)).toBe('ok');
    expect(await store.release(claim.lease)).toBe('stale');
    expect((await store.claim('msg_resent', { leaseMs: 5_000 })).status).toBe('done');
  });

  it('two webhook handlers sharing the store run onEvent once for a delivery sent to both at once', async () => {
    const ran: string[] = [];
    const handler = (instance: string) =>
      createWebhookHandler({
        secret: SECRET,
        store: createRedisStore({ redis, prefix, persistence: 'ignore' }),
        logger: false,
        onEvent: async () => {
          ran.push(instance);
          await new Promise((resolve) => setTimeout(resolve, 30));
        },
      });
    const [a, b] = [handler('a'), handler('b')];
    const signed = signWebhook({ secret: SECRET, payload: '{"type":"kyb.case.status_changed"}', id: `msg_both_${Date.now()}` });
    const request = { method: 'POST', headers: signed.headers, body: signed.body };
    const statuses = (await Promise.all([a(request), b(request)])).map((r) => r.status).sort();
    expect(ran).toHaveLength(1);
    expect(statuses).toEqual([204, 409]);
    expect((await a(request)).status).toBe(204);
    expect(ran).toHaveLength(1);
  });

  it('a Redis that is down -> the webhook route answers 503 within timeoutMs, never hangs, never a 2xx', async () => {
    // With no limit on retries, ioredis would hold the call until Redis is back: only timeoutMs answers it.
    const down = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: null, retryStrategy: () => 200 });
    down.on('error', () => {});
    const errors: unknown[] = [];
    const handler = createWebhookHandler({
      secret: SECRET,
      store: createRedisStore({ redis: down, prefix, timeoutMs: 300 }),
      logger: false,
      onEvent: () => {},
      onError: (error) => errors.push(error),
    });
    const signed = signWebhook({ secret: SECRET, payload: '{}', id: `msg_down_${Date.now()}` });
    expect((await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(503);
    expect(errors).toEqual([expect.objectContaining({ name: 'RedisTimeoutError', code: 'timeout' })]);
    down.disconnect();
  });

  describe('persistence: it says what this server can lose, and refuses when asked to', () => {
    it('reads the settings of the server (this one keeps nothing on disk)', async () => {
      const report = await readPersistence(redis);
      const aof = (await redis.config('GET', 'appendonly')) as string[];
      expect(report.appendonly).toBe(aof[1] === 'yes');
      if (!report.appendonly) expect(report.problems[0]).toMatch(/appendonly is off: a restart loses every handled id/);
    });

    it('warns once, at the first use, naming the fix; refuses every claim under "require"; says nothing under "ignore"', async () => {
      const report = await readPersistence(redis);
      if (report.problems.length === 0) return expect(report.appendonly).toBe(true);
      const lines: string[] = [];
      const logger: Logger = { debug() {}, info() {}, warn: (fields) => lines.push(String(fields.problem)), error() {} };
      const warned = createRedisStore({ redis, prefix, logger });
      expect((await warned.claim(`warn-${Date.now()}`, { leaseMs: 1_000 })).status).toBe('claimed');
      await warned.claim(`warn2-${Date.now()}`, { leaseMs: 1_000 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lines).toEqual(report.problems);
      expect(lines.join(' ')).toMatch(/set appendonly yes and appendfsync everysec/);

      const strict = createRedisStore({ redis, prefix, persistence: 'require', logger });
      await expect(strict.claim(`strict-${Date.now()}`, { leaseMs: 1_000 })).rejects.toBeInstanceOf(RedisNotDurableError);
      await expect(strict.checkPersistence()).rejects.toMatchObject({ code: 'not_durable', problems: report.problems });

      const handler = createWebhookHandler({ secret: SECRET, store: strict, logger: false, onEvent: () => {} });
      const signed = signWebhook({ secret: SECRET, payload: '{}', id: `msg_strict_${Date.now()}` });
      expect((await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(503);

      lines.length = 0;
      const quiet = createRedisStore({ redis, prefix, persistence: 'ignore', logger });
      await quiet.claim(`quiet-${Date.now()}`, { leaseMs: 1_000 });
      expect(await quiet.checkPersistence()).toMatchObject({ problems: report.problems });
      expect(lines).toEqual([]);
    });
  });

  it('refuses unusable options at creation', () => {
    expect(() => createRedisStore({} as never)).toThrow(/redis is required/);
    expect(() => createRedisStore({ redis, retentionMs: 0.5 })).toThrow(/retentionMs/);
    expect(() => createRedisStore({ redis, prefix: '' })).toThrow(/prefix/);
    expect(() => createRedisStore({ redis, logger: {} as never })).toThrow(/logger must have debug, info, warn and error/);
  });
});
