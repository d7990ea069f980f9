// One framework's host app in its own process: the verikit webhook route at /verikit/webhook and a
// bare route at /bare/webhook that verifies by hand with node:crypto, dedupes and answers 204. The
// parent asks for this process's CPU time over IPC, to compare CPU per request.
// Args: framework, secret, handler kind, mount, then the kind's own. Mount `both` serves both
// routes; `bare` serves only the bare route and loads nothing of verikit: the minimal app of the
// framework, against which the bench checks that its host's bare route is not slowed by the host.
// Only the framework in use (and the store of an inbox kind) is loaded: a host that loaded every
// framework, driver and verikit package had a larger heap and a longer warm-up than any real app.
// Kind `inbox` (args: database URL, schema): verikit's route stores and queues into a PostgreSQL
// inbox, and the bare route, after verifying, runs INSERT ... ON CONFLICT DO NOTHING on the same pool.
// Kind `redis-inbox` (args: Redis URL, key prefix): verikit's route adds to a BullMQ inbox, and the
// bare route, after verifying, adds a BullMQ job with jobId = svix-id on the same client.
import { createHmac, timingSafeEqual } from 'node:crypto';

const [framework, secret, handlerKind, mount, serverUrl, namespace] = process.argv.slice(2);
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
const withVerikit = mount === 'both';

/** What the bare route does with a verified delivery in inbox mode: store it (nothing in the inline kinds). */
let bareStore;
/**
 * The integrator's work in the inline kinds, run by both routes (verikit's through its options, the
 * bare one as a hand-written route calls its handler): a no-op, so the bench measures the route.
 */
const onEvent = handlerKind === 'async' ? async () => {} : () => {};
/** verikit's route options, when this process mounts verikit. */
let options;
if (handlerKind === 'inbox') {
  const { default: pg } = await import('pg');
  const schema = namespace;
  const pool = new pg.Pool({ connectionString: serverUrl, max: 24 });
  if (withVerikit) {
    const { createPostgresInbox } = await import('@verikit/postgres');
    const inbox = createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0 });
    await inbox.migrate();
    options = { webhook: { secret, inbox } };
  }
  await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await pool.query(
    `CREATE TABLE IF NOT EXISTS "${schema}".bare_inbox (id text PRIMARY KEY, payload text NOT NULL, svix_timestamp bigint NOT NULL)`,
  );
  // What a team would write by hand: one insert keyed by svix-id, a repeat a no-op.
  const insert = `INSERT INTO "${schema}".bare_inbox (id, payload, svix_timestamp) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`;
  bareStore = (header, body) => pool.query(insert, [header('svix-id'), body.toString('utf8'), Number(header('svix-timestamp'))]);
} else if (handlerKind === 'redis-inbox') {
  const { Redis } = await import('ioredis');
  const { Queue } = await import('bullmq');
  const redis = new Redis(serverUrl);
  if (withVerikit) {
    const { createRedisInbox } = await import('@verikit/redis');
    const inbox = createRedisInbox({ redis, prefix: `{${namespace}-verikit-${process.pid}}`, persistence: 'ignore' });
    options = { webhook: { secret, inbox } };
  }
  // What a team would write by hand: BullMQ's add, keyed by svix-id, a repeat a no-op.
  const queue = new Queue('bare-inbox', { connection: redis, prefix: `{${namespace}-bare-${process.pid}}` });
  bareStore = (header, body) =>
    queue.add(
      'event',
      { id: header('svix-id'), timestamp: Number(header('svix-timestamp')), body: body.toString('utf8') },
      { jobId: header('svix-id') },
    );
} else if (withVerikit) {
  const { MemoryIdempotencyStore } = await import('@verikit/core');
  // Every delivery is unique, at some 20,000 a second: with the default 7-day retention the store would
  // reach its bound (100,000 ids) within seconds and refuse claims (503), as it must. A 5 s retention
  // keeps it at steady state, each claim sweeping about one expired id, as a long-running server does.
  const store = new MemoryIdempotencyStore({ retentionMs: 5_000, maxEntries: 1_000_000 });
  options = { webhook: { secret, store, onEvent } };
}

/** Ids the bare inline route has handled: a hand-written dedupe, emptied at the size verikit's store holds here. */
const seen = new Set();
const SEEN_LIMIT = 100_000;

/** The hand-written check a team would write without verikit: HMAC, compare, parse; the event, or undefined when refused. */
function bareVerify(header, body) {
  const id = header('svix-id');
  const timestamp = header('svix-timestamp');
  const signatures = String(header('svix-signature') ?? '').split(' ');
  if (!id || !timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return undefined;
  const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64'));
  const ok = signatures.some((s) => {
    const given = Buffer.from(s.slice(3));
    return s.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) return undefined;
  return JSON.parse(body.toString('utf8'));
}

/** The bare route's answer: 400, or 204 once stored (inbox mode) or once the handler ran (a repeat skips it). */
function bareAnswer(header, body, answer) {
  const event = bareVerify(header, body);
  if (event === undefined) return answer(400);
  if (bareStore !== undefined) return bareStore(header, body).then(() => answer(204));
  const id = header('svix-id');
  if (seen.has(id)) return answer(204);
  const handled = () => {
    if (seen.size >= SEEN_LIMIT) seen.clear();
    seen.add(id);
    return answer(204);
  };
  const work = onEvent(event);
  return work === undefined ? handled() : work.then(handled);
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
  const { default: express } = await import('express');
  const app = express();
  if (withVerikit) app.use('/verikit', (await import('@verikit/express')).verikitRouter(options));
  app.post('/bare/webhook', express.raw({ type: () => true }), (req, res) =>
    bareAnswer(
      (name) => req.headers[name],
      req.body,
      (status) => res.status(status).end(),
    ),
  );
  const server = app.listen(0, '127.0.0.1', () => ready(server.address().port));
} else if (framework === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  if (withVerikit) await app.register((await import('@verikit/fastify')).verikitPlugin, { prefix: '/verikit', ...options });
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/bare/webhook', async (req, reply) =>
      bareAnswer(
        (name) => req.headers[name],
        req.body,
        (status) => reply.code(status).send(),
      ),
    );
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  ready(app.server.address().port);
} else {
  const { serve } = await import('@hono/node-server');
  const { Hono } = await import('hono');
  const app = new Hono();
  if (withVerikit) app.route('/verikit', (await import('@verikit/hono')).verikitApp(options));
  app.post('/bare/webhook', async (c) => {
    const body = Buffer.from(await c.req.arrayBuffer());
    return bareAnswer(
      (name) => c.req.header(name),
      body,
      (status) => c.body(null, status),
    );
  });
  serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => ready(info.port));
}
