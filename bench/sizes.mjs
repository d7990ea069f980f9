// Bundle sizes, as a Worker ships them: esbuild (wrangler's bundler) with the workerd export
// conditions, minified, then gzip. verikit's figures beside the svix and standardwebhooks verifiers.

import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** What each Worker does; `budget` is its bar in KB gzip (issues 12 and 23). */
export const WORKERS = [
  {
    name: 'verikit: createFetchWebhookHandler (webhook route only)',
    code: `import { createFetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';
const handle = createFetchWebhookHandler({ secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} });
export default { fetch: (request) => handle(request) };`,
  },
  {
    name: 'verikit: hono/tiny + verikitApp, webhook route only',
    budget: 15,
    code: `import { Hono } from 'hono/tiny'; import { MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
export default new Hono().route('/verikit', verikitApp({ webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} } }));`,
  },
  {
    name: 'verikit: Hono (default preset) + verikitApp, webhook route only',
    budget: 15,
    code: `import { Hono } from 'hono'; import { MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
export default new Hono().route('/verikit', verikitApp({ webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: () => {} } }));`,
  },
  {
    name: 'Hono (default preset) alone, one route',
    code: `import { Hono } from 'hono'; export default new Hono().post('/webhook', (c) => c.body(null, 204));`,
  },
  {
    name: 'hono/tiny alone, one route',
    code: `import { Hono } from 'hono/tiny'; export default new Hono().post('/webhook', (c) => c.body(null, 204));`,
  },
  {
    name: 'verikit: Hono + verikitApp with createClient and invite routes',
    budget: 40,
    code: `import { Hono } from 'hono'; import { createClient, MemoryIdempotencyStore } from '@verikit/core'; import { verikitApp } from '@verikit/hono';
const client = createClient({ apiKey: 'k', baseUrl: 'https://api.example', webUrl: 'https://verify.example', publicKey: 'pk' });
export default new Hono().route('/verikit', verikitApp({ client, webhook: { secret: '${SECRET}', store: new MemoryIdempotencyStore(), onEvent: async (ctx) => { await ctx.fetchResult(); } }, invite: { kyb: { resolveBusiness: () => ({ refId: 'b' }) }, kyc: { resolveUser: () => ({ refId: 'u' }) } } }));`,
  },
  {
    name: 'svix: Webhook.verify',
    code: `import { Webhook } from 'svix';
export default { fetch: async (request) => { new Webhook('${SECRET}').verify(await request.text(), Object.fromEntries(request.headers)); return new Response(null, { status: 204 }); } };`,
  },
  {
    name: 'standardwebhooks: Webhook.verify',
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

/** Prints each Worker's minified and gzip size, with the budget where there is one; `verbose` adds verikit's files in each budgeted Worker. */
export async function benchSizes({ verbose = false } = {}) {
  console.log('sizes: a Worker bundled as wrangler does (esbuild, workerd conditions, minified), in KB:');
  for (const worker of WORKERS) {
    const { min, gzip, inputBytes } = await bundleSize(worker.code);
    const budget =
      worker.budget === undefined ? '' : `  (budget <= ${worker.budget} KB gzip: ${gzip / 1024 <= worker.budget ? 'met' : 'NOT met'})`;
    console.log(
      `  ${worker.name.padEnd(66)} ${(min / 1024).toFixed(1).padStart(6)} min  ${(gzip / 1024).toFixed(1).padStart(5)} gzip${budget}`,
    );
    if (verbose && worker.budget !== undefined) {
      const ours = Object.entries(inputBytes).filter(([path]) => path.startsWith('packages/'));
      for (const [path, bytes] of ours.sort((a, b) => b[1] - a[1])) console.log(`      ${String(bytes).padStart(6)} B min  ${path}`);
    }
  }
}
