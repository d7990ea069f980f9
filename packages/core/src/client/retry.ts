import type { ConnectionFailure } from './errors.js';

/** Backoff and retry limits, resolved from client options. */
export interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  random: () => number;
}

/** What went wrong with one attempt, as far as retrying cares. */
export type AttemptOutcome =
  | { kind: 'status'; status: number; retryAfterMs: number | undefined }
  | { kind: 'timeout' }
  | { kind: 'network'; failure: ConnectionFailure };

const RETRYABLE_GET_STATUS = new Set([408, 429, 502, 503, 504]);

/**
 * Whether this attempt may be repeated. GETs are idempotent; a POST creates a case or session,
 * so it is repeated only where the request provably never reached the server (connection refused,
 * DNS). Any answer, 429 and 503 with Retry-After included, means the server saw it: the spec does
 * not say such an answer means "not processed", and a duplicate case is worse than an error.
 */
export function isRetryable(method: 'GET' | 'POST', outcome: AttemptOutcome): boolean {
  if (outcome.kind === 'network') return method === 'GET' || outcome.failure === 'not-sent';
  if (outcome.kind === 'timeout') return method === 'GET';
  return method === 'GET' && RETRYABLE_GET_STATUS.has(outcome.status);
}

/** Full-jitter exponential backoff (AWS's "full jitter"): uniform in [0, min(max, base * 2^n)). */
export function backoffDelay(retryIndex: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retryIndex);
  return Math.floor(policy.random() * ceiling);
}

/** Parses Retry-After (delta-seconds or HTTP-date) into milliseconds from `nowMs`. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}
