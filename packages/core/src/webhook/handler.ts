import type { VerikitClient } from '../client/client.js';
import { ConfigurationError, InvalidArgumentError } from '../errors.js';
import type { KybCaseDetails } from '../schemas/kyb.js';
import type { KycResult } from '../schemas/kyc.js';
import type { IdempotencyStore } from '../store/store.js';
import { WebhookVerificationError } from './errors.js';
import { defaultIdentify, type EventSubject, type IdentifyEvent } from './identify.js';
import { asHashable, bodyText, exceedsBytes, isEmptyBody, type WebhookBody, type WebhookHeaders } from './input.js';
import { DEFAULT_MAX_BODY_BYTES, reply, webhookResponses } from './responses.js';
import type { WebhookVerifier, WebhookVerifierOptions } from './verify.js';

/** The authoritative result behind an event, read by refId (a webhook alone is never a decision). */
export type FetchedResult = { kind: 'kyb'; refId: string; result: KybCaseDetails } | { kind: 'kyc'; refId: string; result: KycResult };

/** What `onEvent` receives for a verified, first-time delivery. */
export interface WebhookContext {
  /** The parsed JSON body. */
  event: unknown;
  /** `svix-id`: the idempotency key. */
  id: string;
  /** `svix-timestamp`, seconds since the epoch. */
  timestamp: number;
  /** What the event is about, when it could be told (see `identify`). */
  subject: EventSubject | null;
  /** Reads the authoritative KYB details or KYC result for the subject through the client. */
  fetchResult(): Promise<FetchedResult>;
  /** Aborted when the handler's deadline passes (the work may go on; the answer has been sent). */
  signal: AbortSignal;
}

/** Options of `createWebhookHandler`. */
export interface WebhookHandlerOptions {
  /** The endpoint's signing secret (`whsec_...`). Give this or `secrets`. */
  secret?: string;
  /** Several secrets during a rotation; any one may sign. */
  secrets?: readonly string[];
  /** Remembers handled ids; `MemoryIdempotencyStore` for one instance, a shared store for several. */
  store: IdempotencyStore;
  /** Your work for one event. Throw to have the sender retry; it runs once per id while the store remembers it. */
  onEvent(ctx: WebhookContext): unknown;
  /** The API client, for `ctx.fetchResult()`. */
  client?: VerikitClient;
  /** Maps an event to `{ kind, refId }` (default: a best-effort reading; the spec shows no event shape). */
  identify?: IdentifyEvent;
  /** Largest accepted body in bytes (default 1 MiB, Svix's own maximum). */
  maxBodyBytes?: number;
  /** How long `onEvent` may take before the answer is 503 (default 10 s, under Svix's 15 s timeout). */
  deadlineMs?: number;
  /** How long a claim holds (default 60 s); must outlast `deadlineMs`. */
  leaseMs?: number;
  /** Accepted clock difference in seconds (default 300). */
  toleranceSeconds?: number;
  /** Clock in ms, for tests (default `Date.now`). */
  now?: () => number;
  /** Told about failures that do not change the answer (a store that failed to record completion). */
  onError?: (error: unknown, context: { id: string; stage: 'complete' | 'release' | 'late-complete' | 'late-release' }) => void;
}

/** A request as any framework can give it. */
export interface WebhookRequest {
  method: string;
  headers: WebhookHeaders;
  body: WebhookBody | null | undefined;
}

/** The answer for the framework to send. */
export interface WebhookResponse {
  status: 204 | 400 | 405 | 409 | 413 | 500 | 503;
  headers: Record<string, string>;
  body: string;
}

/** `(request) => response`, the same for every framework. */
export type WebhookHandler = (request: WebhookRequest) => Promise<WebhookResponse>;

const NO_CONTENT: WebhookResponse = { status: 204, headers: { 'cache-control': 'no-store' }, body: '' };

const TIMED_OUT = Symbol('timed-out');

