import * as otel from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, createClient, createWebhookHandler, MemoryIdempotencyStore } from '../src/index.node.js';
import { detailsPayload } from './helpers/fixtures.js';
import { failingOnBad, scriptedInbox } from './helpers/scripted-inbox.js';
import { json, startServer, type TestServer } from './helpers/server.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const API_KEY = 'sk_live_SECRET_trace_leak_check';
const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1","note":"private body text"}}';
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE_ID}-b7ad6b7169203331-01`;

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  // The SDK as an application would register it: global tracer provider, W3C propagator, async context.
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
  otel.trace.disable();
  otel.propagation.disable();
  otel.context.disable();
});
beforeEach(() => exporter.reset());

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
/** Everything the spans carry, for leak checks. */
const everything = () =>
  JSON.stringify(spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));

describe('client spans', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('one CLIENT span per call, with method, route template, status, attempts and request id; never the key', async () => {
    server.handle(json(503, { error: 'busy' }), json(200, detailsPayload(), { 'x-request-id': 'req-77' }));
    // No telemetry option: @opentelemetry/api is installed here, so verikit finds it by itself.
    const client = createClient({ apiKey: API_KEY, baseUrl: server.url, backoff: { baseMs: 1, maxMs: 2 }, logger: false });
    await client.kyb.getCase('biz-secret-ref');
    await client.close();
    expect(spans()).toHaveLength(1);
    const [span] = spans();
    expect(span?.name).toBe('verikit GET /kyb/case/{refId}/details');
    expect(span?.kind).toBe(otel.SpanKind.CLIENT);
    expect(span?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.template': '/kyb/case/{refId}/details',
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'verikit.attempts': 2,
      'verikit.request_id': 'req-77',
    });
    expect(span?.status.code).toBe(otel.SpanStatusCode.UNSET);
    expect(span?.instrumentationScope.name).toBe('@verikit/core');
    expect(everything()).not.toContain(API_KEY);
    expect(everything()).not.toContain('biz-secret-ref');
  });

  it('a failed call is an ERROR span with the error code, and a child of the active span', async () => {
    server.handle(json(401, { error: 'invalid api key' }));
    const client = createClient({ apiKey: API_KEY, baseUrl: server.url, logger: false, telemetry: otel });
    const tracer = otel.trace.getTracer('app');
    await tracer.startActiveSpan('app request', async (parent) => {
      await expect(client.kyb.createCase({ refId: 'biz-2' })).rejects.toThrow();
      parent.end();
    });
    await client.close();
    const call = spans().find((s) => s.name === 'verikit POST /kyb/case');
    const parent = spans().find((s) => s.name === 'app request');
    expect(call?.status.code).toBe(otel.SpanStatusCode.ERROR);
    expect(call?.attributes['error.type']).toBe('authentication');
    expect(call?.attributes['http.response.status_code']).toBe(401);
    expect(call?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    expect(everything()).not.toContain(API_KEY);
  });

  it('telemetry: false makes no span', async () => {
    server.handle(json(200, detailsPayload()));
    const client = createClient({ apiKey: API_KEY, baseUrl: server.url, telemetry: false });
    await client.kyb.getCase('biz-1');
    await client.close();
    expect(spans()).toHaveLength(0);
  });

  it('a telemetry option that is not the API is refused at creation', () => {
    expect(() => createClient({ apiKey: API_KEY, baseUrl: server.url, telemetry: {} as never })).toThrow(ConfigurationError);
  });
});

describe('webhook delivery spans', () => {
  const handler = (onEvent: () => unknown = () => {}) =>
    createWebhookHandler({ secret: SECRET, store: new MemoryIdempotencyStore(), onEvent, logger: false });

  it('a SERVER span per delivery, child of its traceparent, with the svix id and outcome', async () => {
    const handle = handler();
    const headers = { ...svixHeaders(BODY, { id: 'msg_traced' }), traceparent: TRACEPARENT };
    expect((await handle({ method: 'POST', headers, body: BODY })).status).toBe(204);
    expect((await handle({ method: 'POST', headers, body: BODY })).status).toBe(204);
    const [first, second] = spans();
    expect(first?.name).toBe('verikit webhook');
    expect(first?.kind).toBe(otel.SpanKind.SERVER);
    expect(first?.spanContext().traceId).toBe(TRACE_ID);
    expect(first?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(first?.attributes).toEqual({ 'verikit.webhook.id': 'msg_traced', 'http.response.status_code': 204 });
    expect(second?.attributes).toMatchObject({ 'verikit.webhook.id': 'msg_traced', 'verikit.outcome': 'duplicate' });
    expect(everything()).not.toContain('private body text');
  });

  it('refused and failed deliveries say why; a failing onEvent marks the span as an error', async () => {
    const handle = handler(() => {
      throw new Error('downstream refused');
    });
    const bad = { ...svixHeaders(BODY, { id: 'msg_bad' }), 'svix-signature': 'v1,AAAA' };
    expect((await handle({ method: 'POST', headers: bad, body: BODY })).status).toBe(400);
    expect((await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_fail' }), body: BODY })).status).toBe(500);
    const [refused, failed] = spans();
    expect(refused?.attributes).toMatchObject({ 'verikit.outcome': 'refused', 'verikit.reason': 'invalid_signature' });
    expect(refused?.parentSpanContext).toBeUndefined();
    expect(failed?.attributes).toMatchObject({
      'verikit.webhook.id': 'msg_fail',
      'verikit.outcome': 'failed',
      'verikit.reason': 'handler_failed',
      'http.response.status_code': 500,
    });
    expect(failed?.status).toEqual({ code: otel.SpanStatusCode.ERROR, message: 'handler_failed' });
    expect(refused?.status.code).toBe(otel.SpanStatusCode.UNSET);
  });

  it('inbox mode says whether the event was accepted or a duplicate', async () => {
    const seen = new Set<string>();
    const handle = createWebhookHandler({
      secret: SECRET,
      inbox: {
        accept: async ({ id }) => {
          if (seen.has(id)) return 'duplicate';
          seen.add(id);
          return 'accepted';
        },
      },
    });
    const headers = svixHeaders(BODY, { id: 'msg_inbox' });
    await handle({ method: 'POST', headers, body: BODY });
    await handle({ method: 'POST', headers, body: BODY });
    expect(spans().map((s) => s.attributes['verikit.outcome'])).toEqual(['accepted', 'duplicate']);
  });
});

describe('inbox worker spans', () => {
  it('a CONSUMER span per run: done, or retried with its reason, or dead-lettered', async () => {
    const { engine, queue, event } = scriptedInbox();
    queue.push(event('msg_ok', 1, BODY), event('msg_bad', 1, BODY), event('msg_bad', 2, BODY));
    const worker = failingOnBad(engine);
    worker.start();
    await vi.waitFor(() => expect(spans()).toHaveLength(3));
    await worker.stop();
    expect(spans().every((s) => s.name === 'verikit inbox event' && s.kind === otel.SpanKind.CONSUMER)).toBe(true);
    expect(
      spans().map((s) => [s.attributes['verikit.webhook.id'], s.attributes['verikit.attempt'], s.attributes['verikit.outcome']]),
    ).toEqual([
      ['msg_ok', 1, 'done'],
      ['msg_bad', 1, 'retry'],
      ['msg_bad', 2, 'dead_lettered'],
    ]);
    expect(spans()[1]?.attributes['verikit.reason']).toBe('invalid_config');
    expect(spans()[1]?.status.code).toBe(otel.SpanStatusCode.ERROR);
    expect(everything()).not.toContain('private body text');
  });
});
