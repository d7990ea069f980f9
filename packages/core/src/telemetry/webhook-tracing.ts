import type { WebhookHandler, WebhookResponse } from '../webhook/handler.js';
import type { SpannedHandle } from './seam.js';
import type { SpanAttributes, Tracing } from './tracing.js';

/** The handler over `handle`: a span per delivery while spans are on, its work called directly while they are off. */
export function tracedWebhook(tracing: Tracing, handle: SpannedHandle): WebhookHandler {
  const traced: WebhookHandler = (request) =>
    tracing.span('verikit webhook', 'server', request?.headers, (span) =>
      span === undefined
        ? handle(request, undefined)
        : handle(request, span).then((response) => {
            const outcome = deliveryOutcome(response);
            span.set(outcome);
            // A refusal is the sender's mistake; a 5xx is ours and the sender will retry.
            if (response.status >= 500) span.fail(undefined, outcome['verikit.reason'] as string);
            return response;
          }),
    );
  return (request) => (tracing.enabled() ? traced(request) : handle(request, undefined));
}

/** A delivery's outcome for its span: handled (unless already said), refused (4xx) or failed (5xx), with the answer's code. */
function deliveryOutcome(response: WebhookResponse): SpanAttributes {
  if (response.status < 300) return { 'http.response.status_code': response.status };
  const { error } = JSON.parse(response.body) as { error?: string };
  return {
    'http.response.status_code': response.status,
    'verikit.outcome': response.status < 500 ? 'refused' : 'failed',
    'verikit.reason': error,
  };
}
