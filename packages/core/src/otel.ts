import { ConfigurationError } from './errors.js';
import type { OpenTelemetryApi } from './telemetry/api.js';
import { apiObserver } from './telemetry/observer.js';
import type { OpenTelemetryInstrumentation } from './telemetry/seam.js';
import { looksLikeApi } from './telemetry/tracing.js';

export type { OpenTelemetryApi } from './telemetry/api.js';
export type { OpenTelemetryInstrumentation } from './telemetry/seam.js';

/**
 * The `telemetry` option's value that turns on OpenTelemetry: spans (client calls, webhook
 * deliveries, worker runs) and metrics (webhook answers, inbox, ledger) through the API you import.
 * Required outside Node (Workers, Bun, Deno, browsers), where verikit does not look for the API, so
 * that a bundle without telemetry carries none of it; on Node it does the same as passing the API.
 * @example
 * import * as otel from '@opentelemetry/api';
 * import { openTelemetry } from '@verikit/core/otel';
 * const handle = createFetchWebhookHandler({ secret, store, onEvent, telemetry: openTelemetry(otel) });
 */
export function openTelemetry(api: OpenTelemetryApi): OpenTelemetryInstrumentation {
  if (!looksLikeApi(api)) {
    throw new ConfigurationError('telemetry', "openTelemetry takes the OpenTelemetry API: import * as otel from '@opentelemetry/api'");
  }
  return { kind: 'opentelemetry', api, webhook: apiObserver(api) };
}
