import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { request } from 'undici';
import { beforeAll, describe, vi } from 'vitest';
import { runCommand } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));
const out = `${dir}/.build`;
// workerd, the runtime under Cloudflare Workers, from the npm registry (a dev dependency of this recipe).
const workerd = `${dir}/node_modules/.bin/workerd`;

// Bundled as wrangler bundles a Worker: esbuild with the workerd export conditions.
beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [`${dir}/worker.ts`],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    minify: true,
    outfile: `${out}/worker.js`,
    logLevel: 'error',
  });
});

/** A workerd config serving the bundle on `PORT`, the variables as text bindings, loopback reachable for the client. */
function config(env: Record<string, string>): string {
  const bindings = ['VERIKIT_API_KEY', 'VERIKIT_BASE_URL', 'VERIKIT_WEB_URL', 'VERIKIT_PUBLIC_KEY', 'VERIKIT_WEBHOOK_SECRET']
    .map((name) => `(name = "${name}", text = ${JSON.stringify(env[name] ?? '')})`)
    .join(', ');
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

/** workerd prints nothing once it listens: ready when the Worker answers. */
const answers = (port: number) =>
  vi.waitFor(
    async () => {
      const response = await request(`http://127.0.0.1:${port}/`);
      await response.body.dump();
    },
    { timeout: 15_000, interval: 50 },
  );

describe('recipe: a Cloudflare Worker (workerd)', () => {
  readmeServerSuite(
    (env) => {
      const file = `${out}/config-${env.PORT}.capnp`;
      writeFileSync(file, config(env));
      return runCommand(workerd, ['serve', file, '--verbose'], out, {});
    },
    { invitePath: null, ready: answers },
  );
});
