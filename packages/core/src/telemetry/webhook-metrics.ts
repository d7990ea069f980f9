import { REPEATED, type WebhookResponse } from '../webhook/handler.js';
import type { OtelMeter } from './api.js';
import { type MeterSource, perMeter } from './meter.js';
import type { AnswerMeasure } from './seam.js';

/** Buckets for a webhook answer, in seconds: the OpenTelemetry HTTP server advice (Svix waits 15 s). */
const ANSWER_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The code a refusal or failure answer carries (`invalid_signature`, `handler_failed`, ...), or `unknown`. */
function answerCode(response: WebhookResponse): string {
  try {
    const { error } = JSON.parse(response.body) as { error?: unknown };
    return typeof error === 'string' ? error : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Records one answer: counted by outcome and reason, and its time (`ms`). */
type RecordAnswer = (response: WebhookResponse, ms: number) => void;

function answerRecorder(meter: OtelMeter): RecordAnswer {
  const deliveries = meter.createCounter('verikit.webhook.deliveries', {
    unit: '{delivery}',
    description: 'Webhook deliveries answered, by outcome and reason',
  });
  const duration = meter.createHistogram('verikit.webhook.duration', {
    unit: 's',
    description: 'Time from a webhook request to its answer',
    advice: { explicitBucketBoundaries: ANSWER_SECONDS },
  });
  return (response, ms) => {
    const { status } = response;
    const attributes = {
      'verikit.outcome': status < 300 ? (response === REPEATED ? 'duplicate' : 'accepted') : status < 500 ? 'refused' : 'failed',
    };
    duration.record(ms / 1000, attributes);
    // A refusal's reason on the counter only: the histogram's series stay few.
    deliveries.add(1, status < 300 ? attributes : { ...attributes, 'verikit.reason': answerCode(response) });
  };
}

/**
 * Wraps answering functions so that each answer is counted by outcome (a repeat's 204 is
 * `duplicate`) and reason, and timed, while a meter records. While nothing records, one identity
 * check per request.
 */
export function measureAnswers(source: MeterSource): AnswerMeasure {
  const recorder = perMeter(source, answerRecorder);
  return <Input>(answer: (input: Input) => Promise<WebhookResponse>) => {
    const metered = (input: Input): Promise<WebhookResponse> => {
      const record = recorder();
      // The first deliveries of a process may come while the API is still being imported: they wait for it, as their spans do.
      if (record === undefined) return source.ready ? answer(input) : source.loaded().then(() => metered(input));
      const started = performance.now();
      return answer(input).then((response) => {
        record(response, performance.now() - started);
        return response;
      });
    };
    return metered;
  };
}
