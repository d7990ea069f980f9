import { ConfigurationError } from '@verikit/core';
import type { FakeRoute } from './faults.js';

/** One API request as the fake logged it (never its query string or headers, which can hold a token or a key). */
export interface FakeRequest {
  method: string;
  route: FakeRoute;
  /** The path, without the query. */
  path: string;
  /** The status answered; 0 while unanswered, or when the connection was reset first (a `reset` fault). */
  status: number;
  /** When it arrived, epoch ms. */
  at: number;
}

/** A limit on result reads (`kyb.getCase`, `kyc.getResult`) per organization, as a service's rate limit would be. */
export interface FakeRateLimit {
  /** Reads answered per organization in any 60 s; the reads beyond get 429. */
  readsPerMinute: number;
  /** The 429's `Retry-After`, in seconds (default: until the oldest read answered in the last minute leaves it, at least 1). */
  retryAfterSeconds?: number;
}

const MINUTE_MS = 60_000;
const READ_ROUTES: ReadonlySet<FakeRoute> = new Set<FakeRoute>(['kyb.getCase', 'kyc.getResult']);

/** Whether a route reads a result (what a reconciler's budget counts). */
const isResultRead = (route: FakeRoute): boolean => READ_ROUTES.has(route);

/**
 * The largest number of result reads among `requests` in any half-open window [t, t + windowMs),
 * whatever they were answered (a 429 or a 404 is a read sent all the same): sorted times, one pass.
 */
export function maxReadsInWindow(requests: readonly FakeRequest[], windowMs: number): number {
  if (!(Number.isFinite(windowMs) && windowMs > 0)) throw new ConfigurationError('windowMs', 'windowMs must be a positive number of ms');
  const times = requests
    .filter((r) => isResultRead(r.route))
    .map((r) => r.at)
    .sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** `limit` checked, or a ConfigurationError naming the field at fault. */
export function checkRateLimit(limit: FakeRateLimit): FakeRateLimit {
  const { readsPerMinute, retryAfterSeconds } = limit;
  if (!(Number.isInteger(readsPerMinute) && readsPerMinute > 0))
    throw new ConfigurationError('rateLimit.readsPerMinute', 'rateLimit.readsPerMinute must be a positive integer');
  if (retryAfterSeconds !== undefined && !(Number.isInteger(retryAfterSeconds) && retryAfterSeconds > 0))
    throw new ConfigurationError('rateLimit.retryAfterSeconds', 'rateLimit.retryAfterSeconds must be a positive integer');
  return { readsPerMinute, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
}

/**
 * Lets at most `readsPerMinute` result reads of an organization through in any 60 s: a read is let
 * through when fewer than that were let through in the 60 s before it, so no window [t, t + 60 s)
 * holds more answered reads than the limit.
 */
export class ReadLimiter {
  private limit: FakeRateLimit | undefined;
  /** Per organization, when the reads let through in the last minute arrived, oldest first. */
  private readonly answered = new Map<string, number[]>();

  /** Sets the limit (undefined: none); the reads already answered still count. */
  set(limit: FakeRateLimit | undefined): void {
    this.limit = limit === undefined ? undefined : checkRateLimit(limit);
  }

  /** Takes a read of `org` arriving `now`: undefined when it is let through, else the seconds for its `Retry-After`. */
  take(org: string, now: number): number | undefined {
    if (this.limit === undefined) return undefined;
    const times = this.answered.get(org) ?? [];
    while (times.length > 0 && (times[0] as number) <= now - MINUTE_MS) times.shift();
    if (times.length >= this.limit.readsPerMinute)
      return this.limit.retryAfterSeconds ?? Math.max(1, Math.ceil(((times[0] as number) + MINUTE_MS - now) / 1000));
    times.push(now);
    this.answered.set(org, times);
    return undefined;
  }
}
