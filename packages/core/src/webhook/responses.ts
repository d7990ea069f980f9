import type { WebhookResponse } from './handler.js';

/** Default largest webhook body: 1 MiB, Svix's own maximum. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A small JSON failure body with a code: never a secret, an expected signature or the raw body. */
export function reply(
  status: WebhookResponse['status'],
  error: string,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
): WebhookResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ error, ...extra }),
  };
}

/** Answers adapters give when the framework, not the handler, decides. */
export const webhookResponses = {
  /** The framework refused a body over `maxBodyBytes` before the handler saw it. */
  payloadTooLarge: (): WebhookResponse => reply(413, 'payload_too_large'),
  /** A body parser of the host app consumed the raw bytes; says how to fix it (never "bad signature"). */
  rawBodyUnavailable: (fix: string): WebhookResponse =>
    reply(500, 'raw_body_unavailable', { message: `The webhook body was parsed before verikit could read its raw bytes. ${fix}` }),
};
