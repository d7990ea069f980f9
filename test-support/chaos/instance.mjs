// What every engine's chaos instance shares: the webhook options, the inbox worker, and serving the
// host app. Each engine's script says only how it stores, and how its effect is written.
import { createInboxWorker } from '@verikit/core';

/** onEvent fails 5% of the time: the failures are the point of the run, and its figures account for them. */
const fail = () => Math.random() < 0.05;

/**
 * Inline mode: the store, and an onEvent that may fail, then counts its run and writes its effect
 * keyed by svix-id (inline mode has no transaction shared with "done", as its README says).
 */
export function inlineWebhook({ secret, store, countRun, writeKeyedEffect }) {
  return {
    secret,
    store,
    logger: false,
    deadlineMs: 2_000,
    leaseMs: 4_000,
    onEvent: async (ctx) => {
      if (fail()) throw new Error('integrator failure');
      await countRun(ctx);
      await writeKeyedEffect(ctx);
    },
  };
}

/**
 * Inbox mode: the route stores and queues; a worker counts each run, writes the effect through
 * ctx.sql (a count, not a keyed write: only applying it with "done" keeps it once), then may fail,
 * which must leave the effect unapplied.
 */
export function inboxWebhook({ secret, inbox, countRun, writeEffect }) {
  createInboxWorker({
    inbox,
    concurrency: 8,
    leaseMs: 1_500,
    pollIntervalMs: 200,
    retry: { maxAttempts: 30, baseDelayMs: 20, maxDelayMs: 300 },
    onError: () => {},
    logger: false,
    onEvent: async (ctx) => {
      await countRun(ctx);
      await writeEffect(ctx);
      if (fail()) throw new Error('integrator failure');
    },
  }).start();
  return { secret, inbox, logger: false };
}

/** Serves `webhook` under /verikit with the named framework (only that one is loaded) and tells the harness the port. */
export async function serveInstance(framework, webhook) {
  const ready = (port) => process.send({ port });
  process.on('disconnect', () => process.exit(0));
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
}
