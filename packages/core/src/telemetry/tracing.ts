import { ConfigurationError } from '../errors.js';
import { type HeaderSource, rawHeader } from '../util/headers.js';
import type { OpenTelemetryApi, TelemetryOption } from './api.js';
import { isInstrumentation, type OpenTelemetryInstrumentation, webObserver } from './seam.js';

export type { OpenTelemetryApi, TelemetryOption } from './api.js';

/** A span attribute value verikit sets. */
export type SpanAttributes = Record<string, string | number | undefined>;

/** What a traced piece of work may say about itself while it runs. */
export interface SpanRecorder {
  /** Adds attributes (undefined values are left out). */
  set(attributes: SpanAttributes): void;
  /** Marks the span failed (with `error` recorded when there is one), without ending it. */
  fail(error: unknown, reason?: string): void;
}

/** Span kinds verikit uses. */
export type SpanKindName = 'server' | 'client' | 'consumer';

/** Runs work inside a span, or straight through when there is no OpenTelemetry API. */
export interface Tracing {
  /**
   * False while spans are known to be off (`false`, the API looked for and missing, or no SDK
   * registered yet): a hot path then calls its work directly, with no closure made for a span.
   */
  enabled(): boolean;
  /**
   * Runs `work` in a span named `name`; `headers` with a `traceparent` make the span its child.
   * `work` gets no recorder (undefined) when nothing records spans (tracing off, or the API without
   * an SDK), so `span?.set({...})` then costs nothing.
   */
  span<T>(
    name: string,
    kind: SpanKindName,
    headers: HeaderSource | undefined,
    work: (span: SpanRecorder | undefined) => Promise<T>,
  ): Promise<T>;
}

// A variable specifier, so bundlers leave it to the runtime: where the package is not installed
// (or not importable, as in a Worker) the import fails once and telemetry stays off.
const API_MODULE = '@opentelemetry/api';
let autoApi: OpenTelemetryApi | null | undefined;
let autoLoad: Promise<OpenTelemetryApi | null> | undefined;

/** Whether `value` is the OpenTelemetry API (the parts verikit calls). */
export function looksLikeApi(value: unknown): value is OpenTelemetryApi {
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

/**
 * Whether an SDK is registered to record spans, asked at every span so that one registered later
 * is used from then on. Only the API's own global provider can say it is not (its delegate is
 * missing); any other provider is taken to be an SDK's.
 */
function sdkRegistered(api: OpenTelemetryApi, scope: string, version: string): boolean {
  const provider = api.trace.getTracerProvider?.() as { getDelegateTracer?(name: string, version?: string): unknown } | undefined;
  return typeof provider?.getDelegateTracer !== 'function' || provider.getDelegateTracer(scope, version) !== undefined;
}

function traced(api: OpenTelemetryApi, scope: string, version: string): Tracing['span'] {
  const tracer = api.trace.getTracer(scope, version);
  const kinds = { server: api.SpanKind.SERVER, client: api.SpanKind.CLIENT, consumer: api.SpanKind.CONSUMER };
  return (name, kind, headers, work) => {
    // The API without an SDK would only make a no-op span: none is made, no header read.
    if (!sdkRegistered(api, scope, version)) return work(undefined);
    const traceparent = headers === undefined ? undefined : rawHeader(headers, 'traceparent');
    let parent = api.context.active();
    if (typeof traceparent === 'string') {
      const tracestate = rawHeader(headers as HeaderSource, 'tracestate');
      const carrier: Record<string, string> = { traceparent };
      if (typeof tracestate === 'string') carrier.tracestate = tracestate;
      parent = api.propagation.extract(parent, carrier);
    }
    const span = tracer.startSpan(name, { kind: kinds[kind] }, parent);
    // The API without an SDK gives non-recording spans: skip the context switch and the recorder.
    if (!span.isRecording()) {
      span.end();
      return work(undefined);
    }
    const recorder: SpanRecorder = {
      set(attributes) {
        for (const [key, value] of Object.entries(attributes)) if (value !== undefined) span.setAttribute(key, value);
      },
      fail(error, reason) {
        if (error instanceof Error) span.recordException(error);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: reason ?? (error instanceof Error ? error.message : String(error)) });
      },
    };
    // Active while the work runs, so spans it starts (the client's, say) are its children.
    return api.context.with(api.trace.setSpan(parent, span), async () => {
      try {
        return await work(recorder);
      } catch (error) {
        recorder.fail(error);
        throw error;
      } finally {
        span.end();
      }
    });
  };
}

// Set at build time (tsup `define`): the Web build finds no API by itself and takes only openTelemetry(api)'s value.
const WEB_BUILD: boolean = __VERIKIT_WEB_BUILD__;

/**
 * The API a `telemetry` option names: `false` for none, `undefined` for "look for it" (the Node
 * build only). The Node build takes the raw API too; the Web build refuses it with the fix.
 */
export function telemetryApi(option: TelemetryOption): OpenTelemetryApi | false | undefined {
  if (WEB_BUILD) return webObserver(option) === undefined ? false : (option as OpenTelemetryInstrumentation).api;
  if (option === false || option === undefined) return option;
  if (isInstrumentation(option)) return option.api;
  if (!looksLikeApi(option)) {
    throw new ConfigurationError(
      'telemetry',
      "telemetry must be the OpenTelemetry API (import * as otel from '@opentelemetry/api'), openTelemetry(otel) or false",
    );
  }
  return option;
}

/** Spans through `api`. */
export const apiTracing = (api: OpenTelemetryApi, scope: string, version: string): Tracing => ({
  enabled: () => sdkRegistered(api, scope, version),
  span: traced(api, scope, version),
});

/**
 * The tracing a component uses. Given the API, spans go through it; `false` is off; by default
 * (Node build) `@opentelemetry/api` is imported once (the first call waits for it), and where it is
 * missing work runs straight through at no further cost.
 */
export function resolveTracing(option: TelemetryOption, scope: string, version: string): Tracing {
  const api = telemetryApi(option);
  if (api === false) return { enabled: () => false, span: (_n, _k, _h, work) => work(undefined) };
  if (api !== undefined) return apiTracing(api, scope, version);
  // Looked for now, so that by the first request the answer is usually known.
  void loadAutoApi();
  let withApi: Tracing['span'] | undefined;
  const span: Tracing['span'] = (name, kind, headers, work) => {
    if (autoApi === null) return work(undefined);
    if (autoApi === undefined) return loadAutoApi().then(() => span(name, kind, headers, work));
    withApi ??= traced(autoApi, scope, version);
    return withApi(name, kind, headers, work);
  };
  // While the import is under way the answer is not known: the span waits for it.
  return { enabled: () => (autoApi === undefined ? true : autoApi !== null && sdkRegistered(autoApi, scope, version)), span };
}

/** The instrumentation scope of verikit's spans. */
export const TRACER_SCOPE = '@verikit/core';
