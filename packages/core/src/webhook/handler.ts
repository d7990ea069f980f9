import type { VerikitClient } from '../client/client.js';
import { ConfigurationError } from '../errors.js';
import type { Inbox } from '../inbox/inbox.js';
import type { KybCaseDetails } from '../schemas/kyb.js';
import type { KycResult } from '../schemas/kyc.js';
import { type ClaimResult, type IdempotencyStore, type Lease, LeaseLostError, type LeaseOutcome } from '../store/store.js';
import type { WebhookObserver } from '../telemetry/seam.js';
import type { SpanRecorder, TelemetryOption } from '../telemetry/tracing.js';
import { type DeadlinesFactory, type Outcome, raceDeadline } from '../util/deadlines.js';
import { isPost } from '../util/headers.js';
import { keepLeaseWhile } from '../util/keep-lease.js';
import { failureLevel, type Logger, resolveLogger, tell } from '../util/logger.js';
import { DeliveryContext } from './context.js';
import { WebhookVerificationError } from './errors.js';
import { defaultIdentify, type EventSubject, type IdentifyEvent } from './identify.js';
import { asHashable, bodyText, exceedsBytes, isEmptyBody, type WebhookBody, type WebhookHeaders } from './input.js';
import { DEFAULT_MAX_BODY_BYTES, reply, webhookResponses } from './responses.js';
import type { DeliveryCheck, VerifiedDelivery, WebhookVerifierOptions } from './verify.js';

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

/** Options of `createWebhookHandler` in either mode. */
export interface WebhookHandlerBaseOptions {
  /** The endpoint's signing secret (`whsec_...`). Give this or `secrets`. */
  secret?: string;
  /** Several secrets during a rotation; any one may sign. */
  secrets?: readonly string[];
  /** The API client for `ctx.fetchResult()`, made by `createClient` or `clientFromEnv` (it carries the reading). */
  client?: VerikitClient;
  /** Maps an event to `{ kind, refId }` when `ctx.subject` is first read (default: a best-effort reading; the spec shows no event shape). */
  identify?: IdentifyEvent;
  /** Largest accepted body in bytes (default 1 MiB, Svix's own maximum). */
  maxBodyBytes?: number;
  /** How long `onEvent` may take before the answer is 503 (default 10 s, under Svix's 15 s timeout). */
  deadlineMs?: number;
  /** How long a claim holds (default 60 s); must outlast `deadlineMs`. Work still running past the deadline keeps extending it. */
  leaseMs?: number;
  /** Accepted clock difference in seconds (default 300). */
  toleranceSeconds?: number;
  /** Clock in ms, for tests (default `Date.now`). */
  now?: () => number;
  /**
   * Told about every failure, with the delivery id and where it happened: `onEvent` (`event`,
   * `late-event` after the deadline), the store or inbox (the other stages). Also logged. What it
   * throws (or rejects with) is ignored: the delivery is answered as it would have been.
   */
  onError?: (error: unknown, context: { id: string; stage: WebhookErrorStage }) => void;
  /**
   * Where failures are written (default: `console` for warnings and errors; `false`: nowhere). A
   * failing `onEvent` is an error line with the delivery id; refused deliveries are debug lines
   * with their reason code. Never the secret or the body.
   */
  logger?: Logger | false;
  /**
   * OpenTelemetry: a span per delivery (svix id, outcome, reason), the child of its `traceparent`
   * header when there is one, and the delivery metrics (`verikit.webhook.deliveries`,
   * `verikit.webhook.duration`). Pass `openTelemetry(otel)` from `@verikit/core/otel`, or `false`
   * for none. On Node it is found by itself when `@opentelemetry/api` is installed (and the raw API is taken too).
   */
  telemetry?: TelemetryOption;
}

/** Inline mode: claim the id in a store, run `onEvent` in the request, answer once it is done. */
export interface InlineWebhookOptions extends WebhookHandlerBaseOptions {
  /** Remembers handled ids; `MemoryIdempotencyStore` for one instance, a shared store for several. */
  store: IdempotencyStore;
  /** Your work for one event. Throw to have the sender retry; it runs once per id while the store remembers it. */
  onEvent(ctx: WebhookContext): unknown;
  inbox?: undefined;
}

