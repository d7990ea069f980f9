import type { VerikitClient } from '../client/client.js';
import { NotFoundError, RateLimitError } from '../client/errors.js';
import { ConfigurationError, VerikitError } from '../errors.js';
import type { KybCaseDetails } from '../schemas/kyb.js';
import type { KycResult } from '../schemas/kyc.js';
import type { TelemetryOption } from '../telemetry/api.js';
import { ledgerMetrics } from '../telemetry/ledger-metrics.js';
import { resolveMeter } from '../telemetry/meter.js';
import type { Watching } from '../telemetry/stats-gauges.js';
import { type Logger, resolveLogger } from '../util/logger.js';
import { positiveNumber } from '../util/option-checks.js';
import { sleep } from '../util/sleep.js';
import { defaultFingerprint, type Fingerprint, observationOf, type VerificationResult } from './fingerprint.js';
import {
  checkLedgerKey,
  type LedgerChange,
  type LedgerEngine,
  type LedgerKey,
  type LedgerLock,
  missedWebhook,
  type ObservationSource,
} from './ledger.js';
import { type ReconcileSchedule, type ReconcileScheduleOptions, resolveSchedule } from './schedule.js';

/** What `onChange` receives: the change, the typed result it was read from, and the transaction that records it. */
export type LedgerChangeContext<Tx = unknown> = LedgerChange & {
  /** The transaction (Postgres) or guarded script (Redis) that records this change: write through it and both commit together. */
  readonly sql: Tx;
} & ({ readonly kind: 'kyb'; readonly result: KybCaseDetails } | { readonly kind: 'kyc'; readonly result: KycResult });

/** Options shared by everything that observes verifications: the inbox worker's `ledger` mode and the reconciler. Pass the same to both. */
export interface LedgerObserverOptions<Tx = unknown> {
  /** Where the ledger lives (`createPostgresLedger`, `createRedisLedger`, `createMemoryLedger`). */
  ledger: LedgerEngine<Tx>;
  /** The API client the results are read with. */
  client: VerikitClient;
  /**
   * Your reaction to one change, run once per change, in the service's order, in the transaction
   * that records it. Throw to have it tried again (the change is not recorded until it returns).
   */
  onChange(ctx: LedgerChangeContext<Tx>): unknown;
  /**
   * Reads of results per minute, shared by every instance (default 60): webhook and reconciler
   * reads alike, spaced evenly, never a burst. A 429 from the service pauses them by its `Retry-After`.
   */
  readsPerMinute?: number;
  /** When verifications are checked (see {@link ReconcileScheduleOptions}). */
  schedule?: ReconcileScheduleOptions;
  /** How long a refId's lock is held for one fetch before others may take it (default 60 s). */
  lockMs?: number;
  /** What counts as a change (default {@link defaultFingerprint}). */
  fingerprint?: Fingerprint;
  /** Where warnings go (default `console`; `false`: nowhere). Never a result or a personal field. */
  logger?: Logger | false;
  /**
   * OpenTelemetry metrics: reads, changes and missed webhooks, and the ledger's pending
   * verifications. Pass `openTelemetry(otel)` from `@verikit/core/otel`, or `false` for none; on Node
   * it is found by itself when `@opentelemetry/api` is installed (and the raw API is taken too).
   */
  telemetry?: TelemetryOption;
}

/** What one observation did: recorded a change, saw the same result, or was `settled` by a fetch that started after the event arrived. */
export type ObserveOutcome = 'changed' | 'unchanged' | 'settled';

/** Another observation held the refId's lock for longer than `lockMs`: the event is tried again later. */
export class LedgerBusyError extends VerikitError {
  override name = 'LedgerBusyError';
  constructor(key: LedgerKey, waitedMs: number) {
    super('ledger_busy', `${key.kind} ${JSON.stringify(key.refId)} stayed locked by another observation for ${waitedMs} ms`);
  }
}

/** An event arrived before this fetch started if its time is earlier by more than this: instances' clocks may differ a little. */
const CLOCK_SKEW_MS = 1_000;

