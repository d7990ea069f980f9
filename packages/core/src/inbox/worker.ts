import type { VerikitClient } from '../client/client.js';
import { backoffDelay } from '../client/retry.js';
import { ConfigurationError } from '../errors.js';
import type { LedgerEngine } from '../ledger/ledger.js';
import { createLedgerObserver, type LedgerChangeContext, type LedgerObserver, type LedgerObserverOptions } from '../ledger/observe.js';
import { LeaseLostError, type LeaseOutcome } from '../store/store.js';
import { type EventRun, inboxMetrics } from '../telemetry/inbox-metrics.js';
import { resolveMeter } from '../telemetry/meter.js';
import type { Watching } from '../telemetry/stats-gauges.js';
import { resolveTracing, type SpanRecorder, type TelemetryOption, TRACER_SCOPE } from '../telemetry/tracing.js';
import { keepLeaseWhile } from '../util/keep-lease.js';
import { describeError, errorReason, failureLevel, type Logger, resolveLogger, tell } from '../util/logger.js';
import { positiveInteger } from '../util/option-checks.js';
import { VERSION } from '../version.js';
import { DeliveryContext } from '../webhook/context.js';
import type { WebhookContext } from '../webhook/handler.js';
import { defaultIdentify, type EventSubject, type IdentifyEvent } from '../webhook/identify.js';
import { InboxEventAbandonedError, InboxEventTimeoutError, UnidentifiedEventError } from './errors.js';
import type { DeadLetter, InboxEngine, InboxEvent } from './inbox.js';

/** What `onEvent` receives in a worker: the webhook `ctx`, plus the attempt and the engine's transaction. */
export interface InboxContext<Tx = unknown> extends WebhookContext {
  /** This attempt's number, from 1. */
  readonly attempt: number;
  /** The transaction that also marks the event done: write through it, and your change and "done" commit together. */
  readonly sql: Tx;
}

/** Where a worker failure happened: the integrator's `onEvent` (`event`) or the inbox itself. */
export type InboxErrorStage = 'event' | 'lease' | 'extend' | 'complete' | 'fail';

/** Options of {@link createInboxWorker}. */
export interface InboxWorkerOptions<Tx = unknown, LedgerTx = unknown>
  extends Partial<Pick<LedgerObserverOptions<LedgerTx>, 'readsPerMinute' | 'schedule' | 'lockMs' | 'fingerprint'>> {
  /** The inbox to drain (e.g. `createPostgresInbox` from `@verikit/postgres`). */
  inbox: InboxEngine<Tx>;
  /**
   * Your work for one event. Throw to have it retried with backoff; it is dead-lettered after
   * `retry.maxAttempts`. With a `ledger`, only for events whose verification `identify` cannot read
   * (without it, those are dead-lettered with an {@link UnidentifiedEventError}).
   */
  onEvent?(ctx: InboxContext<Tx>): unknown;
  /**
   * The verification ledger: each event's verification is read under its lock and `onChange` runs
   * once per change, in the service's order (needs `client` and `onChange`; give the reconciler the same options).
   */
  ledger?: LedgerEngine<LedgerTx>;
  /** With a `ledger`: your reaction to one change of a verification, in the transaction that records it. */
  onChange?(ctx: LedgerChangeContext<LedgerTx>): unknown;
  /** The API client for `ctx.fetchResult()`, made by `createClient` or `clientFromEnv` (it carries the reading). */
  client?: VerikitClient;
  /** Maps an event to `{ kind, refId }` when `ctx.subject` is first read (default: a best-effort reading). */
  identify?: IdentifyEvent;
  /** Events run at once by this worker (default 4). */
  concurrency?: number;
  /** How long a leased event is held (default 60 s); extended while `onEvent` runs, so a slow one keeps it. */
  leaseMs?: number;
  /**
   * Longest an `onEvent` may run (default 5 min). Past it, `ctx.signal` aborts, the event's
   * transaction rolls back, its slot is freed and the attempt counts as failed (an
   * {@link InboxEventTimeoutError}): retried with backoff, or dead-lettered at the last attempt. Work
   * that never settles would otherwise hold its slot, lease and transaction for good.
   */
  eventTimeoutMs?: number;
  /**
   * Attempts before an event is dead-lettered (default 8), and the backoff between them (default 1 s
   * doubling, full jitter, at most 15 min). Attempts are counted when an event is leased, so one whose
   * worker dies while running it is dead-lettered too once leased more often than this ({@link InboxEventAbandonedError}).
   */
  retry?: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /** Longest wait for new work when the inbox has no notification to give (default 1 000 ms). */
  pollIntervalMs?: number;
  /** Told about every failure, with where it happened; also logged. What it throws (or rejects with) is ignored. */
  onError?: (error: unknown, context: { id: string | undefined; stage: InboxErrorStage; attempt?: number }) => void;
  /**
   * Where failures are written (default: `console` for warnings and errors; `false`: nowhere): a
   * failed attempt is a warning with the id, attempt and next try, a dead-lettered event an error.
   * Never the event body.
   */
  logger?: Logger | false;
  /**
   * OpenTelemetry: a span per run of an event (svix id, attempt, outcome, reason), and the metrics:
   * each run's duration and outcome, the attempts an event took, the inbox's depth while the worker
   * runs (and the ledger's, with one). The inbox keeps no headers, so each run starts its own trace.
   * Pass `openTelemetry(otel)` from `@verikit/core/otel`, or `false` for none; on Node it is found by
   * itself when `@opentelemetry/api` is installed (and the raw API is taken too).
   */
  telemetry?: TelemetryOption;
  /** Random source for the backoff jitter, for tests (default `Math.random`). */
  random?: () => number;
}

