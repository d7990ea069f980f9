import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import { inboxAdminCases } from '../../../test-support/inbox-admin.js';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { redisAdminStorages } from './admin-storage.js';
import { inboxAdminRedisCases } from './inbox-admin-redis.js';

const serverAvailable = await requireService('Redis', REDIS_URL);

describe.runIf(serverAvailable)('the Redis inbox on the real server: InboxAdmin, payload retention, encryption at rest', () => {
  let redis: Redis;
  const storages = redisAdminStorages(() => redis);
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await storages.cleanup();
    redis.disconnect();
  });

  inboxAdminCases(storages.fresh);
  describe('on Redis itself', () => inboxAdminRedisCases(() => redis));
});
