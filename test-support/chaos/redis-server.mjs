// One instance of the multi-instance chaos harness: a real host app (Express, Fastify or Hono) with
// verikit's adapter, over the real Redis, in inline mode (store) or inbox mode (BullMQ inbox + worker).
// onEvent fails 5% of the time; its effect is counted per id, through ctx.sql in inbox mode (before the failure point).
// Only the framework this instance serves is loaded: a SIGKILLed instance is back sooner.
import { createInboxWorker } from '@verikit/core';
import { createRedisInbox, createRedisStore } from '@verikit/redis';
import { Redis } from 'ioredis';

const [mode, framework, prefix, secret, url, connectionName] = process.argv.slice(2);
const redis = new Redis(url, { connectionName });
// Connections killed by the harness (CLIENT KILL) surface here; ioredis reconnects: expected, not fatal.
redis.on('error', () => {});
const fail = () => Math.random() < 0.05;
const runsKey = `${prefix}:runs`;
const effectsKey = `${prefix}:effects`;

let webhook;
if (mode === 'inline') {
  const store = createRedisStore({ redis, prefix: `${prefix}:receipt:`, persistence: 'ignore', logger: false });
  webhook = {
    secret,
    store,
    // The failures are the point of the run; its figures account for them.
    logger: false,
    deadlineMs: 2_000,
    leaseMs: 4_000,
    onEvent: async (ctx) => {
      if (fail()) throw new Error('integrator failure');
      await redis.incr(runsKey);
      // Inline mode has no transaction shared with "done": the effect is keyed by svix-id, as its README advises.
      await redis.hsetnx(effectsKey, ctx.id, 1);
    },
  };
} else {
  const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false });
  webhook = { secret, inbox, logger: false };
  createInboxWorker({
    inbox,
    concurrency: 8,
    leaseMs: 1_500,
    pollIntervalMs: 200,
    retry: { maxAttempts: 30, baseDelayMs: 20, maxDelayMs: 300 },
    onError: () => {},
    logger: false,
    onEvent: async (ctx) => {
      await redis.incr(runsKey);
      // A count, not a keyed write: only applying it together with "done" keeps it once, and a
      // failure after it (below) must leave it unapplied.
      ctx.sql.call('HINCRBY', effectsKey, ctx.id, 1);
      if (fail()) throw new Error('integrator failure');
    },
  }).start();
}

const ready = (port) => process.send({ port });
if (framework === 'express') {
  const [{ verikitRouter }, { default: express }] = await Promise.all([import('@verikit/express'), import('express')]);
  const app = express();
  app.use('/verikit', verikitRouter({ webhook }));
  const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
} else if (framework === 'fastify') {
  const [{ verikitPlugin }, { default: Fastify }] = await Promise.all([import('@verikit/fastify'), import('fastify')]);
  const app = Fastify();
  await app.register(verikitPlugin, { prefix: '/verikit', webhook });
  await app.listen({ port: 0, host: '127.0.0.1' });
  ready(app.server.address().port);
} else {
  const [{ verikitApp }, { Hono }, { serve }] = await Promise.all([import('@verikit/hono'), import('hono'), import('@hono/node-server')]);
  const app = new Hono();
  app.route('/verikit', verikitApp({ webhook }));
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(info.port));
}
process.on('disconnect', () => process.exit(0));
