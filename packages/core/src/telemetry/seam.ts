import { ConfigurationError } from '../errors.js';
import type { WebhookHandler, WebhookRequest, WebhookResponse } from '../webhook/handler.js';
import type { OpenTelemetryApi } from './api.js';
import type { SpanRecorder } from './tracing.js';

// All the webhook route knows of telemetry in the Web build: the OpenTelemetry glue comes only with
// the value `openTelemetry(api)` (`@verikit/core/otel`) makes, so a Worker without it carries none.

/** The webhook handler's work, told where to record its span (undefined when nothing records). */
export type SpannedHandle = (request: WebhookRequest, span: SpanRecorder | undefined) => Promise<WebhookResponse>;

/** Wraps a function that answers webhooks so that each answer is counted and timed. */
export type AnswerMeasure = <Input>(answer: (input: Input) => Promise<WebhookResponse>) => (input: Input) => Promise<WebhookResponse>;

/** How the webhook functions are observed: the handler's deliveries traced, the outermost answers measured. */
export interface WebhookObserver {
  /** The handler over its work, a span per delivery. */
  trace(handle: SpannedHandle): WebhookHandler;
  /** `answer`, its answers counted and timed. */
  measure: AnswerMeasure;
}

/** The `telemetry` option's value that turns on OpenTelemetry spans and metrics: made by `openTelemetry(api)`. */
export interface OpenTelemetryInstrumentation {
  /** Tells this value apart from the raw API. */
  readonly kind: 'opentelemetry';
  /** The API it was made from. */
  readonly api: OpenTelemetryApi;
  /** verikit's own use: how its webhook functions are observed with this API. */
  readonly webhook: WebhookObserver;
}

/** Whether `option` is the value `openTelemetry(api)` makes. */
export const isInstrumentation = (option: unknown): option is OpenTelemetryInstrumentation =>
  (option as Partial<OpenTelemetryInstrumentation> | null)?.kind === 'opentelemetry';

/**
 * The Web build's reading of a `telemetry` option: nothing when it is off or missing (no API is
 * looked for), the observer of `openTelemetry(api)`'s value, and for anything else (the raw API
 * included) an error naming the fix.
 */
export function webObserver(option: unknown): WebhookObserver | undefined {
  if (option === undefined || option === false) return undefined;
  if (isInstrumentation(option)) return option.webhook;
  throw new ConfigurationError(
    'telemetry',
    "outside Node, telemetry takes openTelemetry(otel) or false: import { openTelemetry } from '@verikit/core/otel'",
  );
}
