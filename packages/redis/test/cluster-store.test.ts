import { createWebhookHandler } from '@verikit/core';
import { idempotencyStoreContract, signWebhook } from '@verikit/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRedisCluster, requireRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { createRedisStore, readPersistence } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const canRun = requireRedisCluster();
const prefix = 'verikit-test:';

describe.runIf(canRun)('the Redis store on a local 3-master Redis Cluster, through an ioredis Cluster', () => {
  let cluster: LocalRedisCluster;
  let redis: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    redis = new Cluster(cluster.startupNodes);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  describe('the store contract', () => {
    for (const c of idempotencyStoreContract({
      createStore: ({ retentionMs }) => createRedisStore({ redis, prefix, retentionMs, persistence: 'ignore' }),
    })) {
      it(c.name, c.run);
    }
  });

  it('spreads its keys over every master (one key per id, no hash tag), each script acting on its own key', async () => {
    const store = createRedisStore({ redis, prefix: `${prefix}spread:`, persistence: 'ignore' });
    const ids = Array.from({ length: 60 }, (_, i) => `msg_spread_${i}`);
    for (const id of ids) {
      const claim = await store.claim(id, { leaseMs: 5_000 });
      if (claim.status !== 'claimed') throw new Error(`expected a claim of ${id}`);
      expect(await store.complete(claim.lease)).toBe('ok');
      expect((await store.claim(id, { leaseMs: 5_000 })).status).toBe('done');
    }
    const perMaster = await Promise.all(
      (await cluster.masters()).map(async (node) => (await node.command('keys', `${prefix}spread:*`)).trim().split('\n').filter(Boolean)),
    );
    expect(perMaster).toHaveLength(3);
    for (const keys of perMaster) expect(keys.length).toBeGreaterThan(0);
    expect(perMaster.flat().sort()).toEqual(ids.map((id) => `${prefix}spread:${id}`).sort());
  });

  it('two webhook handlers sharing the store run onEvent once for each delivery sent to both at once', async () => {
    const ran: string[] = [];
    const handler = () =>
      createWebhookHandler({
        secret: SECRET,
        store: createRedisStore({ redis, prefix, persistence: 'ignore' }),
        logger: false,
        onEvent: async (ctx) => {
          ran.push(ctx.id);
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
    const [a, b] = [handler(), handler()];
    for (let i = 0; i < 12; i++) {
      const signed = signWebhook({ secret: SECRET, payload: '{"type":"kyb.case.status_changed"}', id: `msg_both_${i}` });
      const request = { method: 'POST', headers: signed.headers, body: signed.body };
      const statuses = (await Promise.all([a(request), b(request)])).map((r) => r.status).sort();
      expect(statuses).toEqual([204, 409]);
      expect((await b(request)).status).toBe(204);
    }
    expect(ran.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `msg_both_${i}`).sort());
  });

  it("reads every master's persistence settings: one master that keeps nothing on disk is named, whichever node answers", async () => {
    const [first, second, third] = cluster.nodes;
    if (first === undefined || second === undefined || third === undefined) throw new Error('expected 3 masters');
    await first.command('config', 'set', 'appendonly', 'yes');
    await second.command('config', 'set', 'appendonly', 'yes');
    // A client asking one node at random would see a durable server two times in three.
    for (let i = 0; i < 6; i++) {
      const report = await readPersistence(redis);
      expect(report.appendonly).toBe(false);
      expect(report.problems).toEqual([expect.stringMatching(new RegExp(`^appendonly is off: .* \\(on master ${third.address}\\)$`))]);
    }
    await third.command('config', 'set', 'appendonly', 'yes');
    await first.command('config', 'set', 'appendfsync', 'no');
    const report = await readPersistence(redis);
    expect(report).toMatchObject({ appendonly: true, appendfsync: 'no', maxmemoryPolicy: 'noeviction' });
    expect(report.problems).toEqual([expect.stringMatching(new RegExp(`^appendfsync is no: .* \\(on master ${first.address}\\)$`))]);
    await first.command('config', 'set', 'appendfsync', 'everysec');
    expect(await readPersistence(redis)).toEqual({
      appendonly: true,
      appendfsync: 'everysec',
      maxmemoryPolicy: 'noeviction',
      problems: [],
    });
  });
});
