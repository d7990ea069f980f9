import type { OpenTelemetryInstrumentation } from './seam.js';

/** The part of an OpenTelemetry span verikit calls. */
export interface OtelSpan {
  isRecording(): boolean;
  setAttribute(key: string, value: string | number): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error): unknown;
  end(): void;
}

/** Attributes of a measurement verikit takes: a few bounded values, never an id. */
export type MetricAttributes = Record<string, string | number>;

/** How verikit describes an instrument (`advice` is read by API 1.7 and later). */
export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** An observable instrument, as the meter hands it back: only passed to `observe`. */
export type OtelObservable = object;

/** What a batch callback is given at each collection. */
export interface OtelBatchResult {
  observe(observable: OtelObservable, value: number, attributes?: MetricAttributes): void;
}

/** A callback run at each collection (a scrape): observes every gauge it was registered with. */
export type OtelBatchCallback = (result: OtelBatchResult) => void | Promise<void>;

/** The part of an OpenTelemetry meter verikit calls. */
export interface OtelMeter {
  createCounter(name: string, options?: OtelInstrumentOptions): { add(value: number, attributes?: MetricAttributes): void };
  createHistogram(name: string, options?: OtelInstrumentOptions): { record(value: number, attributes?: MetricAttributes): void };
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservable;
  addBatchObservableCallback(callback: OtelBatchCallback, observables: OtelObservable[]): void;
  removeBatchObservableCallback(callback: OtelBatchCallback, observables: OtelObservable[]): void;
}

/** The global meter provider, as the metrics API hands it out. */
export interface OtelMeterProvider {
  getMeter(name: string, version?: string): OtelMeter;
}

/**
 * The part of `@opentelemetry/api` verikit calls: `import * as otel from '@opentelemetry/api'`
 * fits it. Declared here so the package's types never require the optional peer.
 */
export interface OpenTelemetryApi {
  trace: {
    getTracer(
      name: string,
      version?: string,
    ): {
      startSpan(name: string, options: { kind: number }, context: unknown): OtelSpan;
    };
    setSpan(context: unknown, span: OtelSpan): unknown;
    /**
     * The global tracer provider. The API's own hands out an SDK's tracer through
     * `getDelegateTracer` once an SDK is registered, and undefined until then.
     */
    getTracerProvider?(): object;
  };
  context: { active(): unknown; with<F>(context: unknown, fn: () => F): F };
  propagation: {
    extract(context: unknown, carrier: Record<string, string>): unknown;
  };
  SpanKind: { SERVER: number; CLIENT: number; CONSUMER: number };
  SpanStatusCode: { ERROR: number };
  /** Metrics (API 1.3 and later): without it, verikit measures nothing. */
  metrics?: { getMeterProvider(): OtelMeterProvider };
  /** The meter a provider hands out when nothing records: verikit then skips its measuring. */
  createNoopMeter?(): unknown;
}

/**
 * The `telemetry` option: `openTelemetry(otel)` from `@verikit/core/otel`, or `false` for none. On
 * Node the raw API is taken too, and found by itself when installed; elsewhere only `openTelemetry(otel)` is.
 */
export type TelemetryOption = OpenTelemetryInstrumentation | OpenTelemetryApi | false | undefined;