/**
 * Inbox mode, the spec's "store and enqueue once": the verified event is stored and queued in one
 * atomic step keyed by `svix-id`, and the answer is 204 once it is durable. `createInboxWorker`
 * runs your `onEvent` from the inbox, on any instance.
 */
export interface InboxWebhookOptions extends WebhookHandlerBaseOptions {
  /** Where verified events go (e.g. `createPostgresInbox` from `@verikit/postgres`). */
  inbox: Inbox;
  store?: undefined;
  onEvent?: undefined;
}

/** Options of `createWebhookHandler`: inline mode (`store` + `onEvent`) or inbox mode (`inbox`). */
export type WebhookHandlerOptions = InlineWebhookOptions | InboxWebhookOptions;

/**
 * Where a failure that did not change the answer happened: the inbox failed to accept (`accept`),
 * the store refused or failed a claim
 * (`claim`), recording an outcome failed or found the lease gone (`complete`, `release`, and their
 * `late-` twins after a 503 for slow work), or keeping a slow handler's lease alive failed (`extend`).
 */
export type WebhookErrorStage =
  | 'event'
  | 'late-event'
  | 'accept'
  | 'claim'
  | 'complete'
  | 'release'
  | 'extend'
  | 'late-complete'
  | 'late-release';

/** A request as any framework can give it. */
export interface WebhookRequest {
  method: string;
  headers: WebhookHeaders;
  body: WebhookBody | null | undefined;
  /**
   * Keeps the runtime alive for work that outlives the answer (an `onEvent` past its deadline,
   * then recording its outcome): a Worker's `ctx.waitUntil`. Without it, on Workers that work is
   * dropped when the response is sent.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
}

/** The answer for the framework to send. */
export interface WebhookResponse {
  status: 204 | 400 | 405 | 408 | 409 | 413 | 500 | 503;
  headers: Record<string, string>;
  body: string;
}

/** `(request) => response`, the same for every framework. */
export type WebhookHandler = (request: WebhookRequest) => Promise<WebhookResponse>;

const NO_CONTENT: WebhookResponse = { status: 204, headers: { 'cache-control': 'no-store' }, body: '' };
/** The same answer to a repeat, a distinct object so that metrics can count it as a duplicate. */
export const REPEATED: WebhookResponse = { status: 204, headers: { 'cache-control': 'no-store' }, body: '' };

const COMPLETE_ATTEMPTS = 6;

/** Builds the handler over a delivery-check factory (the platform's node:crypto or WebCrypto one), its deliveries traced by `observer` when there is one. */
export function createHandlerWith(
  options: WebhookHandlerOptions,
  makeCheck: (o: WebhookVerifierOptions, secretOption: string) => DeliveryCheck,
  makeDeadlines: DeadlinesFactory,
  observer: WebhookObserver | undefined,
): WebhookHandler {
  if (options === null || typeof options !== 'object')
    throw new ConfigurationError('options', 'createWebhookHandler needs an options object');
  if (options.secret !== undefined && options.secrets !== undefined)
    throw new ConfigurationError('secret', 'give secret or secrets, not both');
  const inbox = options.inbox;
  if (inbox !== undefined) {
    if (options.store !== undefined) throw new ConfigurationError('inbox', 'give store or inbox, not both');
    if (options.onEvent !== undefined) throw new ConfigurationError('onEvent', 'in inbox mode, onEvent goes to createInboxWorker');
    if (typeof inbox.accept !== 'function') throw new ConfigurationError('inbox', 'inbox must have accept(delivery)');
  } else {
    if (options.store === undefined || typeof options.store.claim !== 'function')
      throw new ConfigurationError('store', 'store is required (e.g. new MemoryIdempotencyStore()), or inbox for inbox mode');
    if (typeof options.onEvent !== 'function') throw new ConfigurationError('onEvent', 'onEvent is required');
  }
  // Narrowed by the checks above: the inline path below runs only without an inbox.
  const store = options.store as IdempotencyStore;
  const onEvent = options.onEvent as InlineWebhookOptions['onEvent'];
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const deadlineMs = options.deadlineMs ?? 10_000;
  const leaseMs = options.leaseMs ?? Math.max(60_000, deadlineMs * 2);
  if (!(leaseMs > deadlineMs))
    throw new ConfigurationError('leaseMs', 'leaseMs must be longer than deadlineMs, or a slow handler could run twice');
  const check = makeCheck(
    { secrets: options.secrets ?? (options.secret as string), toleranceSeconds: options.toleranceSeconds, now: options.now },
    options.secrets === undefined ? 'secret' : 'secrets',
  );
  const identify = options.identify ?? defaultIdentify;
  const claimOptions = { leaseMs };
  const retryAfter = { 'retry-after': String(Math.ceil(Math.min(leaseMs, 30_000) / 1000)) };
  const logger = resolveLogger(options.logger);
  const onError = options.onError;
  /**
   * Every failure: logged (a lost lease as a warning: the store changed nothing), then told to
   * `onError`. One message for all, the stage saying what failed: what each means for the delivery
   * is in the README's stage table, not in every bundle that ships this handler. Told, never
   * trusted: a logger or onError that throws must not change the answer, hang it or keep the lease
   * (`resolveLogger` guards the logger's calls, `tell` the onError's).
   */
  const report = (error: unknown, context: { id: string; stage: WebhookErrorStage }): void => {
    logger[failureLevel(error)]({ ...context, err: error }, 'webhook delivery failed');
    tell(onError, error, context);
  };
  /** A refused delivery: a debug line with its reason code (never the body), then the answer. */
  const refuse = (answer: WebhookResponse, code: string, fields: { id?: string; reason?: string } = {}): WebhookResponse => {
    logger.debug({ status: answer.status, code, ...fields }, 'webhook delivery refused');
    return answer;
  };
  const deadlines = makeDeadlines(deadlineMs);

  /** Tells `onError` when an owner's call found the lease no longer theirs (the store changed nothing). */
  const noteStale = (outcome: LeaseOutcome, lease: Lease, stage: WebhookErrorStage, action: 'complete' | 'release' | 'extend') => {
    if (outcome === 'stale') report(new LeaseLostError(lease.id, action), { id: lease.id, stage });
  };
  /** The work is done but recording it failed: a transient store failure must not turn into a second run, so insist. */
  const insistOnComplete = async (lease: Lease, stage: 'complete' | 'late-complete', failure: unknown): Promise<void> => {
    let error = failure;
    for (let attempt = 2; attempt <= COMPLETE_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** (attempt - 1)));
      try {
        return noteStale(await store.complete(lease), lease, stage, 'complete');
      } catch (next) {
        error = next;
      }
    }
    report(error, { id: lease.id, stage });
  };
  const complete = (lease: Lease, stage: 'complete' | 'late-complete'): Promise<void> =>
    Promise.resolve()
      .then(() => store.complete(lease))
      .then(
        (outcome) => noteStale(outcome, lease, stage, 'complete'),
        (error: unknown) => insistOnComplete(lease, stage, error),
      );
  const release = (lease: Lease, stage: 'release' | 'late-release'): Promise<void> =>
    Promise.resolve()
      .then(() => store.release(lease))
      .then(
        (outcome) => noteStale(outcome, lease, stage, 'release'),
        (error: unknown) => report(error, { id: lease.id, stage }),
      );
  // `span` is undefined when tracing is off: `span?.set({...})` then builds no attributes at all.
  const handle = async (request: WebhookRequest, span: SpanRecorder | undefined): Promise<WebhookResponse> => {
    const body = request?.body;
    const empty = isEmptyBody(body);
    if (!empty && exceedsBytes(body as WebhookBody, maxBodyBytes)) return refuse(webhookResponses.payloadTooLarge(), 'payload_too_large');
    if (!isPost(request?.method)) return refuse(reply(405, 'method_not_allowed', {}, { allow: 'POST' }), 'method_not_allowed');
    if (empty) return refuse(reply(400, 'empty_body'), 'empty_body');

    let delivery: VerifiedDelivery;
    let text: string;
    try {
      // Converted once: the check hashes these bytes and the JSON is read from the same ones.
      const bytes = asHashable(body as WebhookBody);
      const checked = check(request.headers, bytes);
      delivery = checked instanceof Promise ? await checked : (checked as VerifiedDelivery);
      text = bodyText(bytes);
      span?.set({ 'verikit.webhook.id': delivery.id });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        return refuse(reply(400, 'invalid_signature', { reason: error.reason }), 'invalid_signature', { reason: error.reason });
      }
      throw error;
    }
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return refuse(reply(400, 'invalid_json'), 'invalid_json', { id: delivery.id });
    }

    if (inbox !== undefined) {
      try {
        const accepted = await inbox.accept({ id: delivery.id, timestamp: delivery.timestamp, body: text });
        span?.set({ 'verikit.outcome': accepted });
        return accepted === 'duplicate' ? REPEATED : NO_CONTENT;
      } catch (error) {
        // Never a 2xx before the event is durable: the sender retries, nothing is lost.
        report(error, { id: delivery.id, stage: 'accept' });
        return reply(503, 'inbox_unavailable', {}, retryAfter);
      }
    }

    let claim: ClaimResult;
    try {
      claim = await store.claim(delivery.id, claimOptions);
    } catch (error) {
      // A full bounded store says why; either way the sender retries later and nothing is lost.
      report(error, { id: delivery.id, stage: 'claim' });
      return reply(503, 'store_unavailable', {}, retryAfter);
    }
    if (claim.status === 'done') {
      span?.set({ 'verikit.outcome': 'duplicate' });
      return REPEATED;
    }
    if (claim.status === 'in-progress') return refuse(reply(409, 'in_progress', {}, retryAfter), 'in_progress', { id: delivery.id });
    const { lease } = claim;

    const ctx = new DeliveryContext(event, delivery.id, delivery.timestamp, identify, options.client);
    let outcome: Outcome;
    let work: PromiseLike<unknown> | undefined;
    const failed = (error: unknown) => report(error, { id: lease.id, stage: 'event' });
    try {
      const result = onEvent(ctx);
      // A plain value means the work is already done; only pending work races the deadline.
      if (isThenable(result)) work = result;
      outcome = work === undefined ? 'ok' : await raceDeadline(deadlines, work, failed);
    } catch (error) {
      failed(error);
      outcome = 'failed';
    }
    if (outcome === 'ok') {
      // Awaited here rather than through a helper: one more await is a measurable share of the route.
      try {
        noteStale(await store.complete(lease), lease, 'complete', 'complete');
      } catch (error) {
        await insistOnComplete(lease, 'complete', error);
      }
      return NO_CONTENT;
    }
    if (outcome === 'failed') {
      await release(lease, 'release');
      return reply(500, 'handler_failed');
    }
    // Too slow for the sender: answer now, keep the lease alive, and record what the work turns out to be.
    ctx.expire();
    logger.warn({ id: lease.id, deadlineMs }, 'webhook onEvent passed its deadline; answered 503, its outcome is recorded when it ends');
    const slow = work as PromiseLike<unknown>;
    // Before the deadline the lease, longer than it, needs nothing; past it, the lease is kept alive.
    keepLeaseWhile(slow, leaseMs / 3, () => store.extend(lease, claimOptions), {
      stale: () => noteStale('stale', lease, 'extend', 'extend'),
      error: (error) => report(error, { id: lease.id, stage: 'extend' }),
    });
    const settled = Promise.resolve(slow).then(
      () => complete(lease, 'late-complete'),
      (error: unknown) => {
        report(error, { id: lease.id, stage: 'late-event' });
        return release(lease, 'late-release');
      },
    );
    request.waitUntil?.(settled);
    return reply(503, 'handler_timeout', {}, retryAfter);
  };
  return observer === undefined ? (request) => handle(request, undefined) : observer.trace(handle);
}

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | null)?.then === 'function';