/** Reads one verification's result under its lock and records what changed: the one path for webhooks and the reconciler. */
export interface LedgerObserver<Tx = unknown> {
  readonly ledger: LedgerEngine<Tx>;
  readonly schedule: ReconcileSchedule;
  readonly lockMs: number;
  /** Observes `key` now: tracks it if the ledger does not know it, waits for its lock, reads within the budget, records. */
  observe(
    key: LedgerKey,
    source: ObservationSource,
    options?: { receivedAt?: Date | undefined; signal?: AbortSignal },
  ): Promise<ObserveOutcome>;
  /** Observes the row a lock (from `claimDue`) holds; `slotAt`: when a budget slot already waited for came (used only while still fresh). */
  observeLocked(
    lock: LedgerLock,
    source: ObservationSource,
    options?: { signal?: AbortSignal; slotAt?: number },
  ): Promise<ObserveOutcome | { released: number }>;
  /** How many changes were found by the reconciler (webhooks that never arrived) since start. */
  readonly missed: number;
  /** Reports the ledger's pending verifications and the read budget on the metrics' gauges until the watch is stopped. */
  watch(): Watching;
}

/** Checks the options and builds the observer the worker and the reconciler share. */
export function createLedgerObserver<Tx>(options: LedgerObserverOptions<Tx>): LedgerObserver<Tx> {
  const { ledger, client, onChange } = options;
  if (ledger === undefined || typeof ledger.lock !== 'function')
    throw new ConfigurationError('ledger', 'ledger is required (a ledger engine)');
  if (client === undefined || typeof client.kyb?.getCase !== 'function')
    throw new ConfigurationError('client', 'client is required: the ledger reads each result from the service');
  if (typeof onChange !== 'function') throw new ConfigurationError('onChange', 'onChange is required');
  // One percent under the budget: a read leaves a little after its slot, and a window must never hold more than the budget.
  const readsPerMinute = positiveNumber('readsPerMinute', options.readsPerMinute, 60);
  const readIntervalMs = 60_000 / (readsPerMinute * 0.99);
  const lockMs = positiveNumber('lockMs', options.lockMs, 60_000, 'ms');
  const schedule = resolveSchedule(options.schedule);
  const fingerprint = options.fingerprint ?? defaultFingerprint;
  const logger = resolveLogger(options.logger);
  const metrics = ledgerMetrics(resolveMeter(options.telemetry));
  let missed = 0;

  const read = async (key: LedgerKey, source: ObservationSource, signal: AbortSignal | undefined): Promise<VerificationResult> => {
    // One attempt per read: a retry would be a request the budget did not count. The schedule retries.
    const call = { maxRetries: 0, ...(signal ? { signal } : {}) };
    try {
      return key.kind === 'kyb'
        ? { kind: 'kyb', result: await client.kyb.getCase(key.refId, call) }
        : { kind: 'kyc', result: await client.kyc.getResult(key.refId, call) };
    } finally {
      // Counted once it is answered (or failed): it spent the budget either way.
      metrics.recorder()?.read(source);
    }
  };

  const releaseQuietly = async (lock: LedgerLock, nextCheckAt: Date | null, failures: number) => {
    await ledger.release(lock, { nextCheckAt, failures }).catch((error) => {
      // Unreleased, the lock simply runs out: nothing is lost.
      logger.warn({ kind: lock.key.kind, refId: lock.key.refId, err: error }, 'ledger: could not release a lock');
    });
  };
  const unchanged = (lock: LedgerLock) => releaseQuietly(lock, lock.entry.nextCheckAt, lock.entry.failures);

  /** Reads and records under `lock`; a failed read or onChange releases the lock with a backoff and rethrows. */
  const fetchAndRecord = async (lock: LedgerLock, source: ObservationSource, signal: AbortSignal | undefined): Promise<ObserveOutcome> => {
    const { key, entry } = lock;
    const fields = { kind: key.kind, refId: key.refId };
    let result: VerificationResult;
    try {
      result = await read(key, source, signal);
    } catch (error) {
      if (error instanceof RateLimitError) await ledger.pauseReads(error.retryAfterMs ?? 60_000).catch(() => {});
      const failures = entry.failures + 1;
      // Tracked before its create call, never seen by the service: the create may still be on its way, or it failed.
      if (error instanceof NotFoundError && entry.version === 0) {
        logger.warn({ ...fields, failures }, 'ledger: the service does not know this verification (yet): was its create call refused?');
      }
      await releaseQuietly(lock, schedule.afterFailure(failures, Date.now()), failures);
      throw error;
    }
    const seen = observationOf(result, fingerprint, client.kyc.classify);
    let outcome: 'changed' | 'unchanged' | 'stale';
    try {
      outcome = await ledger.record(
        lock,
        { ...seen, source },
        () => schedule.next({ trackedAt: entry.trackedAt, final: seen.final }, Date.now(), source === 'webhook'),
        async (change, sql) => {
          await onChange({ ...change, ...result, sql } as LedgerChangeContext<Tx>);
        },
      );
    } catch (error) {
      const failures = entry.failures + 1;
      await releaseQuietly(lock, schedule.afterFailure(failures, Date.now()), failures);
      throw error;
    }
    if (outcome === 'stale') {
      // Our lock ran out and another observation took it: that one started later and records what we would have.
      logger.warn(fields, 'ledger: an observation outlived its lock (lockMs); the newer one records it');
      return 'settled';
    }
    const change = { kind: key.kind, source, version: entry.version + 1, final: seen.final, current: seen.status };
    const wasMissed = outcome === 'changed' && missedWebhook(change);
    if (outcome === 'changed') metrics.recorder()?.changed(source, key.kind, wasMissed);
    if (wasMissed) {
      missed++;
      logger.warn(
        { ...fields, version: entry.version + 1, previous: entry.status, current: seen.status },
        'ledger: a change was found by polling: a webhook was missed',
      );
    }
    return outcome;
  };

  /**
   * Takes the read's budget slot while holding `lock`: waits for it and answers `true`, or, for a
   * wait too long to hold the lock through, lets the lock go, waits, and answers when the slot came.
   */
  const awaitSlot = async (lock: LedgerLock, signal: AbortSignal | undefined): Promise<true | { released: number }> => {
    const waitMs = await ledger.reserveRead({ intervalMs: readIntervalMs });
    if (waitMs <= lockMs / 2) {
      try {
        await sleep(waitMs, signal);
      } catch (error) {
        // Stopped while waiting: hand the row back now, not when its lock runs out.
        await unchanged(lock);
        throw error;
      }
      return true;
    }
    await unchanged(lock);
    await sleep(waitMs, signal);
    return { released: Date.now() };
  };
  /**
   * Whether a slot that came at `slotAt` may still be used: a read made well after its slot (a lock
   * waited for meanwhile) would bunch with the reads of the slots after it, over the budget in a window.
   */
  const fresh = (slotAt: number | undefined): boolean => slotAt !== undefined && Date.now() - slotAt <= readIntervalMs / 2;

  /** Takes `key`'s lock, tracking it first when the ledger does not know it; waits out another holder up to `lockMs`. */
  const acquire = async (key: LedgerKey, signal: AbortSignal | undefined): Promise<LedgerLock> => {
    const started = Date.now();
    for (let wait = 20; ; wait = Math.min(wait * 2, 1_000)) {
      const lock = await ledger.lock(key, { leaseMs: lockMs });
      if (typeof lock !== 'string') return lock;
      if (lock === 'untracked') {
        // A verification created elsewhere, first heard of by its webhook: the ledger learns of it now.
        await ledger.track(key, { nextCheckAt: schedule.first(new Date()) });
        continue;
      }
      if (Date.now() - started > lockMs) throw new LedgerBusyError(key, Date.now() - started);
      await sleep(wait, signal);
    }
  };

  /** Whether a fetch recorded under this row started after the event arrived (so it saw what the event announced, or later). */
  const settles = (lock: LedgerLock, receivedAt: Date | undefined): boolean =>
    receivedAt !== undefined && lock.entry.observedAt !== null && receivedAt.getTime() + CLOCK_SKEW_MS < lock.entry.observedAt.getTime();

  return {
    ledger,
    schedule,
    lockMs,
    get missed() {
      return missed;
    },
    watch: () => metrics.watch(ledger, readsPerMinute),
    async observe(key, source, { receivedAt, signal } = {}) {
      const checked = checkLedgerKey(key);
      let slotAt: number | undefined;
      for (;;) {
        const lock = await acquire(checked, signal);
        if (settles(lock, receivedAt)) {
          await unchanged(lock);
          return 'settled';
        }
        if (!fresh(slotAt)) {
          const slot = await awaitSlot(lock, signal);
          if (slot !== true) {
            slotAt = slot.released;
            continue;
          }
        }
        return fetchAndRecord(lock, source, signal);
      }
    },
    async observeLocked(lock, source, { signal, slotAt } = {}) {
      if (!fresh(slotAt)) {
        const slot = await awaitSlot(lock, signal);
        if (slot !== true) return slot;
      }
      return fetchAndRecord(lock, source, signal);
    },
  };
}
