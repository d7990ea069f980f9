import { ledgerContract } from '@verikit/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRedisCluster, requireRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { createRedisLedger, type RedisTransaction } from '../src/index.js';

const canRun = requireRedisCluster();

describe.runIf(canRun)('the Redis ledger on a local 3-master Redis Cluster, through an ioredis Cluster', () => {
  let cluster: LocalRedisCluster;
  let redis: Cluster;
  let ledgers = 0;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    redis = new Cluster(cluster.startupNodes);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  describe('the ledger contract', () => {
    // Each case's ledger under a prefix of its own, all of them and the effects in the slot of one tag.
    const effects = '{verikit-ledger}:effects';
    for (const c of ledgerContract<RedisTransaction>({
      createLedger: () =>
        createRedisLedger({ redis, prefix: `ledger:${++ledgers}:{verikit-ledger}:`, persistence: 'ignore', logger: false }),
      effects: {
        write: (tx, tag) => tx.call('HINCRBY', effects, tag, 1),
        count: async (tag) => Number((await redis.hget(effects, tag)) ?? 0),
      },
    })) {
      it(c.name, c.run);
    }
  });

  it("keeps the default prefix's keys ({verikit}) on the one master serving that slot", async () => {
    const ledger = createRedisLedger({ redis, persistence: 'ignore', logger: false });
    for (let i = 0; i < 20; i++) await ledger.track({ kind: 'kyb', refId: `biz-${i}` }, { nextCheckAt: new Date(Date.now() + 60_000) });
    expect((await ledger.list({ limit: 100 })).length).toBe(20);
    const holders: string[] = [];
    for (const node of redis.nodes('master')) {
      if ((await node.keys('verikit:ledger:*')).length > 0) holders.push(`${node.options.host}:${node.options.port}`);
    }
    expect(holders).toEqual([(await cluster.masterOf('{verikit}')).address]);
  });

  it('refuses a ctx.sql write outside its slot before applying anything: the row, its lock and the writes before it stay as they were', async () => {
    const ledger = createRedisLedger({ redis, prefix: 'ledger:cross:{verikit-cross}:', persistence: 'ignore', logger: false });
    const key = { kind: 'kyb', refId: 'biz-cross' } as const;
    await ledger.track(key, { nextCheckAt: new Date(Date.now() + 60_000) });
    const lock = await ledger.lock(key, { leaseMs: 30_000 });
    if (typeof lock === 'string') throw new Error(`no lock: ${lock}`);
    const inSlot = '{verikit-cross}:effects';
    const elsewhere = '{another-tag}:effects';
    await expect(
      ledger.record(
        lock,
        { status: 'COMPLETED', final: true, fingerprint: 'f', source: 'webhook' },
        () => null,
        async (_change, tx) => {
          tx.call('INCR', inSlot);
          tx.call('INCR', elsewhere);
        },
      ),
    ).rejects.toMatchObject({ name: 'RedisCrossSlotError', code: 'invalid_argument', position: 2, command: 'INCR' });
    expect(await redis.get(inSlot)).toBeNull();
    expect((await ledger.get(key))?.version).toBe(0);
    expect(await ledger.lock(key, { leaseMs: 30_000 })).toBe('busy');
  });
});