/** A running worker. */
export interface InboxWorker {
  /** Starts draining; a no-op when already running. */
  start(): void;
  /**
   * Stops taking events and waits up to `timeoutMs` (default 30 s) for those running to finish.
   * Work still running then has its `ctx.signal` aborted; its lease runs out and it is retried.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** Dead-lettered events, oldest first. */
  deadLetters(options?: { limit?: number }): Promise<DeadLetter[]>;
  /** Queues a dead-lettered event again, with fresh attempts. */
  replay(id: string): Promise<boolean>;
}

class InboxEventContext<Tx> extends DeliveryContext implements InboxContext<Tx> {
  constructor(
    event: unknown,
    delivery: InboxEvent,
    identify: IdentifyEvent,
    client: VerikitClient | undefined,
    readonly sql: Tx,
  ) {
    super(event, delivery.id, delivery.timestamp, identify, client);
    this.attempt = delivery.attempt;
  }

  readonly attempt: number;
}

/**
 * Drains an inbox: leases due events, runs `onEvent(ctx)` in the transaction that marks each done,
 * retries failures with exponential backoff and full jitter, and dead-letters an event after
 * `retry.maxAttempts`. Run one on any number of instances; each event runs to completion once.
 * @example
 * const worker = createInboxWorker({ inbox, client, onEvent: async (ctx) => { await ctx.sql.query('insert ...') } });
 * worker.start();
 * process.on('SIGTERM', () => worker.stop());
 */
