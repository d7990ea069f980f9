import * as otel from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, describe, expect, it } from 'vitest';
import { createWebhookHandler, MemoryIdempotencyStore, type OpenTelemetryApi } from '../src/index.node.js';
import { loadAutoApi, resolveTracing, TRACER_SCOPE } from '../src/telemetry/tracing.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const delivery = (id: string) => ({ method: 'POST', headers: { ...svixHeaders(BODY, { id }), traceparent: TRACEPARENT }, body: BODY });

afterAll(() => {
  otel.trace.disable();
  otel.context.disable();
  otel.propagation.disable();
});

describe('webhook spans while no SDK is registered', () => {
  it('the API alone makes no span at all; an SDK registered later records the next delivery', async () => {
    let started = 0;
    // The real API, its startSpan counted: without an SDK every span it makes is a no-op.
    const counted: OpenTelemetryApi = {
      ...otel,
      trace: {
        ...otel.trace,
        getTracerProvider: () => otel.trace.getTracerProvider(),
        setSpan: (context, span) => otel.trace.setSpan(context as otel.Context, span as otel.Span),
        getTracer: (name, version) => {
          const tracer = otel.trace.getTracer(name, version);
          return {
            startSpan: (spanName, options, context) => {
              started++;
              return tracer.startSpan(spanName, options, context as otel.Context);
            },
          };
        },
      },
    } as OpenTelemetryApi;
    const handle = createWebhookHandler({ secret: SECRET, store: new MemoryIdempotencyStore(), onEvent: () => {}, telemetry: counted });
    expect((await handle(delivery('msg_before'))).status).toBe(204);
    expect(started).toBe(0);

    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    try {
      expect((await handle(delivery('msg_after'))).status).toBe(204);
      expect(started).toBe(1);
      const [span] = exporter.getFinishedSpans();
      expect(span?.name).toBe('verikit webhook');
      expect(span?.attributes['verikit.webhook.id']).toBe('msg_after');
      expect(span?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    } finally {
      await provider.shutdown();
    }
  });

  it('a provider that cannot say whether it records (not the API global one) is taken to record', async () => {
    let started = 0;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      onEvent: () => {},
      telemetry: {
        ...otel,
        trace: {
          getTracerProvider: () => ({}),
          setSpan: () => ({}),
          getTracer: () => ({
            startSpan: () => {
              started++;
              return { isRecording: () => false, end: () => {} } as unknown as otel.Span;
            },
          }),
        },
      } as unknown as OpenTelemetryApi,
    });
    expect((await handle(delivery('msg_other'))).status).toBe(204);
    expect(started).toBe(1);
  });
});

describe('tracing.enabled() while no SDK is registered', () => {
  it('is false for the API given or found by itself, and true from the moment an SDK registers', async () => {
    // The tests above leave theirs registered.
    otel.trace.disable();
    const given = resolveTracing(otel as unknown as OpenTelemetryApi, TRACER_SCOPE, 'test');
    const found = resolveTracing(undefined, TRACER_SCOPE, 'test');
    await loadAutoApi();
    expect([given.enabled(), found.enabled()]).toEqual([false, false]);
    const provider = new NodeTracerProvider();
    provider.register();
    try {
      expect([given.enabled(), found.enabled()]).toEqual([true, true]);
    } finally {
      await provider.shutdown();
      otel.trace.disable();
    }
    expect([given.enabled(), found.enabled()]).toEqual([false, false]);
  });
});
