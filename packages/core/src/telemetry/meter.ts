import { VERSION } from '../version.js';
import type { OpenTelemetryApi, OtelMeter, TelemetryOption } from './api.js';
import { importedApi, loadAutoApi, TRACER_SCOPE, telemetryApi } from './tracing.js';

/**
 * The meter verikit measures with: the global meter provider's, looked up at every call (an
 * identity check), so a provider registered after verikit started, or replaced, is used from the
 * next measurement on. `undefined` while nothing records: no API, `telemetry: false`, or no SDK
 * registered (the API's own provider only hands out no-op meters).
 */
export interface MeterSource {
  meter(): OtelMeter | undefined;
  /** False only while `@opentelemetry/api` is being imported (the first moments of a process): wait for {@link loaded}. */
  readonly ready: boolean;
  /** Settles once the API has been looked for. */
  loaded(): Promise<unknown>;
}

/** The global meter provider as one API sees it: one per API, shared by every component of the process. */
function providerWatch(api: () => OpenTelemetryApi | null | undefined, loaded: () => Promise<unknown>): MeterSource {
  let provider: unknown;
  let current: OtelMeter | undefined;
  return {
    meter() {
      const found = api()?.metrics?.getMeterProvider();
      if (found !== provider) {
        provider = found;
        const meter = found?.getMeter(TRACER_SCOPE, VERSION);
        current = meter === undefined || meter === api()?.createNoopMeter?.() ? undefined : meter;
      }
      return current;
    },
    get ready() {
      return api() !== undefined;
    },
    loaded,
  };
}

const settled = () => Promise.resolve();
const OFF: MeterSource = { meter: () => undefined, ready: true, loaded: settled };
const auto = providerWatch(importedApi, loadAutoApi);
const given = new WeakMap<OpenTelemetryApi, MeterSource>();

/** The meter source of one API, made once per API. */
export function apiMeter(api: OpenTelemetryApi): MeterSource {
  let source = given.get(api);
  if (source === undefined) {
    source = providerWatch(() => api, settled);
    given.set(api, source);
  }
  return source;
}

/**
 * The meter source for a `telemetry` option: the API given, `false` for none, or by default (Node
 * build) `@opentelemetry/api` imported once (until it has loaded, and where it is missing, nothing is measured).
 */
export function resolveMeter(option: TelemetryOption): MeterSource {
  const api = telemetryApi(option);
  if (api === false) return OFF;
  if (api !== undefined) return apiMeter(api);
  void loadAutoApi();
  return auto;
}

/** What `build` makes of the current meter, made once per meter; `undefined` while nothing records. */
export function perMeter<T>(source: MeterSource, build: (meter: OtelMeter) => T): () => T | undefined {
  let meter: OtelMeter | undefined;
  let built: T | undefined;
  return () => {
    const current = source.meter();
    if (current !== meter) {
      meter = current;
      built = current && build(current);
    }
    return built;
  };
}
