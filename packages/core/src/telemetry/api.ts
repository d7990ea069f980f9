import { ConfigurationError } from '../errors.js';

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

/** The `telemetry` option: the OpenTelemetry API (found by itself when installed), or `false` for none. */
export type TelemetryOption = OpenTelemetryApi | false | undefined;

// A variable specifier, so bundlers leave it to the runtime: where the package is not installed
// (or not importable, as in a Worker) the import fails once and telemetry stays off.
const API_MODULE = '@opentelemetry/api';
let autoApi: OpenTelemetryApi | null | undefined;
let autoLoad: Promise<OpenTelemetryApi | null> | undefined;

function looksLikeApi(value: unknown): value is OpenTelemetryApi {
  const api = value as Partial<OpenTelemetryApi> | null;
  return (
    typeof api?.trace?.getTracer === 'function' &&
    typeof api.trace.setSpan === 'function' &&
    typeof api.context?.with === 'function' &&
    typeof api.propagation?.extract === 'function' &&
    api.SpanKind !== undefined
  );
}

/** `@opentelemetry/api` when this process can import it, else null; imported once. */
export function loadAutoApi(): Promise<OpenTelemetryApi | null> {
  autoLoad ??= import(/* webpackIgnore: true */ /* @vite-ignore */ API_MODULE).then(
    (module: unknown) => {
      const candidate = looksLikeApi(module) ? module : (module as { default?: unknown }).default;
      autoApi = looksLikeApi(candidate) ? candidate : null;
      return autoApi;
    },
    () => {
      autoApi = null;
      return null;
    },
  );
  return autoLoad;
}

/** The imported API: `undefined` while the import is under way (or not started), `null` where it is not installed. */
export const importedApi = (): OpenTelemetryApi | null | undefined => autoApi;

/** The `telemetry` option given as the API, checked: anything else is a ConfigurationError at creation. */
export function givenApi(option: OpenTelemetryApi): OpenTelemetryApi {
  if (!looksLikeApi(option)) {
    throw new ConfigurationError(
      'telemetry',
      "telemetry must be the OpenTelemetry API (import * as otel from '@opentelemetry/api') or false",
    );
  }
  return option;
}
