import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));

/** Bundles `code` as wrangler bundles a Worker (esbuild, workerd conditions, minified): its gzip size and the packages in it. */
async function bundle(code: string): Promise<{ gzipBytes: number; inputs: string[] }> {
  const result = await build({
    stdin: { contents: code, resolveDir: pkgDir, loader: 'ts' },
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
  const [output] = Object.values(result.metafile.outputs);
  return { gzipBytes: gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array()).length, inputs: Object.keys(output?.inputs ?? {}) };
}

describe('what a Worker bundle of @verikit/core carries (the built package, as an app bundles it)', () => {
  it('a webhook-only Worker carries no zod, no client and no Node built-in, in at most 12 KB gzip', async () => {
    const { gzipBytes, inputs } = await bundle(`import { createFetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';
const handle = createFetchWebhookHandler({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', store: new MemoryIdempotencyStore(), onEvent: () => {} });
export default { fetch: (request: Request) => handle(request) };`);
    expect(inputs.filter((path) => /zod|undici|client\/client|schemas\//.test(path))).toEqual([]);
    expect(gzipBytes).toBeLessThanOrEqual(12 * 1024);
  });

  it('a Worker with the client keeps zod to the schemas it uses: none of its locales', async () => {
    const { inputs } = await bundle(`import { createClient } from '@verikit/core';
const client = createClient({ apiKey: 'k', baseUrl: 'https://api.example' });
export default { fetch: async () => Response.json(await client.kyb.getCase('b')) };`);
    expect(inputs.some((path) => path.includes('zod'))).toBe(true);
    expect(inputs.filter((path) => /zod\/.*locales\/(?!en)/.test(path))).toEqual([]);
  });
});
