import { createInboxWorker, type InboxWorker } from '@verikit/core';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisInbox, createRedisStore, type RedisInbox, type RedisTransaction } from '../src/index.js';
import { type DedicatedRedis, requireRedisServerBinary, startDedicatedRedis } from './dedicated-redis.js';
import { type RunningRoute, startRoute } from './route.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const PERSONAL = 'Jane Q. Citizen, born 1970-01-01, passport X1234567';
const payload = { type: 'kyc.session.status_changed', data: { refId: 'user-7', name: PERSONAL } };
const canRun = requireRedisServerBinary();

/** Log lines as pino writes them (its error serializer keeps every enumerable field of an error). */
function capturedLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

/** What no log line may hold: the body's personal data, Lua text, or a command's arguments. */
function expectNothingPrivate(lines: string[]): void {
  const all = lines.join('');
  expect(all).not.toContain(PERSONAL);
  expect(all).not.toMatch(/redis\.call|rcall|KEYS\[1\]|local function/);
  expect(all).not.toContain('"args"');
}

describe.runIf(canRun)(
  'Redis refusing writes (maxmemory, noeviction): the failure is logged without the body, the Lua or the arguments',
  () => {
    let server: DedicatedRedis;
    let redis: Redis;
    const closing: Array<{ close(): Promise<void> } | InboxWorker> = [];
    beforeAll(async () => {
      server = await startDedicatedRedis();
      redis = new Redis(server.url);
    });
    afterAll(async () => {
      for (const thing of closing.reverse()) await ('stop' in thing ? thing.stop({ timeoutMs: 2_000 }) : thing.close());
      redis?.disconnect();
      await server?.stop();
    });
    /** Every write refused from now (1 byte of memory allowed), or none (no limit). */
    const refuseWrites = (refuse: boolean) => server.admin.config('SET', 'maxmemory', refuse ? '1' : '0');

    it.each([
      { mode: 'inline', stage: 'claim' },
      { mode: 'inbox', stage: 'accept' },
    ] as const)('$mode mode: the $stage refused -> 503, and the log line says what failed, nothing more', async ({ stage }) => {
      const { logger, lines } = capturedLogger();
      const inbox =
        stage === 'accept' ? createRedisInbox({ redis, queueName: 'refused-accept', persistence: 'ignore', logger }) : undefined;
      if (inbox !== undefined) closing.push(inbox);
      const mode =
        inbox !== undefined ? { inbox } : { store: createRedisStore({ redis, persistence: 'ignore', logger }), onEvent: () => {} };
      const route = await startRoute({ secret: SECRET, logger, ...mode });
      closing.push(route);
      await refuseWrites(true);
      try {
        expect((await route.deliver(payload)).status).toBe(503);
      } finally {
        await refuseWrites(false);
      }
      const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.stage === stage);
      expect(failure?.err).toMatchObject({
        message: expect.stringMatching(/^OOM command not allowed/),
        command: { name: expect.stringMatching(/^eval(sha)?$/) },
      });
      expectNothingPrivate(lines);
    });

    it("inbox worker: the commit of ctx.sql's writes refused -> logged without them, retried, applied once Redis takes writes again", async () => {
      const { logger, lines } = capturedLogger();
      const inbox: RedisInbox = createRedisInbox({ redis, queueName: 'refused-commit', persistence: 'ignore', logger });
      closing.push(inbox);
      const route: RunningRoute = await startRoute({ secret: SECRET, inbox, logger });
      closing.push(route);
      const { id, status } = await route.deliver(payload);
      expect(status).toBe(204);
      let attempts = 0;
      const worker = createInboxWorker<RedisTransaction>({
        inbox,
        logger,
        leaseMs: 1_000,
        pollIntervalMs: 100,
        retry: { baseDelayMs: 50, maxDelayMs: 100 },
        onEvent: async (ctx) => {
          // Refused from the first attempt's commit on: the writes (personal data) are the script's arguments.
          if (++attempts === 1) await refuseWrites(true);
          ctx.sql.call('HSET', 'refused-commit:results', ctx.id, PERSONAL);
        },
      });
      closing.push(worker);
      worker.start();
      const deadline = Date.now() + 10_000;
      while (!lines.some((line) => line.includes('OOM command not allowed'))) {
        if (Date.now() > deadline) throw new Error(`no refusal logged:\n${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await refuseWrites(false);
      while ((await redis.hget('refused-commit:results', id)) === null) {
        if (Date.now() > deadline) throw new Error(`the event was not applied once writes were taken again:\n${lines.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await worker.stop({ timeoutMs: 2_000 });
      expect(attempts).toBeGreaterThanOrEqual(2);
      expectNothingPrivate(lines);
    });
  },
);
