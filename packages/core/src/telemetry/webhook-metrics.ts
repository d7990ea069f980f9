import type { WebhookHandler, WebhookResponse } from '../webhook/handler.js';
import { answerCode } from '../webhook/responses.js';
import type { OtelMeter } from './api.js';
import { type MeterSource, perMeter } from './meter.js';

/** Buckets for a webhook answer, in seconds: the OpenTelemetry HTTP server advice (Svix waits 15 s). */
const ANSWER_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Records one answer: counted by outcome and reason, timed when the handler ran (`ms`). */
type RecordAnswer = (response: WebhookResponse, duplicate: boolean, ms: number | undefined) => void;

function answerRecorder(meter: OtelMeter): RecordAnswer {
  const deliveries = meter.createCounter('verikit.webhook.deliveries', {
    unit: '{delivery}',
    description: 'Webhook deliveries answered, by outcome and reason',
  });
  const duration = meter.createHistogram('verikit.webhook.duration', {
    unit: 's',
    description: 'Time from the webhook body in hand to the answer',
    advice: { explicitBucketBoundaries: ANSWER_SECONDS },
  });
  return (response, duplicate, ms) => {
    const { status } = response;
    const attributes = { 'verikit.outcome': status < 300 ? (duplicate ? 'duplicate' : 'accepted') : status < 500 ? 'refused' : 'failed' };
    if (ms !== undefined) duration.record(ms / 1000, attributes);
    // A refusal's reason on the counter only: the histogram's series stay few.
    deliveries.add(1, status < 300 ? attributes : { ...attributes, 'verikit.reason': answerCode(response) ?? 'unknown' });
  };
}

/**
 * `handle`, counted and timed while a meter records: each answer by outcome (`repeated` is the
 * answer a repeat gets, a duplicate) and reason. While nothing records, one identity check per request.
 */
export function meteredHandler(handle: WebhookHandler, source: MeterSource, repeated: WebhookResponse): WebhookHandler {
  const recorder = perMeter(source, answerRecorder);
  const metered: WebhookHandler = (request) => {
    const record = recorder();
    // The first deliveries of a process may come while the API is still being imported: they wait for it, as their spans do.
    if (record === undefined) return source.ready ? handle(request) : source.loaded().then(() => metered(request));
    const started = performance.now();
    return handle(request).then((response) => {
      record(response, response === repeated, performance.now() - started);
      return response;
    });
  };
  return metered;
}

/** Counts the answers a route gives before its handler runs (a body too large, too slow, or already parsed). */
export function answerCounter(source: MeterSource): (response: WebhookResponse) => WebhookResponse {
  const recorder = perMeter(source, answerRecorder);
  return (response) => {
    recorder()?.(response, false, undefined);
    return response;
  };
}
