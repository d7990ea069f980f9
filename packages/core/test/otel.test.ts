import * as otel from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureMetrics, type MetricsCapture, sumOf } from '../../../test-support/metrics.js';
import type * as WebBuild from '../src/index.default.js';
import * as nodeBuild from '../src/index.node.js';
import type * as OtelEntry from '../src/otel.js';
import { openTelemetry as openTelemetryFromSrc } from '../src/otel.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

// The Web build as Workers, Bun and Deno load it: the built files, where it finds no API by itself.
// (The tests that import src run with the Node policy; only the build sets the Web one.)
const dist = (path: string) => new URL(`../dist/esm/${path}`, import.meta.url).href;
const web = (await import(dist('index.default.js'))) as typeof WebBuild;
const { openTelemetry } = (await import(dist('otel.js'))) as typeof OtelEntry;

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';
const FIX = "import { openTelemetry } from '@verikit/core/otel'";

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let metrics: MetricsCapture;
beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  otel.trace.disable();
  otel.propagation.disable();
  otel.context.disable();
});
beforeEach(() => {
  exporter.reset();
  metrics = captureMetrics();
});
afterEach(() => metrics.stop());

const options = (telemetry?: unknown) =>
  ({ secret: SECRET, store: new web.MemoryIdempotencyStore(), onEvent: () => {}, logger: false as const, telemetry }) as never;
const deliver = (handle: (r: { method: string; headers: Record<string, string>; body: string }) => Promise<{ status: number }>) =>
  handle({ method: 'POST', headers: svixHeaders(BODY), body: BODY });
const delivered = async () => sumOf(await metrics.collect(), 'verikit.webhook.deliveries');

describe('the Web build (dist/esm/index.default.js)', () => {
  it('refuses the raw API with a ConfigurationError naming the fix, wherever telemetry is taken', () => {
    const attempts = [
      () => web.createWebhookHandler(options(otel)),
      () => web.createVerikitRoutes({ webhook: options(otel) }),
      () => web.createFetchWebhookHandler(options(otel)),
      () => web.createClient({ apiKey: 'k', baseUrl: 'https://api.example', telemetry: otel as never }),
    ];
    for (const attempt of attempts) {
      expect(attempt).toThrow(web.ConfigurationError);
      expect(attempt).toThrow(FIX);
      try {
        attempt();
      } catch (error) {
        expect(error).toMatchObject({ code: 'invalid_config', option: 'telemetry' });
      }
    }
  });

  it('looks for no API by itself: without the option, no span and no metric, though an SDK is registered', async () => {
    expect((await deliver(web.createWebhookHandler(options()))).status).toBe(204);
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(await delivered()).toBe(0);
  });

  it('with openTelemetry(otel): a span per delivery and its answer counted, once, through a route too', async () => {
    expect((await deliver(web.createWebhookHandler(options(openTelemetry(otel))))).status).toBe(204);
    const route = web.createVerikitRoutes({ webhook: options(openTelemetry(otel)) }).webhook;
    const answer = await route?.receive({
      method: 'POST',
      headers: svixHeaders(BODY, { id: 'msg_2' }),
      body: { kind: 'bytes', bytes: BODY },
    });
    expect(answer?.status).toBe(204);
    expect(exporter.getFinishedSpans().map((span) => [span.name, span.attributes['verikit.webhook.id']])).toEqual([
      ['verikit webhook', 'msg_1'],
      ['verikit webhook', 'msg_2'],
    ]);
    expect(await delivered()).toBe(2);
  });

  it('with openTelemetry(otel) a client is made (its spans go through the API given)', async () => {
    const client = web.createClient({ apiKey: 'k', baseUrl: 'https://api.example', telemetry: openTelemetry(otel) });
    await client.close();
  });
});

describe('openTelemetry(api)', () => {
  it('refuses what is not the OpenTelemetry API', () => {
    expect(() => openTelemetryFromSrc({} as never)).toThrow(nodeBuild.ConfigurationError);
  });

  it('on the Node build does what the raw API does, its value from either build', async () => {
    for (const telemetry of [openTelemetryFromSrc(otel), openTelemetry(otel), otel]) {
      exporter.reset();
      const handle = nodeBuild.createWebhookHandler({
        secret: SECRET,
        store: new nodeBuild.MemoryIdempotencyStore(),
        onEvent: () => {},
        logger: false,
        telemetry,
      });
      expect((await deliver(handle)).status).toBe(204);
      expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['verikit webhook']);
    }
    expect(await delivered()).toBe(3);
  });
});
