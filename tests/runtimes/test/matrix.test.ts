import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createClient } from '@verikit/core';
import { createFakeService, type FakeService, signWebhook } from '@verikit/testing';
import { build } from 'esbuild';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort, type RunningSnippet, runCommand } from '../../../test-support/readme-snippet.js';
import { VARIABLES } from '../scenario.mjs';

const dir = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => `${dir}/node_modules/.bin/${name}`;
const build_ = `${dir}/.build`;

/** How each runtime starts the scenario's app with its own server; every runtime comes from the npm registry. */
const RUNTIMES: Array<{ name: string; start: (env: Record<string, string>) => RunningSnippet; printsReady: boolean }> = [
  { name: 'Node 20', start: (env) => runCommand(`${dir}/node_modules/node20/bin/node`, ['entries/node.mjs'], dir, env), printsReady: true },
  { name: 'Node 22', start: (env) => runCommand(`${dir}/node_modules/node22/bin/node`, ['entries/node.mjs'], dir, env), printsReady: true },
  { name: 'Node 24', start: (env) => runCommand(`${dir}/node_modules/node24/bin/node`, ['entries/node.mjs'], dir, env), printsReady: true },
  { name: 'Bun', start: (env) => runCommand(bin('bun'), ['entries/bun.mjs'], dir, env), printsReady: true },
  {
    name: 'Deno (only --allow-net --allow-read: no env access)',
    start: (env) => {
      const settings = `${build_}/deno-${env.PORT}.json`;
      writeFileSync(settings, JSON.stringify(env));
      return runCommand(bin('deno'), ['run', '--no-prompt', '--allow-net=127.0.0.1', '--allow-read', 'entries/deno.mjs', settings], dir, {
        DENO_NO_UPDATE_CHECK: '1',
      });
    },
    printsReady: true,
  },
  {
    name: 'workerd',
    start: (env) => {
      const config = `${build_}/config-${env.PORT}.capnp`;
      writeFileSync(config, workerdConfig(env));
      return runCommand(bin('workerd'), ['serve', config, '--verbose'], build_, {});
    },
    printsReady: false,
  },
];

/** A workerd config serving the bundled scenario on PORT, the variables as text bindings, loopback reachable. */
function workerdConfig(env: Record<string, string>): string {
  const bindings = VARIABLES.map((name) => `(name = "${name}", text = ${JSON.stringify(env[name] ?? '')})`).join(', ');
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker), (name = "loopback", network = (allow = ["local", "private", "public"]))],
  sockets = [(name = "http", address = "127.0.0.1:${env.PORT}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-11-17",
  bindings = [${bindings}],
  globalOutbound = "loopback",
);
`;
}

let fake: FakeService;
let signed: ReturnType<typeof signWebhook>;

beforeAll(async () => {
  fake = await createFakeService({ webhooks: { retrySchedule: [0, 50, 100] } });
  const client = createClient(fake.clientOptions);
  await client.kyb.createCase({ refId: 'runtime-case' });
  await client.close();
  signed = signWebhook({
    secret: fake.credentials.webhookSecret,
    payload: { type: 'kyb.case.status_changed', data: { refId: 'runtime-case' } },
  });
  // The Worker is bundled as wrangler bundles it: esbuild with the workerd conditions.
  mkdirSync(build_, { recursive: true });
  await build({
    entryPoints: [`${dir}/entries/worker.mjs`],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    outfile: `${build_}/worker.js`,
    logLevel: 'error',
  });
});
afterAll(() => fake?.close());

describe('the Node build off Node (loaded by its file)', () => {
  it.each([
    ['Bun, where undici is a stub without dispatch', () => [bin('bun'), ['entries/node-build.mjs']] as const],
    [
      'Deno without env access, where undici cannot load',
      () => [bin('deno'), ['run', '--no-prompt', '--allow-net=127.0.0.1', '--allow-read', 'entries/node-build.mjs']] as const,
    ],
  ])('its client falls back to fetch on %s', async (_name, command) => {
    const [file, args] = command();
    const run = runCommand(file, [...args, fake.baseUrl, fake.credentials.apiKey], dir, { DENO_NO_UPDATE_CHECK: '1' });
    const code = await run.closed;
    expect(run.output()).toContain('node build: NOT_STARTED');
    expect(code).toBe(0);
  });
});

describe.each(RUNTIMES)('$name', ({ start, printsReady }) => {
  let app: RunningSnippet;
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = start({
      PORT: String(port),
      VERIKIT_API_KEY: fake.credentials.apiKey,
      VERIKIT_BASE_URL: fake.baseUrl,
      VERIKIT_WEBHOOK_SECRET: fake.credentials.webhookSecret,
      SIGNED_BODY: signed.body,
      SIGNED_HEADERS: JSON.stringify(signed.headers),
    });
    if (printsReady) await app.waitFor('listening', 30_000);
    else await vi.waitFor(async () => (await request(`${base}/`)).body.dump(), { timeout: 30_000, interval: 100 });
  });
  afterAll(async () => app?.stop());

  it('verifies, handles (204, a repeat, 400) and reads through the client, inside the runtime', async () => {
    const response = await request(`${base}/checks`);
    const body = await response.body.json();
    expect(body, app.output()).toMatchObject({
      verifiedId: signed.headers['svix-id'],
      statuses: [204, 204, 400],
      runs: 1,
      caseStatus: 'NOT_STARTED',
    });
  });

  it("serves the Hono app's webhook route over real HTTP with its own server", async () => {
    const url = `${base}/verikit/webhook`;
    const forged = await request(url, { method: 'POST', headers: { ...signed.headers, 'svix-signature': 'v1,AAAA' }, body: signed.body });
    expect(forged.statusCode).toBe(400);
    await forged.body.dump();
    fake.webhooks.addEndpoint(url);
    try {
      fake.kyb.setStatus('runtime-case', 'IN_REVIEW');
      await app.waitFor('verification update: runtime-case -> IN_REVIEW');
      fake.kyb.setStatus('runtime-case', 'NOT_STARTED');
      await fake.webhooks.settle();
      expect(fake.webhooks.attempts.filter((a) => a.endpoint === url).map((a) => a.status)).toEqual([204, 204]);
    } finally {
      fake.webhooks.removeEndpoint(url);
    }
  });

  it('deadlines fire on every request, and work that outlives its 503 is still recorded', async () => {
    const url = `${base}/deadline/webhook`;
    const post = async (delivery: ReturnType<typeof signWebhook>) => {
      const response = await request(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      await response.body.dump();
      return response.statusCode;
    };
    const secret = fake.credentials.webhookSecret;
    const fast = signWebhook({ secret, payload: { type: 'x', data: { slow: false } } });
    const slow = signWebhook({ secret, payload: { type: 'x', data: { slow: true } } });
    // A fast delivery first: on workerd its request's end once cancelled the shared deadline timer for good.
    expect(await post(fast)).toBe(204);
    expect(await post(slow)).toBe(503);
    await app.waitFor(`deadline work done: ${slow.headers['svix-id']}`, 10_000);
    // Recorded after the answer (on workerd, only if the runtime was told to wait for it): a retry is a repeat.
    await vi.waitFor(async () => expect(await post(slow)).toBe(204), { timeout: 5_000, interval: 100 });
  });
});
