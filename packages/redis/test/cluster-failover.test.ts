import { createInboxWorker, createWebhookHandler } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterNode, type LocalRedisCluster, requireRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { createRedisInbox, createRedisStore, type RedisTransaction } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const canRun = requireRedisCluster();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
};
const field = (info: string, name: string) => new RegExp(`^${name}:(\\S*)`, 'm').exec(info)?.[1];

/** Resolves once every replica of `master` has received all it wrote (Redis replicates after answering the client). */
async function replicated(master: ClusterNode, replicas: ClusterNode[]): Promise<void> {
  await until(async () => {
    const offset = Number(field(await master.command('info', 'replication'), 'master_repl_offset'));
    const copies = await Promise.all(
      replicas.map(async (node) => Number(field(await node.command('info', 'replication'), 'slave_repl_offset'))),
    );
    return copies.length > 0 && copies.every((copy) => copy >= offset);
  }, 'the replicas to catch up');
}

describe.runIf(canRun)(
  'a killed master of a Redis Cluster with replicas (3 masters, 3 replicas): the failover, through an ioredis Cluster',
  () => {
    let cluster: LocalRedisCluster;
    let redis: Cluster;
    beforeAll(async () => {
      cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
      redis = new Cluster(cluster.startupNodes);
      redis.on('error', () => {});
    }, 60_000);
    afterAll(async () => {
      redis?.disconnect();
      await cluster?.stop();
    });

    it('deliveries answer 503 (within timeoutMs) until the replica takes over, then 204 with the node still dead; every event accepted runs once, every handled id stays handled', async () => {
      const prefix = '{failover}';
      const effectsKey = `${prefix}:effects`;
      const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false, timeoutMs: 1_000 });
      const store = createRedisStore({ redis, prefix: 'failover:receipt:', persistence: 'ignore', timeoutMs: 2_000 });
      const handler = createWebhookHandler({ secret: SECRET, inbox, logger: false });
      const worker = createInboxWorker<RedisTransaction>({
        inbox,
        leaseMs: 2_000,
        pollIntervalMs: 100,
        retry: { maxAttempts: 50, baseDelayMs: 20, maxDelayMs: 200 },
        logger: false,
        onError: () => {},
        onEvent: async (ctx) => ctx.sql.call('HINCRBY', effectsKey, ctx.id, 1),
      });
      const answers: Array<{ id: string; at: number; status: number }> = [];
      const deliver = async (id: string) => {
        const signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.status_changed', data: { refId: id } }, id });
        const { status } = await handler({ method: 'POST', headers: signed.headers, body: signed.body });
        answers.push({ id, at: Date.now(), status });
        return status;
      };
      try {
        worker.start();
        // Before the kill: deliveries accepted and handled, store ids handled, all of it on the replicas.
        const before = Array.from({ length: 50 }, (_, i) => `msg_before_${i}`);
        for (const id of before) expect(await deliver(id)).toBe(204);
        const handled = Array.from({ length: 30 }, (_, i) => `handled-${i}`);
        for (const id of handled) {
          const claim = await store.claim(id, { leaseMs: 5_000 });
          if (claim.status !== 'claimed') throw new Error(`expected a claim of ${id}`);
          expect(await store.complete(claim.lease)).toBe('ok');
        }
        const master = await cluster.masterOf(prefix);
        const masters = await cluster.masters();
        const replicasOf = async (node: ClusterNode) => {
          const id = (await node.command('cluster', 'myid')).trim();
          const lines = (await node.command('cluster', 'nodes')).split('\n').filter((line) => line.split(' ')[3] === id);
          return cluster.nodes.filter((candidate) => lines.some((line) => line.split(' ')[1]?.startsWith(`${candidate.address}@`)));
        };
        for (const node of masters) await replicated(node, await replicasOf(node));

        // The kill, with deliveries still coming; each refused one is sent again later, as Svix would.
        await master.kill();
        const killedAt = Date.now();
        let n = 0;
        while (answers.filter((a) => a.at > killedAt && a.status === 204).length < 20) {
          if (Date.now() - killedAt > 30_000) throw new Error('no failover within 30 s');
          await deliver(`msg_during_${n++}`);
        }
        const after = answers.filter((a) => a.at > killedAt);
        const firstAccepted = after.findIndex((a) => a.status === 204);
        console.log(
          `failover: ${firstAccepted} deliveries answered ${[...new Set(after.slice(0, firstAccepted).map((a) => a.status))].join('/')} ` +
            `until the first 204, ${(after[firstAccepted]?.at ?? 0) - killedAt} ms after the kill`,
        );
        // A delivery that meets the dead master is answered 503 once timeoutMs is up (one that spans the
        // failover may be stored after it, then 204): never a 2xx before Redis has it.
        expect(after.slice(0, firstAccepted).every((a) => a.status === 503)).toBe(true);
        expect(after.every((a) => a.status === 503 || a.status === 204)).toBe(true);
        expect(master.running).toBe(false);
        expect((await cluster.masters()).map((node) => node.address)).not.toContain(master.address);
        for (const { id } of after.filter((a) => a.status !== 204)) {
          await until(async () => (await deliver(id)) === 204, `${id} accepted again`);
        }

        // Everything accepted, before the kill or after the failover, runs exactly once.
        const ids = [...before, ...Array.from({ length: n }, (_, i) => `msg_during_${i}`)];
        await until(async () => Object.keys(await redis.hgetall(effectsKey)).length >= ids.length, 'every effect');
        await sleep(300);
        const effects = await redis.hgetall(effectsKey);
        expect(Object.keys(effects).sort()).toEqual([...ids].sort());
        expect(Object.values(effects).every((count) => count === '1')).toBe(true);
        for (const id of handled) expect((await store.claim(id, { leaseMs: 5_000 })).status).toBe('done');

        // Started again, the old master joins as a replica of the one that replaced it.
        await master.restart();
        await cluster.waitUntilOk();
        expect(field(await master.command('info', 'replication'), 'role')).toBe('slave');
      } finally {
        await worker.stop({ timeoutMs: 2_000 });
        await inbox.close();
      }
    }, 90_000);
  },
);