export function createInboxWorker<Tx, LedgerTx = unknown>(options: InboxWorkerOptions<Tx, LedgerTx>): InboxWorker {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', 'createInboxWorker needs an options object');
  const { inbox, onEvent } = options;
  if (inbox === undefined || typeof inbox.lease !== 'function')
    throw new ConfigurationError('inbox', 'inbox is required (an inbox engine)');
  if (onEvent !== undefined && typeof onEvent !== 'function') throw new ConfigurationError('onEvent', 'onEvent must be a function');
  if (options.ledger === undefined && onEvent === undefined)
    throw new ConfigurationError('onEvent', 'onEvent is required (or a ledger with onChange)');
  const observer: LedgerObserver<LedgerTx> | undefined =
    options.ledger === undefined
      ? undefined
      : createLedgerObserver({
          ledger: options.ledger,
          client: options.client as VerikitClient,
          onChange: options.onChange as LedgerObserverOptions<LedgerTx>['onChange'],
          readsPerMinute: options.readsPerMinute,
          schedule: options.schedule,
          lockMs: options.lockMs,
          fingerprint: options.fingerprint,
          logger: options.logger,
          telemetry: options.telemetry,
        });
  const concurrency = positiveInteger('concurrency', options.concurrency, 4);
  const leaseMs = positiveInteger('leaseMs', options.leaseMs, 60_000);
  // Five minutes: far more than an event's own work needs (each client call ends by its 45 s
  // deadline), short enough that a hung call gives back its slot and transaction within minutes.
  const eventTimeoutMs = positiveInteger('eventTimeoutMs', options.eventTimeoutMs, 5 * 60_000);
  const maxAttempts = positiveInteger('retry.maxAttempts', options.retry?.maxAttempts, 8);
  const backoff = {
    baseDelayMs: positiveInteger('retry.baseDelayMs', options.retry?.baseDelayMs, 1_000),
    maxDelayMs: positiveInteger('retry.maxDelayMs', options.retry?.maxDelayMs, 15 * 60_000),
    random: options.random ?? Math.random,
  };
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs, 1_000);
  const identify = options.identify ?? defaultIdentify;
  const logger = resolveLogger(options.logger);
  const onError = options.onError;
  /** Every failure but `onEvent`'s own (logged where its retry is decided): logged, then told to `onError`. */
  const report: NonNullable<InboxWorkerOptions['onError']> = (error, context) => {
    if (context.stage !== 'event') {
      logger[failureLevel(error)]({ ...context, err: error }, `inbox worker: ${context.stage} failed`);
    }
    tell(onError, error, context);
  };
  const workerId = crypto.randomUUID();
  const active = new Set<Promise<void>>();
  const running = new Set<InboxEventContext<Tx>>();
  let leases = 0;
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;
  let watching: Watching[] = [];

  const noteStale = (outcome: LeaseOutcome, event: InboxEvent, stage: InboxErrorStage, action: 'complete' | 'extend' | 'fail') => {
    if (outcome === 'stale') report(new LeaseLostError(event.id, action), { id: event.id, stage, attempt: event.attempt });
  };

  /** Runs `onEvent` for one event, bounded by `eventTimeoutMs`: past it the signal aborts and the work rejects, so the engine rolls back. */
  const runBounded = async (event: InboxEvent, tx: Tx): Promise<void> => {
    const ctx = new InboxEventContext(JSON.parse(event.body), event, identify, options.client, tx);
    const handle = onEvent as (ctx: InboxContext<Tx>) => unknown;
    running.add(ctx);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const work = Promise.resolve().then(() => handle(ctx));
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const timeout = new InboxEventTimeoutError(event.id, event.attempt, eventTimeoutMs);
        ctx.expire(timeout);
        reject(timeout);
      }, eventTimeoutMs);
    });
    // Whatever an abandoned onEvent does later (it may reject once its signal aborts) is no longer this attempt's.
    work.catch(() => {});
    return Promise.race([work, timedOut])
      .then(() => {})
      .finally(() => {
        clearTimeout(timer);
        running.delete(ctx);
      });
  };

  /** Records a failed attempt: due again after a backoff, or dead-lettered once `retry.maxAttempts` is reached (or at once when `final`). */
  const failAttempt = async (
    event: InboxEvent,
    error: unknown,
    span: SpanRecorder | undefined,
    { final = false, what = 'onEvent' }: { final?: boolean; what?: 'onEvent' | 'ledger observation' } = {},
  ): Promise<EventRun> => {
    report(error, { id: event.id, stage: 'event', attempt: event.attempt });
    const retryInMs = final || event.attempt >= maxAttempts ? null : backoffDelay(event.attempt - 1, backoff);
    span?.set({ 'verikit.outcome': retryInMs === null ? 'dead_lettered' : 'retry', 'verikit.reason': errorReason(error) });
    span?.fail(error);
    const fields = { id: event.id, attempt: event.attempt, err: error };
    if (retryInMs === null)
      logger.error({ ...fields, maxAttempts }, 'inbox event failed for the last time; dead-lettered (replay it with worker.replay(id))');
    else logger.warn({ ...fields, retryInMs: Math.round(retryInMs) }, `inbox ${what} failed; it will be retried`);
    try {
      noteStale(await inbox.fail(event, { error: describeError(error).slice(0, 2_000), retryInMs }), event, 'fail', 'fail');
    } catch (failure) {
      // Unrecorded, the lease simply runs out and the event is leased again: nothing is lost.
      report(failure, { id: event.id, stage: 'fail', attempt: event.attempt });
    }
    return { outcome: retryInMs === null ? 'dead_lettered' : 'retry', error };
  };

  /** The event's verification, or `null` when its body or `identify` cannot tell. */
  const identifyEvent = (event: InboxEvent): EventSubject | null => {
    try {
      return identify(JSON.parse(event.body));
    } catch {
      return null;
    }
  };

  const observing = new Set<AbortController>();
  /**
   * Observes the event's verification through the ledger, bounded by `eventTimeoutMs`. It records
   * in the ledger's own transaction; the event is marked done after it, so a crash in between
   * observes again and finds nothing new.
   */
  const observeBounded = async (ledgerObserver: LedgerObserver<LedgerTx>, event: InboxEvent, subject: EventSubject): Promise<void> => {
    const controller = new AbortController();
    observing.add(controller);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const timeout = new InboxEventTimeoutError(event.id, event.attempt, eventTimeoutMs);
        controller.abort(timeout);
        reject(timeout);
      }, eventTimeoutMs);
    });
    const work = ledgerObserver.observe(subject, 'webhook', { receivedAt: event.receivedAt, signal: controller.signal });
    work.catch(() => {});
    try {
      await Promise.race([work, timedOut]);
    } finally {
      clearTimeout(timer);
      observing.delete(controller);
    }
  };

  const tracing = resolveTracing(options.telemetry, TRACER_SCOPE, VERSION);
  const metrics = inboxMetrics(resolveMeter(options.telemetry));
  const runInSpan = async (event: InboxEvent, span: SpanRecorder | undefined): Promise<EventRun> => {
    span?.set({ 'verikit.webhook.id': event.id, 'verikit.attempt': event.attempt });
    // Leased more often than allowed: an earlier attempt died with its worker. Running it again could kill this one too.
    if (event.attempt > maxAttempts) return failAttempt(event, new InboxEventAbandonedError(event.id, event.attempt, maxAttempts), span);
    if (event.unreadable !== undefined) return failAttempt(event, event.unreadable, span);
    const subject = observer === undefined ? null : identifyEvent(event);
    const viaLedger = observer !== undefined && subject !== null ? { observer, subject } : undefined;
    try {
      if (observer !== undefined && subject === null && onEvent === undefined)
        return failAttempt(event, new UnidentifiedEventError(event.id), span, { final: true });
      const completion = viaLedger
        ? observeBounded(viaLedger.observer, event, viaLedger.subject).then(() => inbox.complete(event, async () => {}))
        : inbox.complete(event, (tx) => runBounded(event, tx));
      // The lease is extended while the work runs, so a slow onEvent never loses it to another worker.
      keepLeaseWhile(completion, leaseMs / 3, () => inbox.extend(event, leaseMs), {
        stale: () => noteStale('stale', event, 'extend', 'extend'),
        error: (error) => report(error, { id: event.id, stage: 'extend', attempt: event.attempt }),
      });
      const outcome = await completion;
      noteStale(outcome, event, 'complete', 'complete');
      span?.set({ 'verikit.outcome': outcome === 'stale' ? 'lease_lost' : 'done' });
      return { outcome: outcome === 'stale' ? 'lease_lost' : 'done' };
    } catch (error) {
      return failAttempt(event, error, span, { what: viaLedger ? 'ledger observation' : 'onEvent' });
    }
  };

  const run = (event: InboxEvent): Promise<void> => {
    const started = performance.now();
    const ran = tracing.span('verikit inbox event', 'consumer', undefined, (span) => runInSpan(event, span));
    return ran.then((result) => metrics.recorder()?.(result, event.attempt, performance.now() - started));
  };

  const drain = async (signal: AbortSignal): Promise<void> => {
    while (!signal.aborted) {
      // A meter provider registered since is picked up here, for the inbox's gauges.
      for (const watch of watching) watch.refresh();
      if (active.size >= concurrency) {
        await Promise.race(active);
        continue;
      }
      let events: InboxEvent[];
      try {
        events = await inbox.lease(`${workerId}:${++leases}`, concurrency - active.size, leaseMs);
      } catch (error) {
        report(error, { id: undefined, stage: 'lease' });
        await inbox.waitForWork(signal, pollIntervalMs).catch(() => {});
        continue;
      }
      if (events.length === 0) {
        await inbox.waitForWork(signal, pollIntervalMs).catch(() => new Promise((resolve) => setTimeout(resolve, pollIntervalMs)));
        continue;
      }
      for (const event of events) {
        // run() handles onEvent's failures; one of its own (a throwing `random`, a telemetry SDK) is logged and told,
        // never left to reject the race below and end this loop. The event's lease runs out and it runs again.
        const work: Promise<void> = run(event)
          .catch((error: unknown) => {
            logger.error({ id: event.id, attempt: event.attempt, err: error }, 'inbox worker: running an event failed');
            tell(onError, error, { id: event.id, stage: 'event', attempt: event.attempt });
          })
          .finally(() => active.delete(work));
        active.add(work);
      }
    }
  };

  return {
    start() {
      if (stopping !== undefined && !stopping.signal.aborted) return;
      stopping = new AbortController();
      watching = observer === undefined ? [metrics.watch(inbox)] : [metrics.watch(inbox), observer.watch()];
      loop = drain(stopping.signal);
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping?.abort();
      for (const watch of watching.splice(0)) watch.stop();
      // One deadline for both waits: the loop may itself be parked on a full set of running events.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([loop, deadline]);
      await Promise.race([Promise.allSettled([...active]), deadline]);
      clearTimeout(timer);
      for (const ctx of running) ctx.expire();
      for (const controller of observing) controller.abort(new Error('the worker stopped'));
    },
    deadLetters: (o) => inbox.deadLetters(o),
    replay: (id) => inbox.replay(id),
  };
}
