import { describe, expect, it } from 'vitest';
import { bundleSize, WORKERS } from '../../../bench/sizes.mjs';

// The same Workers `pnpm bench` prints, bundled as wrangler bundles them (esbuild, workerd conditions, minified).
const worker = (prefix: string) => {
  const found = WORKERS.find((w) => w.name.startsWith(prefix));
  if (found === undefined) throw new Error(`no Worker named ${prefix}`);
  return found.code;
};

describe('what a Worker bundle of verikit carries', () => {
  it('a webhook-only Worker carries no zod, no client and no undici, in at most 12 KB gzip', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: createFetchWebhookHandler'));
    expect(inputs.filter((path) => /zod|undici|client\/|schemas\//.test(path))).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(12 * 1024);
  });

  it('a Hono Worker (hono/tiny) mounting only the webhook route carries no zod, no client and no undici, in at most 15 KB gzip with Hono', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: hono/tiny + verikitApp, webhook route only'));
    expect(inputs.some((path) => path.includes('node_modules/hono/'))).toBe(true);
    expect(inputs.filter((path) => /zod|undici|client\/|schemas\//.test(path))).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(15 * 1024);
  });

  it('a Hono Worker with the client and invite routes stays within 40 KB gzip, with zod/mini and no locale', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: Hono + verikitApp with createClient'));
    expect(inputs.some((path) => path.includes('zod'))).toBe(true);
    expect(inputs.filter((path) => /zod\/.*(locales|classic)\//.test(path))).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(40 * 1024);
  });
});
