import { type HeaderSource, rawHeader } from '../util/headers.js';
import { WebhookVerificationError } from './errors.js';

/** Request headers as a plain object (any case; Node's `req.headers` works) or a Fetch `Headers`. */
export type WebhookHeaders = HeaderSource;

/** The raw request body, exactly as received. */
export type WebhookBody = string | Uint8Array | ArrayBuffer;

const MAX_ID_LENGTH = 256;

function lookup(headers: WebhookHeaders, name: string): string | undefined {
  const value = rawHeader(headers, name);
  if (value === undefined || typeof value === 'string') return value;
  // A header sent twice: only an exact repeat is unambiguous.
  if (value.length > 0 && value.every((v) => v === value[0])) return value[0];
  throw new WebhookVerificationError('invalid_header');
}

/** The three Svix headers (`svix-*`, else their `webhook-*` twins, as Svix itself reads them). */
export interface DeliveryHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

/** Reads and sanity-checks the delivery headers. */
export function readDeliveryHeaders(headers: WebhookHeaders): DeliveryHeaders {
  if (headers === null || typeof headers !== 'object') throw new WebhookVerificationError('invalid_header');
  const id = lookup(headers, 'svix-id') ?? lookup(headers, 'webhook-id');
  const timestamp = lookup(headers, 'svix-timestamp') ?? lookup(headers, 'webhook-timestamp');
  const signature = lookup(headers, 'svix-signature') ?? lookup(headers, 'webhook-signature');
  if (!id) throw new WebhookVerificationError('missing_id');
  if (!timestamp) throw new WebhookVerificationError('missing_timestamp');
  if (!signature) throw new WebhookVerificationError('missing_signature');
  if (id.length > MAX_ID_LENGTH) throw new WebhookVerificationError('invalid_header');
  return { id, timestamp, signature };
}

/** The body as bytes or text for hashing; anything else is not a raw body. */
export function asHashable(body: WebhookBody): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new WebhookVerificationError('invalid_body');
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The body as text (UTF-8), for JSON parsing after verification. */
export function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : decoder.decode(body);
}

/** Size in bytes, computed exactly only when a string could be near the limit. */
export function exceedsBytes(body: WebhookBody, limit: number): boolean {
  if (typeof body === 'string') return body.length * 3 > limit && encoder.encode(body).length > limit;
  return body.byteLength > limit;
}

/** Whether the body has no bytes (or is missing). */
export function isEmptyBody(body: WebhookBody | null | undefined): boolean {
  if (body === null || body === undefined) return true;
  return typeof body === 'string' ? body.length === 0 : body.byteLength === 0;
}
