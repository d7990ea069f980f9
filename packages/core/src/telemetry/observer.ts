import { VERSION } from '../version.js';
import type { OpenTelemetryApi, TelemetryOption } from './api.js';
import { apiMeter, type MeterSource, resolveMeter } from './meter.js';
import type { WebhookObserver } from './seam.js';
import { apiTracing, resolveTracing, TRACER_SCOPE, type Tracing } from './tracing.js';
import { measureAnswers } from './webhook-metrics.js';
import { tracedWebhook } from './webhook-tracing.js';

const observerOf = (tracing: Tracing, meter: MeterSource): WebhookObserver => ({
  trace: (handle) => tracedWebhook(tracing, handle),
  measure: measureAnswers(meter),
});

/** How the Node build observes its webhook functions: by the `telemetry` option, the API found by itself when it is not given. */
export const optionObserver = (option: TelemetryOption): WebhookObserver =>
  observerOf(resolveTracing(option, TRACER_SCOPE, VERSION), resolveMeter(option));

/** How `api` observes the webhook functions (what `openTelemetry(api)` carries). */
export const apiObserver = (api: OpenTelemetryApi): WebhookObserver => observerOf(apiTracing(api, TRACER_SCOPE, VERSION), apiMeter(api));
