import { ConfigurationError } from '../errors.js';
import { WebhookVerificationError } from './errors.js';
import type { HmacEngine } from './hmac.js';
import { asHashable, type DeliveryHeaders, readDeliveryHeaders, type WebhookBody, type WebhookHeaders } from './input.js';
import { decodeSecrets } from './secrets.js';

/** Options of `createWebhookVerifier`. */
export interface WebhookVerifierOptions {
  /** The endpoint's signing secret(s), `whsec_...`; give two during a rotation. */
  secrets: string | readonly string[];
  /** Accepted clock difference in seconds, both ways (default 300, as Svix). */
  toleranceSeconds?: number;
  /** Clock in milliseconds since the epoch (default `Date.now`); for tests. */
  now?: () => number;
}

/** A delivery whose signature and timestamp checked out. */
export interface VerifiedDelivery {
  /** `svix-id`: the same across retries of one message; the idempotency key. */
  id: string;
  /** `svix-timestamp`, seconds since the epoch. */
  timestamp: number;
}

/** Verifies Svix-signed deliveries against secrets decoded once, at creation. */
export interface WebhookVerifier {
  /**
   * Checks headers and the exact body bytes; resolves with the delivery id and timestamp or
   * rejects with a {@link WebhookVerificationError} whose `reason` says why.
   */
  verify(headers: WebhookHeaders, body: WebhookBody): Promise<VerifiedDelivery>;
}

/** Most entries a signature header may list; Svix sends one per active secret. */
export const MAX_SIGNATURES = 16;
const TIMESTAMP = /^[0-9]{1,15}$/;

/**
 * Checks one delivery: the verified id and timestamp, or a thrown {@link WebhookVerificationError}.
 * Synchronous when the HMAC engine is (node:crypto), a promise when it is not (WebCrypto), so the
 * webhook handler spends no microtask on the common path.
 */
export type DeliveryCheck = (headers: WebhookHeaders, body: string | Uint8Array) => VerifiedDelivery | Promise<VerifiedDelivery>;

/**
 * Builds the delivery check over the given HMAC engine, with the secrets decoded once, now; a bad
 * secret's error names `secretOption`, the option the integrator actually gave.
 */
export function createDeliveryCheck<Key>(
  options: WebhookVerifierOptions,
  engine: HmacEngine<Key>,
  secretOption = 'secrets',
): DeliveryCheck {
  const keys = decodeSecrets(secretOption, options?.secrets).map((raw) => engine.importKey(raw));
  const tolerance = options.toleranceSeconds ?? 300;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigurationError('toleranceSeconds', 'toleranceSeconds must be a non-negative number');
  }
  const now = options.now ?? Date.now;
  return (headers, body) => {
    const delivery = readDeliveryHeaders(headers);
    if (!TIMESTAMP.test(delivery.timestamp)) throw new WebhookVerificationError('invalid_timestamp');
    const timestamp = Number(delivery.timestamp);
    const nowSeconds = Math.floor(now() / 1000);
    if (nowSeconds - timestamp > tolerance) throw new WebhookVerificationError('timestamp_too_old');
    if (timestamp - nowSeconds > tolerance) throw new WebhookVerificationError('timestamp_too_new');
    // Checked before any HMAC is computed, so a malformed header costs nothing.
    scanSignatures(delivery.signature);
    // Signed over the normalised number, as Svix signs it, so a zero-padded timestamp agrees too.
    const prefix = `${delivery.id}.${timestamp}.`;
    for (let k = 0; k < keys.length; k++) {
      const signed = engine.sign(keys[k] as Key, prefix, body);
      if (typeof signed !== 'string') return matchAsync(signed, { engine, rest: keys.slice(k + 1), prefix, body, delivery, timestamp });
      if (scanSignatures(delivery.signature, signed)) return { id: delivery.id, timestamp };
    }
    throw new WebhookVerificationError('no_matching_signature');
  };
}

/** The rest of a check whose engine answers asynchronously: one key after another. */
async function matchAsync<Key>(
  first: Promise<string>,
  job: { engine: HmacEngine<Key>; rest: Key[]; prefix: string; body: string | Uint8Array; delivery: DeliveryHeaders; timestamp: number },
): Promise<VerifiedDelivery> {
  const { engine, rest, prefix, body, delivery, timestamp } = job;
  if (scanSignatures(delivery.signature, await first)) return { id: delivery.id, timestamp };
  for (const key of rest) {
    if (scanSignatures(delivery.signature, await engine.sign(key, prefix, body))) return { id: delivery.id, timestamp };
  }
  throw new WebhookVerificationError('no_matching_signature');
}

/** Builds a verifier over the given HMAC engine (node:crypto or WebCrypto). */
export function createVerifierWith<Key>(options: WebhookVerifierOptions, engine: HmacEngine<Key>): WebhookVerifier {
  const check = createDeliveryCheck(options, engine);
  return {
    async verify(headers, body) {
      return check(headers, asHashable(body));
    },
  };
}

/**
 * Walks the signature header in place, as Svix reads it: space-separated `version,signature`
 * entries (the text between the first and second comma), versions other than v1 skipped. Throws
 * for too many entries or none well formed; answers whether a `v1` entry equals `expected`.
 */
function scanSignatures(header: string, expected?: string): boolean {
  let entries = 0;
  let wellFormed = 0;
  let matched = false;
  for (let start = 0; ; ) {
    const space = header.indexOf(' ', start);
    const stop = space === -1 ? header.length : space;
    if (++entries > MAX_SIGNATURES) throw new WebhookVerificationError('too_many_signatures');
    const comma = header.indexOf(',', start);
    if (comma > start && comma < stop) {
      wellFormed++;
      if (expected !== undefined && !matched && comma === start + 2 && header.startsWith('v1', start)) {
        const next = header.indexOf(',', comma + 1);
        matched = constantTimeEqualAt(header, comma + 1, next !== -1 && next < stop ? next : stop, expected);
      }
    }
    if (space === -1) break;
    start = space + 1;
  }
  if (wellFormed === 0) throw new WebhookVerificationError('malformed_signature');
  return matched;
}

/** Compares `text[from, to)` to `expected` without an early exit, so timing does not reveal how much of a guess was right. */
function constantTimeEqualAt(text: string, from: number, to: number, expected: string): boolean {
  if (to - from !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= text.charCodeAt(from + i) ^ expected.charCodeAt(i);
  return diff === 0;
}