/**
 * Deadlines for in-flight deliveries, checked by one interval while any are pending. A timer per
 * delivery was a measurable share of the route's cost; a deadline may now fire up to a tenth of
 * `deadlineMs` (at most 250 ms) late, still well inside Svix's 15 s.
 */
class DeadlineSweeper {
  private readonly pending = new Map<number, { due: number; expire: () => void }>();
  private readonly tickMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private next = 0;

  constructor(private readonly deadlineMs: number) {
    this.tickMs = Math.max(1, Math.min(250, Math.floor(deadlineMs / 10)));
  }

  watch(expire: () => void): number {
    const id = this.next++;
    this.pending.set(id, { due: Date.now() + this.deadlineMs, expire });
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      // Pending work keeps its own server alive; the sweeper alone must not hold the process open.
      (this.timer as { unref?: () => void }).unref?.();
    }
    return id;
  }

  forget(id: number): void {
    this.pending.delete(id);
  }

  private sweep(): void {
    const now = Date.now();
    // Map order is watch order, so due times ascend: stop at the first that is not due.
    for (const [id, entry] of this.pending) {
      if (entry.due > now) break;
      this.pending.delete(id);
      entry.expire();
    }
    if (this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
const COMPLETE_ATTEMPTS = 6;

/**
 * The `ctx` of one delivery. A class, so nothing is allocated per delivery for what `onEvent`
 * does not read; the AbortController behind `signal` is made only if someone asks for it.
 */
class DeliveryContext implements WebhookContext {
  private controller: AbortController | undefined;
  private expired = false;

  constructor(
    readonly event: unknown,
    readonly id: string,
    readonly timestamp: number,
    readonly subject: EventSubject | null,
    private readonly client: VerikitClient | undefined,
  ) {}

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    this.abortIfExpired();
    return this.controller.signal;
  }

  // A getter, so `({ fetchResult }) => ...` keeps working; the function is made only when read.
  get fetchResult(): () => Promise<FetchedResult> {
    return () => fetchResult(this.client, this.subject);
  }

  /** The deadline passed: abort the signal (now, or whenever it is first read). */
  expire(): void {
    this.expired = true;
    this.abortIfExpired();
  }

  private abortIfExpired(): void {
    if (this.expired && this.controller && !this.controller.signal.aborted) {
      this.controller.abort(new Error('webhook handler deadline passed'));
    }
  }
}

/** Builds the handler over a verifier factory (the platform's node:crypto or WebCrypto one). */
export function createHandlerWith(
  options: WebhookHandlerOptions,
  makeVerifier: (o: WebhookVerifierOptions) => WebhookVerifier,
): WebhookHandler {
  if (options === null || typeof options !== 'object')
    throw new ConfigurationError('options', 'createWebhookHandler needs an options object');
  if (options.secret !== undefined && options.secrets !== undefined)
    throw new ConfigurationError('secret', 'give secret or secrets, not both');
  const { store, onEvent } = options;
  if (store === undefined || typeof store.claim !== 'function')
    throw new ConfigurationError('store', 'store is required (an IdempotencyStore, e.g. new MemoryIdempotencyStore())');
  if (typeof onEvent !== 'function') throw new ConfigurationError('onEvent', 'onEvent is required');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const deadlineMs = options.deadlineMs ?? 10_000;
  const leaseMs = options.leaseMs ?? Math.max(60_000, deadlineMs * 2);
  if (!(leaseMs > deadlineMs))
    throw new ConfigurationError('leaseMs', 'leaseMs must be longer than deadlineMs, or a slow handler could run twice');
  const verifier = makeVerifier({
    secrets: options.secrets ?? (options.secret as string),
    toleranceSeconds: options.toleranceSeconds,
    now: options.now,
  });
  const identify = options.identify ?? defaultIdentify;
  const retryAfter = { 'retry-after': String(Math.ceil(Math.min(leaseMs, 30_000) / 1000)) };
  const report = options.onError ?? (() => {});
  const deadlines = new DeadlineSweeper(deadlineMs);

  const complete = async (id: string, stage: 'complete' | 'late-complete'): Promise<void> => {
    // The work is done: a transient store failure must not turn into a second run, so insist.
    for (let attempt = 1; ; attempt++) {
      try {
        await store.complete(id);
        return;
      } catch (error) {
        if (attempt >= COMPLETE_ATTEMPTS) return report(error, { id, stage });
        await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** attempt));
      }
    }
  };
  const release = (id: string, stage: 'release' | 'late-release'): Promise<void> =>
    Promise.resolve()
      .then(() => store.release(id))
      .catch((error: unknown) => report(error, { id, stage }));

  return async (request) => {
    const body = request?.body;
    const empty = isEmptyBody(body);
    if (!empty && exceedsBytes(body as WebhookBody, maxBodyBytes)) return webhookResponses.payloadTooLarge();
    if (String(request?.method).toUpperCase() !== 'POST') return reply(405, 'method_not_allowed', {}, { allow: 'POST' });
    if (empty) return reply(400, 'empty_body');

    let delivery: { id: string; timestamp: number };
    let text: string;
    try {
      // Converted once: the verifier hashes these bytes and the JSON is read from the same ones.
      const bytes = asHashable(body as WebhookBody);
      delivery = await verifier.verify(request.headers, bytes);
      text = bodyText(bytes);
    } catch (error) {
      if (error instanceof WebhookVerificationError) return reply(400, 'invalid_signature', { reason: error.reason });
      throw error;
    }
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return reply(400, 'invalid_json');
    }

    let claim: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      claim = await store.claim(delivery.id, { leaseMs });
    } catch {
      return reply(503, 'store_unavailable', {}, retryAfter);
    }
    if (claim === 'done') return NO_CONTENT;
    if (claim === 'in-progress') return reply(409, 'in_progress', {}, retryAfter);

    let subject: EventSubject | null;
    try {
      subject = identify(event);
    } catch {
      subject = null;
    }
    const ctx = new DeliveryContext(event, delivery.id, delivery.timestamp, subject, options.client);
    let work: Promise<unknown>;
    try {
      work = Promise.resolve(onEvent(ctx));
    } catch (error) {
      work = Promise.reject(error);
    }
    // Settled by whichever comes first, the work or the deadline (one shared sweeper, not a timer per delivery).
    const outcome = await new Promise<'ok' | 'failed' | typeof TIMED_OUT>((resolve) => {
      const watch = deadlines.watch(() => resolve(TIMED_OUT));
      work.then(
        () => {
          deadlines.forget(watch);
          resolve('ok');
        },
        () => {
          deadlines.forget(watch);
          resolve('failed');
        },
      );
    });
    if (outcome === 'ok') {
      await complete(delivery.id, 'complete');
      return NO_CONTENT;
    }
    if (outcome === 'failed') {
      await release(delivery.id, 'release');
      return reply(500, 'handler_failed');
    }
    // Too slow for the sender: answer now, keep the lease, and record what the work turns out to be.
    ctx.expire();
    work.then(
      () => complete(delivery.id, 'late-complete'),
      () => release(delivery.id, 'late-release'),
    );
    return reply(503, 'handler_timeout', {}, retryAfter);
  };
}

async function fetchResult(client: VerikitClient | undefined, subject: EventSubject | null): Promise<FetchedResult> {
  if (client === undefined) throw new ConfigurationError('client', 'ctx.fetchResult() needs the handler option client');
  if (subject === null)
    throw new InvalidArgumentError('could not tell which case or user this event is about; pass identify to the handler');
  return subject.kind === 'kyb'
    ? { kind: 'kyb', refId: subject.refId, result: await client.kyb.getCase(subject.refId) }
    : { kind: 'kyc', refId: subject.refId, result: await client.kyc.getResult(subject.refId) };
}
