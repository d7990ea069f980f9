import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ChaosEngine, type ChaosFigures, runChaos } from '../../../test-support/chaos/harness.js';
import { CHAOS_SCENARIO, expectExactlyOnce } from '../../../test-support/chaos/verdict.js';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { jobIdFor } from '../src/job-id.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SERVER = fileURLToPath(new URL('../../../test-support/chaos/redis-server.mjs', import.meta.url));
const FRAMEWORKS = ['express', 'fastify', 'hono'];
const serverAvailable = await requireService('Redis', REDIS_URL);

/** The harness's connections: the app's own client by its name, and BullMQ's, whose names hold the queue's. */
function clientsOf(list: string, connectionName: string, queueTag: string): string[] {
  return list
    .split('\n')
    .filter((line) => {
      const name = /\bname=(\S*)/.exec(line)?.[1] ?? '';
      return name === connectionName || name.includes(queueTag);
    })
    .map((line) => /\bid=(\d+)/.exec(line)?.[1] as string);
}

describe.runIf(serverAvailable)('multi-instance chaos on the real Redis', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(REDIS_URL, { connectionName: 'verikit-chaos-observer' });
  });
  afterAll(async () => redis?.quit());

  for (const mode of ['inline', 'inbox'] as const) {
    it(`${mode} mode: 3 instances (Express, Fastify, Hono), SIGKILLs, CLIENT KILLs, a failing onEvent -> every effect exactly once`, async () => {
      const tag = `verikit-chaos-${mode}-${process.pid}-${Date.now().toString(36)}`;
      const prefix = `{${tag}}`;
      const connectionName = `${tag}-app`;
      const queue = new Queue('verikit-inbox', { connection: redis.duplicate(), prefix });
      // BullMQ names its connections after the prefix and the queue (base64), so only this run's are killed,
      // not those of another test's queue of the same name; the app's own client carries connectionName.
      const queueTag = `${prefix}:${Buffer.from('verikit-inbox').toString('base64')}`;
      const engine: ChaosEngine = {
        instance: (i) => ({ script: SERVER, args: [mode, FRAMEWORKS[i % 3] as string, prefix, SECRET, REDIS_URL, connectionName] }),
        killConnections: async () => {
          const ids = clientsOf((await redis.client('LIST')) as string, connectionName, queueTag)
            .sort(() => Math.random() - 0.5)
            .slice(0, 2);
          for (const id of ids) await redis.client('KILL', 'ID', id);
          return ids.length;
        },
        isDurable: async (id) =>
          mode === 'inline' ? (await redis.hexists(`${prefix}:effects`, id)) === 1 : (await redis.exists(queue.toKey(jobIdFor(id)))) === 1,
        settled: async () => {
          if (mode === 'inline') return true;
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused');
          return Object.values(counts).every((n) => n === 0);
        },
        effects: async () => {
          const all = await redis.hgetall(`${prefix}:effects`);
          return new Map(Object.entries(all).map(([id, n]) => [id, Number(n)]));
        },
        runs: async () => Number((await redis.get(`${prefix}:runs`)) ?? 0),
      };
      let figures: ChaosFigures;
      try {
        figures = await runChaos(engine, { ...CHAOS_SCENARIO, mode, secret: SECRET });
      } finally {
        await queue.obliterate({ force: true }).catch(() => {});
        await queue.close();
        const keys = await redis.keys(`${prefix}*`);
        for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      }
      expectExactlyOnce(figures, `${mode}, Redis`);
    }, 240_000);
  }
});
