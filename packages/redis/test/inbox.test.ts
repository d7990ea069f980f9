import { createWebhookHandler } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisInbox } from '../src/index.js';
import { inboxSuite } from './inbox-suite.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const serverAvailable = await requireService('Redis', REDIS_URL);
const run = `${process.pid}-${Date.now().toString(36)}`;

describe.runIf(serverAvailable)('the Redis inbox on BullMQ, on the real server', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => redis.disconnect());

  inboxSuite({
    redis: () => redis,
    cleanup: async (prefixes) => {
      for (const prefix of prefixes) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      }
    },
  });

  it('a Redis that is down -> 503 within timeoutMs, never a hang and never a 2xx', async () => {
    const broken = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => 200 });
    broken.on('error', () => {});
    const inbox = createRedisInbox({ redis: broken, prefix: `{verikit-test-${run}-down}`, timeoutMs: 300, logger: false });
    const errors: Array<[string, unknown]> = [];
    const handler = createWebhookHandler({ secret: SECRET, inbox, logger: false, onError: (e, { stage }) => errors.push([stage, e]) });
    const signed = signWebhook({ secret: SECRET, payload: { type: 'x' } });
    const answer = await handler({ method: 'POST', headers: signed.headers, body: signed.body });
    expect(answer.status).toBe(503);
    expect(errors).toEqual([['accept', expect.objectContaining({ code: 'timeout', name: 'RedisTimeoutError' })]]);
    await inbox.close().catch(() => {});
    broken.disconnect();
  });

  it('closed while Redis is down, the inbox ends its pending lease with nothing and lets the client end later without an unhandled rejection', async () => {
    // The client gives up reconnecting (and ends) only when told: after the inbox is closed.
    let giveUp = false;
    const broken = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => (giveUp ? null : 50) });
    broken.on('error', () => {});
    const inbox = createRedisInbox({ redis: broken, prefix: `{verikit-test-${run}-late}`, timeoutMs: 200, logger: false });
    const unhandled: unknown[] = [];
    const hear = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', hear);
    try {
      await expect(inbox.accept({ id: 'msg_late', timestamp: 1, body: '{}' })).rejects.toMatchObject({ code: 'timeout' });
      // A lease on a down Redis waits for it (as BullMQ's workers do); it opens the worker's connections.
      const leasing = inbox.lease('late', 1, 5_000);
      // Its fetch under way, queued on the worker's connection until Redis is back.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await inbox.close();
      // ...but not past close(): it hands out nothing, so a worker stopping during the outage is not held up.
      expect(await leasing).toEqual([]);
      expect(await inbox.lease('after', 1, 5_000)).toEqual([]);
      const ended = new Promise((resolve) => broken.once('end', resolve));
      giveUp = true;
      await ended;
      // The opening's failure follows 'end' by a few ticks; a macrotask later it has been heard, or reported.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', hear);
      broken.disconnect();
    }
  });

  it('accepts made together are each answered once their job is stored, a repeat among them stored once', async () => {
    // A client of its own: closing the inbox ends the client it was given.
    const own = new Redis(REDIS_URL);
    const inbox = createRedisInbox({ redis: own, prefix: `{verikit-test-${run}-together}`, logger: false });
    const ids = Array.from({ length: 100 }, (_, i) => `msg_together_${i}`);
    const answers = await Promise.all(
      [...ids, 'msg_together_0'].map((id) =>
        inbox
          .accept({ id, timestamp: 1, body: `{"n":"${id}"}` })
          .then(async (result) => ({ result, stored: await inbox.get(id, { withPayload: true }) })),
      ),
    );
    expect(answers.every((a) => a.result === 'accepted' && a.stored?.body === `{"n":"${a.stored?.id}"}`)).toBe(true);
    expect(await inbox.queue.getJobCountByTypes('wait')).toBe(100);
    await inbox.queue.obliterate({ force: true });
    await inbox.close();
    own.disconnect();
  });

  it('refuses unusable options at creation', () => {
    expect(() => createRedisInbox({ redis: {} as never })).toThrow(/redis is required/);
    expect(() => createRedisInbox({ redis, queueName: '' })).toThrow(/queueName/);
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ payloadRetentionMs: -1 }, 'payloadRetentionMs'],
      [{ payloadRetentionMs: null }, 'payloadRetentionMs'],
      [{ deadLetterRetentionMs: 0 }, 'deadLetterRetentionMs'],
      [{ pruneIntervalMs: 1.5 }, 'pruneIntervalMs'],
      [{ pruneBatchSize: 0 }, 'pruneBatchSize'],
      [{ encryption: { keys: [] } }, 'encryption'],
      [{ encryption: { keys: [{ id: 'k1', key: 'c2hvcnQ=' }] } }, 'encryption.keys[0].key'],
    ];
    for (const [options, option] of refused)
      expect(() => createRedisInbox({ redis, ...options }), option).toThrow(expect.objectContaining({ code: 'invalid_config', option }));
  });
});
