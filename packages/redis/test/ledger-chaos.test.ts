import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type LedgerChaosReport, type LedgerEffect, runLedgerChaos } from '../../../test-support/chaos/ledger-harness.js';
import { expectLedgerChaos, LEDGER_CHAOS_SCENARIO } from '../../../test-support/chaos/ledger-verdict.js';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisLedger } from '../src/index.js';

const serverAvailable = await requireService('Redis', REDIS_URL);

describe.runIf(serverAvailable)('ledger chaos on the real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL, { connectionName: 'verikit-ledger-chaos-observer' });
  });
  afterAll(async () => redis?.quit());

  it('500 refIds moved through reopens and overturned decisions, 3 instances, SIGKILLs, lost, late and repeated webhooks -> the ledger equals the service, each change once, in order, within the budget', async () => {
    const prefix = `{verikit-ledger-chaos-${process.pid}-${Date.now().toString(36)}}`;
    const ledger = createRedisLedger({ redis, prefix: `${prefix}:ledger:`, persistence: 'ignore', logger: false });
    let report: LedgerChaosReport;
    try {
      report = await runLedgerChaos(
        {
          name: 'redis',
          url: REDIS_URL,
          namespace: prefix,
          ledger,
          effects: async () => (await redis.lrange(`${prefix}:effects`, 0, -1)).map((line) => JSON.parse(line) as LedgerEffect),
        },
        LEDGER_CHAOS_SCENARIO,
      );
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    }
    expectLedgerChaos(report, 'Redis');
  }, 180_000);
});
