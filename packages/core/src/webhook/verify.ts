import { ConfigurationError } from '../errors.js';
import { WebhookVerificationError } from './errors.js';
import type { HmacEngine } from './hmac.js';
import { asHashable, readDeliveryHeaders, type WebhookBody, type WebhookHeaders } from './input.js';
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

/** Builds a verifier over the given HMAC engine (node:crypto or WebCrypto). */
export function createVerifierWith<Key>(options: WebhookVerifierOptions, engine: HmacEngine<Key>): WebhookVerifier {
  const keys = decodeSecrets('secrets', options?.secrets).map((raw) => engine.importKey(raw));
  const tolerance = options.toleranceSeconds ?? 300;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigurationError('toleranceSeconds', 'toleranceSeconds must be a non-negative number');
  }
  const now = options.now ?? Date.now;
  return {
    async verify(headers, body) {
      const delivery = readDeliveryHeaders(headers);
      const bytes = asHashable(body);
      if (!TIMESTAMP.test(delivery.timestamp)) throw new WebhookVerificationError('invalid_timestamp');
      const timestamp = Number(delivery.timestamp);
      const nowSeconds = Math.floor(now() / 1000);
      if (nowSeconds - timestamp > tolerance) throw new WebhookVerificationError('timestamp_too_old');
      if (timestamp - nowSeconds > tolerance) throw new WebhookVerificationError('timestamp_too_new');
      const candidates = parseSignatures(delivery.signature);
      // Signed over the normalised number, as Svix signs it, so a zero-padded timestamp agrees too.
      const prefix = `${delivery.id}.${timestamp}.`;
      for (const key of keys) {
        // node:crypto answers synchronously; awaiting a plain string would still cost a tick.
        const signed = engine.sign(key, prefix, bytes);
        const expected = typeof signed === 'string' ? signed : await signed;
        for (const candidate of candidates) {
          if (constantTimeEqual(candidate, expected)) return { id: delivery.id, timestamp };
        }
      }
      throw new WebhookVerificationError('no_matching_signature');
    },
  };
}

/**
 * The `v1` signatures of a header like `v1,abc= v1,def= v2,xyz`. Entries are read as Svix
 * reads them (the text between the first and second comma), other versions skipped.
 */
export function parseSignatures(header: string): string[] {
  const entries = header.split(' ');
  if (entries.length > MAX_SIGNATURES) throw new WebhookVerificationError('too_many_signatures');
  const v1: string[] = [];
  let wellFormed = 0;
  for (const entry of entries) {
    const comma = entry.indexOf(',');
    if (comma <= 0) continue;
    wellFormed++;
    if (entry.slice(0, comma) !== 'v1') continue;
    const end = entry.indexOf(',', comma + 1);
    v1.push(end === -1 ? entry.slice(comma + 1) : entry.slice(comma + 1, end));
  }
  if (wellFormed === 0) throw new WebhookVerificationError('malformed_signature');
  return v1;
}

/** Compares without an early exit, so timing does not reveal how much of a guess was right. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
