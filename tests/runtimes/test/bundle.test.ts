import { describe, expect, it } from 'vitest';
import { bundleSize, WORKERS } from '../../../bench/sizes.mjs';

// The same Workers `pnpm bench` prints, bundled as wrangler bundles them (esbuild, workerd conditions, minified).
const worker = (prefix: string) => {
  const found = WORKERS.find((w) => w.name.startsWith(prefix));
  if (found === undefined) throw new Error(`no Worker named ${prefix}`);
  return found.code;
};

describe('what a Worker bundle of verikit carries', () => {
  // Neither the client (zod, undici) nor the invite routes: those come with createClient, which these Workers never call.
  // client/seam.js is how a handler reaches what a client carries (ctx.fetchResult(), the invite routes).
  const webhookOnly = (inputs: string[]) => inputs.filter((path) => /zod|undici|client\/(?!seam\.js$)|schemas\/|invite\//.test(path));
  // Nor the OpenTelemetry glue: it comes with openTelemetry(api) from @verikit/core/otel, which these Workers do not pass.
  const telemetryGlue = (inputs: string[]) => inputs.filter((path) => /core\/dist\/esm\/(telemetry\/(?!seam\.js$)|otel\.js$)/.test(path));

  it('a webhook-only Worker carries no zod, no client, no undici and no invite code, in at most 12 KB gzip', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: createFetchWebhookHandler'));
    expect(webhookOnly(inputs)).toEqual([]);
    expect(telemetryGlue(inputs)).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(12 * 1024);
  });

  it('a Hono Worker (hono/tiny) mounting only the webhook route carries no zod, no client, no undici and no invite code, in at most 15 KB gzip with Hono', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: hono/tiny + verikitApp, webhook route only'));
    expect(inputs.some((path) => path.includes('node_modules/hono/'))).toBe(true);
    expect(webhookOnly(inputs)).toEqual([]);
    expect(telemetryGlue(inputs)).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(15 * 1024);
  });

  it("a Hono Worker on the default preset mounting only the webhook route carries no router but the host's, and no client or invite code, in at most 15 KB gzip with Hono", async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: Hono (default preset) + verikitApp, webhook route only'));
    expect(inputs.some((path) => path.includes('hono/dist/router/smart-router/'))).toBe(true);
    // The sub-app's routes move into the host's router when mounted: hono/tiny's router would be a second one.
    expect(inputs.filter((path) => /hono\/dist\/(preset\/|router\/(pattern|linear)-router\/)/.test(path))).toEqual([]);
    expect(webhookOnly(inputs)).toEqual([]);
    expect(telemetryGlue(inputs)).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(15 * 1024);
  });

  it('a Hono Worker with the client and invite routes stays within 40 KB gzip, with zod/mini and no locale', async () => {
    const { gzip, inputs } = await bundleSize(worker('verikit: Hono + verikitApp with createClient'));
    expect(inputs.some((path) => path.includes('zod'))).toBe(true);
    expect(inputs.filter((path) => /zod\/.*(locales|classic)\//.test(path))).toEqual([]);
    expect(gzip).toBeLessThanOrEqual(40 * 1024);
  });
});
