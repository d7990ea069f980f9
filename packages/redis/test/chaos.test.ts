import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChaosEngine, type ChaosFigures, runChaos } from '../../../test-support/chaos/harness.js';
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
      // BullMQ names its connections after the queue (base64); the app's own client carries connectionName.
      const queueTag = Buffer.from('verikit-inbox').toString('base64');
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
        figures = await runChaos(engine, {
          mode,
          secret: SECRET,
          distinct: 2_000,
          copiesPerId: 5,
          instances: 3,
          kills: 3,
          scheduleMs: [0, 20, 50, 100, 200, 400, 800, 1_600, 3_200, 6_400],
          concurrency: 96,
        });
      } finally {
        await queue.obliterate({ force: true }).catch(() => {});
        await queue.close();
        const keys = await redis.keys(`${prefix}*`);
        for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      }
      console.log(
        `chaos (${mode}, Redis): deliveries=${figures.deliveries} distinct=${figures.distinct} attempts=${figures.attempts} ` +
          `effects-lost=${figures.lost} effects-doubled=${figures.doubled} 2xx-before-durable=${figures.earlyAcks} given-up=${figures.givenUp} ` +
          `sigkills=${figures.kills} killed-connections=${figures.killedConnections} onEvent-runs=${figures.runs} ` +
          `statuses=${JSON.stringify(figures.statuses)} crashes=${figures.crashes.length} seconds=${figures.seconds}`,
      );
      expect(figures.kills).toBeGreaterThanOrEqual(3);
      expect(figures.deliveries).toBeGreaterThanOrEqual(10_000);
      expect(figures.killedConnections).toBeGreaterThan(0);
      expect(figures.crashes).toEqual([]);
      expect(figures.lost).toBe(0);
      expect(figures.doubled).toBe(0);
      expect(figures.earlyAcks).toBe(0);
      // Each delivery the sender gave up on, with every answer it had: what a failure here needs to be understood.
      expect(figures.givenUpHistories).toEqual([]);
      expect(figures.givenUp).toBe(0);
    }, 240_000);
  }
});
