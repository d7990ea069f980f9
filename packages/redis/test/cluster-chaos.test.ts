import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChaosEngine, type ChaosFigures, runChaos } from '../../../test-support/chaos/harness.js';
import { CHAOS_SCENARIO, expectExactlyOnce } from '../../../test-support/chaos/verdict.js';
import { type LocalRedisCluster, requireRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { jobIdFor } from '../src/job-id.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SERVER = fileURLToPath(new URL('../../../test-support/chaos/redis-server.mjs', import.meta.url));
const FRAMEWORKS = ['express', 'fastify', 'hono'];
const canRun = requireRedisCluster();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A read of the test's own, retried while the cluster is down (a check made then waits for the node to be back, so it sees what survived). */
const observe = async <T>(read: () => Promise<T>, withinMs = 30_000): Promise<T> => {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
};

// Every node appends each write to its AOF before answering it (appendfsync always), so a killed
// node started again has everything it acknowledged: what the run can then require is that nothing
// answered 204 is lost. Without a replica, its slots have no other home while it is down. The AOFs
// are kept in memory (/dev/shm) where there is one: a killed process loses nothing from it either,
// and a write per fsync costs no disk time.
const DURABLE = ['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''];
const IN_MEMORY = existsSync('/dev/shm') ? '/dev/shm' : undefined;
/** How long the killed master stays down: past cluster-node-timeout (1 s), so the whole cluster says CLUSTERDOWN for a while too. */
const DOWN_MS = 4_000;

describe.runIf(canRun)('multi-instance chaos on a local 3-master Redis Cluster, with the master of the queue killed mid-run', () => {
  let cluster: LocalRedisCluster;
  let redis: Cluster;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, persistence: DURABLE, parentDir: IN_MEMORY });
    redis = new Cluster(cluster.startupNodes, { redisOptions: { connectionName: 'verikit-chaos-observer' } });
    redis.on('error', () => {});
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it('inbox mode: 3 instances, SIGKILLs, CLIENT KILLs, a failing onEvent, the queue master SIGKILLed for 4 s -> 503s while it is down, every effect exactly once', async () => {
    const prefix = '{verikit-chaos}';
    const connectionName = 'verikit-chaos-app';
    const queue = new Queue('verikit-inbox', { connection: redis.duplicate(), prefix });
    queue.on('error', () => {});
    const nodes = `cluster:${cluster.nodes.map((node) => node.address).join(',')}`;
    const engine: ChaosEngine = {
      instance: (i) => ({ script: SERVER, args: ['inbox', FRAMEWORKS[i % 3] as string, prefix, SECRET, nodes, connectionName] }),
      // Any connection on any node but the observer's and redis-cli's own: the cluster is this test's alone.
      killConnections: async () => {
        const listed = await Promise.all(
          cluster.nodes
            .filter((node) => node.running)
            .map(async (node) =>
              (await node.command('client', 'list'))
                .split('\n')
                .filter((line) => !/\bname=verikit-chaos-observer\s/.test(line) && !/\bcmd=client\|list\b/.test(line))
                .map((line) => ({ node, id: /\bid=(\d+)/.exec(line)?.[1] as string })),
            ),
        );
        const victims = listed
          .flat()
          .sort(() => Math.random() - 0.5)
          .slice(0, 2);
        for (const { node, id } of victims) await node.command('client', 'kill', 'id', id);
        return victims.length;
      },
      isDurable: async (id) => (await observe(() => redis.exists(queue.toKey(jobIdFor(id))))) === 1,
      settled: async () => {
        const counts = await observe(() => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'));
        return Object.values(counts).every((n) => n === 0);
      },
      effects: async () => {
        const all = await observe(() => redis.hgetall(`${prefix}:effects`));
        return new Map(Object.entries(all).map(([id, n]) => [id, Number(n)]));
      },
      runs: async () => Number((await observe(() => redis.get(`${prefix}:runs`))) ?? 0),
      outage: async () => {
        const master = await cluster.masterOf(prefix);
        await master.kill();
        const from = Date.now();
        await sleep(DOWN_MS);
        const until = Date.now();
        await master.restart();
        await cluster.waitUntilOk();
        return { from, until };
      },
    };
    let figures: ChaosFigures;
    try {
      figures = await runChaos(engine, { ...CHAOS_SCENARIO, mode: 'inbox', secret: SECRET });
    } finally {
      await queue.close();
    }
    expectExactlyOnce(figures, 'inbox, Redis Cluster');
    // While the queue's master was down, no delivery could be stored: each was answered 503 (or not at all, by a killed instance).
    const whileDown = figures.whileDown ?? {};
    expect(Object.keys(whileDown).filter((status) => status.startsWith('2'))).toEqual([]);
    expect(whileDown['503']).toBeGreaterThan(0);
  }, 240_000);
});
