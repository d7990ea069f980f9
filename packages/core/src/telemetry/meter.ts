import { VERSION } from '../version.js';
import {
  givenApi,
  importedApi,
  loadAutoApi,
  type OpenTelemetryApi,
  type OtelMeter,
  type OtelMeterProvider,
  type TelemetryOption,
} from './api.js';
import { TRACER_SCOPE } from './tracing.js';

/** Sets something up on a meter (instruments, a gauge's callback) and answers how to undo it. */
export type MeterAttachment = (meter: OtelMeter) => () => void;

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
  /** Applies `attachment` to the meter now and to each later one (undone on the one before), until the returned function is called. */
  attach(attachment: MeterAttachment): () => void;
}

/** The global meter provider as one API sees it; one per API, shared by every component of the process. */
class ProviderWatch implements MeterSource {
  private provider: unknown;
  private current: OtelMeter | undefined;
  private readonly attached = new Set<{ attachment: MeterAttachment; undo: (() => void) | undefined }>();

  constructor(
    private readonly api: () => OpenTelemetryApi | null | undefined,
    readonly loaded: () => Promise<unknown> = () => Promise.resolve(),
  ) {}

  get ready(): boolean {
    return this.api() !== undefined;
  }

  meter(): OtelMeter | undefined {
    const api = this.api();
    const provider = api?.metrics?.getMeterProvider();
    if (provider !== this.provider) this.switchTo(api, provider);
    return this.current;
  }

  attach(attachment: MeterAttachment): () => void {
    const meter = this.meter();
    const entry = { attachment, undo: meter && attachment(meter) };
    this.attached.add(entry);
    return () => {
      entry.undo?.();
      this.attached.delete(entry);
    };
  }

  private switchTo(api: OpenTelemetryApi | null | undefined, provider: OtelMeterProvider | undefined): void {
    this.provider = provider;
    const meter = provider?.getMeter(TRACER_SCOPE, VERSION);
    this.current = meter === undefined || meter === api?.createNoopMeter?.() ? undefined : meter;
    for (const entry of this.attached) {
      entry.undo?.();
      entry.undo = this.current && entry.attachment(this.current);
    }
  }
}

const OFF: MeterSource = { meter: () => undefined, ready: true, loaded: () => Promise.resolve(), attach: () => () => {} };
const auto = new ProviderWatch(importedApi, loadAutoApi);
const given = new WeakMap<OpenTelemetryApi, ProviderWatch>();

/**
 * The meter source for a `telemetry` option: the API given, `false` for none, or by default
 * `@opentelemetry/api` imported once (until it has loaded, and where it is missing, nothing is measured).
 */
export function resolveMeter(option: TelemetryOption): MeterSource {
  if (option === false) return OFF;
  if (option === undefined) {
    void loadAutoApi();
    return auto;
  }
  const api = givenApi(option);
  let watch = given.get(api);
  if (watch === undefined) {
    watch = new ProviderWatch(() => api);
    given.set(api, watch);
  }
  return watch;
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
