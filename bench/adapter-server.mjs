// One framework's host app in its own process: the verikit webhook route at /verikit/webhook and a
// bare route at /bare/webhook that verifies by hand with node:crypto and answers 204. The parent
// asks for this process's CPU time over IPC, to print CPU per request beside the throughput.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { MemoryIdempotencyStore } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import { verikitPlugin } from '@verikit/fastify';
import { verikitApp } from '@verikit/hono';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';

const [framework, secret, handlerKind] = process.argv.slice(2);
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
// The integrator's work is a no-op either way: the benchmark measures the route, not the work.
const onEvent = handlerKind === 'async' ? async () => {} : () => {};
// Every delivery is unique, at some 20,000 a second: with the default 7-day retention the store would
// reach its bound (100,000 ids) within seconds and refuse claims (503), as it must. A 5 s retention
// keeps it at steady state, each claim sweeping about one expired id, as a long-running server does.
const store = new MemoryIdempotencyStore({ retentionMs: 5_000, maxEntries: 1_000_000 });
const options = { webhook: { secret, store, onEvent } };

/** The hand-written check a team would write without verikit: HMAC, compare, parse. */
function bareVerify(header, body) {
  const id = header('svix-id');
  const timestamp = header('svix-timestamp');
  const signatures = String(header('svix-signature') ?? '').split(' ');
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64'));
  const ok = signatures.some((s) => {
    const given = Buffer.from(s.slice(3));
    return s.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (ok) JSON.parse(body.toString('utf8'));
  return ok;
}

const ready = (port) => process.send({ port });
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
  }
});
process.on('disconnect', () => process.exit(0));

if (framework === 'express') {
  const app = express();
  app.use('/verikit', verikitRouter(options));
  app.post('/bare/webhook', express.raw({ type: () => true }), (req, res) =>
    res.status(bareVerify((name) => req.headers[name], req.body) ? 204 : 400).end(),
  );
  const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
} else if (framework === 'fastify') {
  const app = Fastify();
  await app.register(verikitPlugin, { prefix: '/verikit', ...options });
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/bare/webhook', async (req, reply) => reply.code(bareVerify((name) => req.headers[name], req.body) ? 204 : 400).send());
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  ready(app.server.address().port);
} else {
  const app = new Hono();
  app.route('/verikit', verikitApp(options));
  app.post('/bare/webhook', async (c) => {
    const body = Buffer.from(await c.req.arrayBuffer());
    return c.body(null, bareVerify((name) => c.req.header(name), body) ? 204 : 400);
  });
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(info.port));
}
