// One instance of the multi-instance chaos harness: a real host app (Express, Fastify or Hono) with
// verikit's adapter, over the real PostgreSQL, in inline mode (store) or inbox mode (inbox + worker).
// onEvent fails 5% of the time; its effect is one row per run, written through ctx.sql in inbox mode.
import { serve } from '@hono/node-server';
import { createInboxWorker } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import { verikitPlugin } from '@verikit/fastify';
import { verikitApp } from '@verikit/hono';
import { createPostgresInbox, createPostgresStore } from '@verikit/postgres';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import pg from 'pg';

const [mode, framework, schema, secret, url, applicationName] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 12, application_name: applicationName });
// Connections killed by the harness (pg_terminate_backend) surface here when idle: expected, not fatal.
pool.on('error', () => {});
const fail = () => Math.random() < 0.05;

let webhook;
let worker;
if (mode === 'inline') {
  const store = createPostgresStore({ db: pool, schema, onError: () => {} });
  await store.migrate();
  webhook = {
    secret,
    store,
    // The failures are the point of the run; its figures account for them.
    logger: false,
    deadlineMs: 2_000,
    leaseMs: 4_000,
    onEvent: async (ctx) => {
      if (fail()) throw new Error('integrator failure');
      // Inline mode has no transaction shared with "done": the effect is keyed by svix-id, as its README advises.
      await pool.query(`INSERT INTO ${schema}.runs (id) VALUES ($1)`, [ctx.id]);
      await pool.query(`INSERT INTO ${schema}.effects (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, [ctx.id]);
    },
  };
} else {
  const inbox = createPostgresInbox({ db: pool, schema, onError: () => {} });
  await inbox.migrate();
  webhook = { secret, inbox, logger: false };
  worker = createInboxWorker({
    inbox,
    concurrency: 8,
    leaseMs: 1_500,
    pollIntervalMs: 200,
    retry: { maxAttempts: 30, baseDelayMs: 20, maxDelayMs: 300 },
    onError: () => {},
    logger: false,
    onEvent: async (ctx) => {
      await pool.query(`INSERT INTO ${schema}.runs (id) VALUES ($1)`, [ctx.id]);
      if (fail()) throw new Error('integrator failure');
      // No unique key here: only the transaction that also marks the event done keeps this once.
      await ctx.sql.query(`INSERT INTO ${schema}.effects (id) VALUES ($1)`, [ctx.id]);
    },
  });
  worker.start();
}

const ready = (port) => process.send({ port });
if (framework === 'express') {
  const app = express();
  app.use('/verikit', verikitRouter({ webhook }));
  const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
} else if (framework === 'fastify') {
  const app = Fastify();
  await app.register(verikitPlugin, { prefix: '/verikit', webhook });
  await app.listen({ port: 0, host: '127.0.0.1' });
  ready(app.server.address().port);
} else {
  const app = new Hono();
  app.route('/verikit', verikitApp({ webhook }));
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(info.port));
}
process.on('disconnect', () => process.exit(0));
