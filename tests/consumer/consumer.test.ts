import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
// `pnpm test` puts pnpm's store on NODE_PATH, where every package of the monorepo resolves; a user's
// project has no such path, and the scratch project's processes must not see one either.
delete process.env.NODE_PATH;
const root = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['core', 'testing', 'express', 'fastify', 'hono', 'postgres', 'redis', 'cli'];

// How users meet the packages: packed tarballs installed into a fresh project. Dual-package bugs show here.
describe('packed packages in a scratch project', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verikit-consumer-'));
    for (const name of PACKAGES) await run('pnpm', ['pack', '--pack-destination', dir], { cwd: join(root, 'packages', name) });
    const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
    expect(tarballs).toHaveLength(PACKAGES.length);
    const dependency = (name: string) => `file:./${tarballs.find((t) => t.startsWith(`verikit-${name}-`))}`;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        dependencies: {
          ...Object.fromEntries(PACKAGES.map((name) => [`@verikit/${name}`, dependency(name)])),
          express: '^5.1.0',
          fastify: '^5.4.0',
          hono: '^4.9.0',
          ioredis: '^5.4.0',
          bullmq: '^5.60.0',
        },
        devDependencies: { typescript: '~5.9.0', '@types/node': '^20.19.0', '@types/express': '^5.0.3' },
      }),
    );
    await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: dir, timeout: 240_000 });
    writeFileSync(
      join(dir, 'usage.ts'),
      `import { createClient, createInboxWorker, createWebhookHandler, MemoryIdempotencyStore, type KybCaseDetails, type WebhookContext } from '@verikit/core';
import { openTelemetry } from '@verikit/core/otel';
import { createFakeService, signWebhook } from '@verikit/testing';
import { verikitRouter } from '@verikit/express';
import { verikitPlugin } from '@verikit/fastify';
import { verikitApp } from '@verikit/hono';
import { createPostgresInbox, createPostgresStore, type Queryable } from '@verikit/postgres';
import { createRedisInbox, createRedisStore } from '@verikit/redis';
import { ExitCode, parseEncryptionKeys, runVerikit } from '@verikit/cli';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { Redis } from 'ioredis';

const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' });
const store = new MemoryIdempotencyStore();
const onEvent = async (ctx: WebhookContext): Promise<void> => {
  const fetched = await ctx.fetchResult();
  if (fetched.kind === 'kyb') {
    const details: KybCaseDetails = fetched.result;
    void details.steps;
  }
};
createWebhookHandler({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', store, onEvent });
express().use('/verikit', verikitRouter({ client, invite: { kyb: { resolveBusiness: (req) => (req.get('x-id') ? { refId: req.get('x-id') as string } : null) } } }));
void Fastify().register(verikitPlugin, { prefix: '/v', client, webhook: { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', store, onEvent } });
new Hono().route('/v', verikitApp({ client, invite: { kyc: { resolveUser: (c) => ({ refId: c.req.header('x-id') ?? 'anon' }) } } }));
const db: Queryable = { query: async () => ({ rows: [] }) };
// Inbox mode: every adapter takes inbox where it takes store, and the worker drains it.
const inbox = { accept: async () => 'accepted' as const };
express().use('/inbox', verikitRouter({ webhook: { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', inbox } }));
void Fastify().register(verikitPlugin, { prefix: '/inbox', webhook: { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', inbox } });
new Hono().route('/inbox', verikitApp({ webhook: { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', inbox } }));
void createInboxWorker;
void createPostgresInbox;
createWebhookHandler({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', store: createPostgresStore({ db, schema: 'verikit' }), onEvent });
// On Redis: the store inline, the BullMQ inbox with ctx.sql typed as a RedisTransaction.
const redis = new Redis({ lazyConnect: true });
createWebhookHandler({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', store: createRedisStore({ redis }), onEvent });
createInboxWorker({ inbox: createRedisInbox({ redis }), onEvent: async (ctx) => ctx.sql.call('HSET', 'results', ctx.id, ctx.attempt) });
// The ops CLI's programmatic side: its exit codes and the keys variable's reader.
void runVerikit(['inbox', 'stats', '--json'], { env: {} }).then((code: number) => code === ExitCode.notFound);
void parseEncryptionKeys;
void createFakeService;
// OpenTelemetry through its own entry: its value is what every telemetry option takes (the API is not installed here).
void ((otel: Parameters<typeof openTelemetry>[0]) => createWebhookHandler({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', store, onEvent, telemetry: openTelemetry(otel) }));
void signWebhook({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', payload: {} }).headers['svix-id'];
`,
    );
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['node16', { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ])('type-checks with moduleResolution %s', async (name, options) => {
    writeFileSync(
      join(dir, `tsconfig.${name}.json`),
      JSON.stringify({
        compilerOptions: { ...options, target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        files: ['usage.ts'],
      }),
    );
    const outcome = await run(join(dir, 'node_modules/.bin/tsc'), ['-p', `tsconfig.${name}.json`], { cwd: dir }).then(
      () => 'no type errors',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(outcome).toBe('no type errors');
  });

  it('every package loads from ESM and from CommonJS', async () => {
    const names = PACKAGES.map((p) => `@verikit/${p}`);
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `for (const n of ${JSON.stringify(names)}) { const m = await import(n); console.log(n, Object.keys(m).length > 0); }`,
      ],
      { cwd: dir },
    );
    const cjs = await run(
      process.execPath,
      ['-e', `for (const n of ${JSON.stringify(names)}) console.log(n, Object.keys(require(n)).length > 0)`],
      { cwd: dir },
    );
    for (const output of [esm.stdout, cjs.stdout]) expect(output.trim().split('\n')).toEqual(names.map((n) => `${n} true`));
  });

  it('@verikit/core/otel loads from ESM and from CommonJS', async () => {
    const esm = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@verikit/core/otel'); console.log(typeof m.openTelemetry)"],
      { cwd: dir },
    );
    const cjs = await run(process.execPath, ['-e', "console.log(typeof require('@verikit/core/otel').openTelemetry)"], { cwd: dir });
    expect([esm.stdout, cjs.stdout]).toEqual(['function\n', 'function\n']);
  });

  it('the verikit bin runs from the installed tarball: names its engines, and says what to install for one that is missing (pg here)', async () => {
    const bin = join(dir, 'node_modules/.bin/verikit');
    const { stdout } = await run(bin, ['--version'], { cwd: dir });
    expect(stdout).toBe('@verikit/cli 0.1.0\n@verikit/postgres 0.1.0\n@verikit/redis 0.1.0\n');
    const missing = await run(bin, ['inbox', 'stats', '--url', 'postgres://127.0.0.1:1/app'], { cwd: dir }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(missing.code).toBe(4);
    expect(missing.stderr).toBe(
      'verikit: a PostgreSQL URL needs @verikit/postgres, pg installed beside @verikit/cli (pg is missing): npm install @verikit/postgres pg, at the versions your app runs\n',
    );
  });

  it('the client works where its optional peers are not installed (undici: fetch; @opentelemetry/api: no spans)', async () => {
    const script = `const { createFakeService } = require('@verikit/testing'); const { createClient } = require('@verikit/core');
const has = (name) => { try { require.resolve(name); return 'installed'; } catch { return 'absent'; } };
const otel = has('@opentelemetry/api') + ' ' + has('undici');
(async () => { const fake = await createFakeService(); const c = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl });
const r = await c.kyb.createCase({ refId: 'consumer' }); await c.kyb.getCase('consumer'); console.log(otel, r.kybCase.status); await c.close(); await fake.close(); })();`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: dir });
    // Neither is pulled by installing verikit: an edge install carries no undici.
    expect(stdout.trim()).toBe('absent absent NOT_STARTED');
  });
});
