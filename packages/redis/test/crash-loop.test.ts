import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectCrashLoopDeadLettered } from '../../../test-support/crash-loop/restart.js';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisInbox, type RedisInbox } from '../src/index.js';

const serverAvailable = await requireService('Redis', REDIS_URL);

describe.runIf(serverAvailable)('a poison event on the real Redis', () => {
  const prefix = `{verikit-crash-loop-${process.pid}-${Date.now().toString(36)}}`;
  let redis: Redis;
  let inbox: RedisInbox;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
    inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false });
  });
  afterAll(async () => {
    await inbox?.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis?.disconnect();
  });

  it('a job that SIGKILLs its worker runs retry.maxAttempts times across restarts (stalled, not retried for ever), then is dead-lettered', async () => {
    await inbox.accept({ id: 'msg_poison', timestamp: 1, body: '{"type":"kyb.case.status_changed","data":{"refId":"poison"}}' });
    await expectCrashLoopDeadLettered({
      engine: 'redis',
      url: REDIS_URL,
      namespace: prefix,
      id: 'msg_poison',
      deadLetters: () => inbox.deadLetters(),
    });
  }, 120_000);
});
