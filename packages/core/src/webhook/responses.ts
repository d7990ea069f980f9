import type { BodyRead } from '../util/read-body.js';
import type { WebhookResponse } from './handler.js';

/** Default largest webhook body: 1 MiB, Svix's own maximum. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Default time a sender gets to deliver the whole body: 5 s, well under Svix's 15 s attempt timeout. */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/** A small JSON failure body with a code: never a secret, an expected signature or the raw body. */
export function reply(
  status: WebhookResponse['status'],
  error: string,
  extra: Record<string, string> = {},
  headers: Record<string, string> = {},
): WebhookResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...headers },
    body: JSON.stringify({ error, ...extra }),
  };
}

// The rest of the body is not read: closing the connection stops the sender rather than draining it.
const CLOSE = { connection: 'close' };

/** Whether a Content-Type names JSON (`application/json`, `...+json`), as every webhook body is. */
function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === '') return true;
  const type = (contentType.split(';')[0] as string).trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** Answers adapters give when the body could not be read, rather than the handler deciding. */
export const webhookResponses = {
  /** More than `maxBodyBytes` arrived (or were declared): nothing was hashed. */
  payloadTooLarge: (): WebhookResponse => reply(413, 'payload_too_large', {}, CLOSE),
  /** The whole body did not arrive within the body deadline. */
  bodyTimeout: (): WebhookResponse => reply(408, 'body_timeout', {}, CLOSE),
  /** The framework refused the request before verikit saw it (malformed framing and the like). */
  badRequest: (): WebhookResponse => reply(400, 'bad_request', {}, CLOSE),
  /** The framework failed on its own (never with details: those stay in the server's log). */
  internalError: (): WebhookResponse => reply(500, 'internal_error'),
  /**
   * A host body parser consumed the raw bytes. For a JSON body that is a setup problem: 500 with the
   * fix (never a misleading "invalid signature"). For any other type it is a request no webhook
   * sender makes: 400.
   */
  rawBodyUnavailable: (fix: string, contentType?: string): WebhookResponse =>
    isJsonType(contentType)
      ? reply(500, 'raw_body_unavailable', { message: `The webhook body was parsed before verikit could read its raw bytes. ${fix}` })
      : reply(400, 'unsupported_content_type', { message: 'A webhook body is JSON.' }),
};

/** The answer for a body read that did not give usable bytes. */
export function bodyReadFailure(read: Exclude<BodyRead, { kind: 'ok' }>, fix: string, contentType: string | undefined): WebhookResponse {
  if (read.kind === 'too-large') return webhookResponses.payloadTooLarge();
  if (read.kind === 'timeout') return webhookResponses.bodyTimeout();
  if (read.kind === 'consumed') return webhookResponses.rawBodyUnavailable(fix, contentType);
  return webhookResponses.badRequest();
}
