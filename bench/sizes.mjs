// Bundle sizes, as a Worker ships them: esbuild (wrangler's bundler) with the workerd export
// conditions, minified, then gzip. verikit's figures beside the svix and standardwebhooks verifiers.

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { report } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** What each Worker does; `key` names its figure in the JSON report; `budget` is its bar in KB gzip (issues 12 and 23). */
export const WORKERS = [
  {
    name: 'verikit: createFetchWebhookHandler (webhook route only)',
    key: 'fetch-handler',
    code: `import { createFetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';
const handle = createFetchWebhookHandler({ secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} });
export default { fetch: (request) => handle(request) };`,
  },
  {
    name: 'verikit: hono/tiny + verikitApp, webhook route only',
    key: 'hono-tiny-webhook',
    budget: 15,
    code: `import { Hono } from 'hono/tiny'; import { MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
export default new Hono().route('/verikit', verikitApp({ webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} } }));`,
  },
  {
    name: 'verikit: Hono (default preset) + verikitApp, webhook route only',
    key: 'hono-default-webhook',
    budget: 15,
    code: `import { Hono } from 'hono'; import { MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
export default new Hono().route('/verikit', verikitApp({ webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} } }));`,
  },
  {
    name: 'Hono (default preset) alone, one route',
    key: 'hono-default-alone',
    code: `import { Hono } from 'hono'; export default new Hono().post('/webhook', (c) => c.body(null, 204));`,
  },
  {
    name: 'hono/tiny alone, one route',
    key: 'hono-tiny-alone',
    code: `import { Hono } from 'hono/tiny'; export default new Hono().post('/webhook', (c) => c.body(null, 204));`,
  },
  {
    name: 'verikit: Hono + verikitApp with createClient and invite routes',
    key: 'hono-client-invites',
    budget: 40,
    code: `import { Hono } from 'hono'; import { createClient, MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
const client = createClient({ apiKey: 'k', baseUrl: 'https://api.example', webUrl: 'https://verify.example', publicKey: 'pk' });
export default new Hono().route('/verikit', verikitApp({ client, webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: async (ctx) => { await ctx.fetchResult(); } }, invite: { kyb: { resolveBusiness: () => ({ refId: 'b' }) }, kyc: { resolveUser: () => ({ refId: 'u' }) } } }));`,
  },
  {
    name: 'svix: Webhook.verify',
    key: 'svix',
    code: `import { Webhook } from 'svix';
export default { fetch: async (request) => { new Webhook('${SECRET}').verify(await request.text(), Object.fromEntries(request.headers)); return new Response(null, { status: 204 }); } };`,
  },
  {
    name: 'standardwebhooks: Webhook.verify',
    key: 'standardwebhooks',
    code: `import { Webhook } from 'standardwebhooks';
export default { fetch: async (request) => { new Webhook('${SECRET}'.slice(6)).verify(await request.text(), Object.fromEntries(request.headers)); return new Response(null, { status: 204 }); } };`,
  },
];

/** A Worker's size as wrangler would ship it: minified and gzip bytes, and the files bundled in. */
export async function bundleSize(code) {
  const result = await build({
    stdin: { contents: code, resolveDir: root, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const bytes = result.outputFiles[0].contents;
  const bundled = Object.values(result.metafile.outputs)[0].inputs;
  const inputs = Object.keys(bundled);
  // Minified bytes each file leaves in the output (before gzip): where to look when a Worker grows.
  const inputBytes = Object.fromEntries(Object.entries(bundled).map(([path, { bytesInOutput }]) => [path, bytesInOutput]));
  return { min: bytes.length, gzip: gzipSync(bytes).length, inputs, inputBytes };
}

/** Reports each Worker's gzip size (its minified size in the label), beside its budget where it has one; `verbose` adds verikit's files in each budgeted Worker. */
export async function benchSizes({ verbose = false } = {}) {
  console.log('sizes: a Worker bundled as wrangler does (esbuild, workerd conditions, minified), gzip:');
  for (const worker of WORKERS) {
    const { min, gzip, inputBytes } = await bundleSize(worker.code);
    report({
      name: `sizes/${worker.key}/gzip`,
      label: `${worker.name.padEnd(66)} ${(min / 1024).toFixed(1).padStart(6)} KB min`,
      value: gzip / 1024,
      unit: 'KB',
      bar: worker.budget === undefined ? undefined : { max: worker.budget },
    });
    if (verbose && worker.budget !== undefined) {
      const ours = Object.entries(inputBytes).filter(([path]) => path.startsWith('packages/'));
      for (const [path, bytes] of ours.sort((a, b) => b[1] - a[1])) console.log(`      ${String(bytes).padStart(6)} B min  ${path}`);
    }
  }
}
