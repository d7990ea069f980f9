import { ConfigurationError } from '../errors.js';
import type { Watching } from '../telemetry/stats-gauges.js';
import { type Logger, resolveLogger, tell } from '../util/logger.js';
import { positiveInteger } from '../util/option-checks.js';
import { sleep } from '../util/sleep.js';
import type { LedgerKey } from './ledger.js';
import { createLedgerObserver, type LedgerObserverOptions, type ObserveOutcome } from './observe.js';

/** Options of {@link createReconciler}: the worker's ledger options, plus how it polls. */
export interface ReconcilerOptions<Tx = unknown> extends LedgerObserverOptions<Tx> {
  /** How long an idle reconciler waits before looking for due rows again (default 1 000 ms). */
  pollIntervalMs?: number;
  /** Warn when verifications are pending and no webhook has led to an observation for this long (default 6 h). */
  silenceWarningMs?: number;
  /** Told about every failed check (also logged as a warning with the refId and the error's code); what it throws is ignored. */
  onError?: (error: unknown, key: LedgerKey) => void;
}

/** What a reconciler did since it was made. */
export interface ReconcilerStats {
  /** Rows checked (a read of the service each). */
  checks: number;
  /** Changes it found: each one a webhook that never arrived. */
  missedWebhooks: number;
  /** Checks that failed (retried later by the schedule's backoff). */
  failures: number;
}

/** A running reconciler. */
export interface Reconciler {
  /** Starts checking due verifications; a no-op when running. */
  start(): void;
  /** Stops after the check in progress (waits up to `timeoutMs`, default 30 s). */
  stop(options?: { timeoutMs?: number }): Promise<void>;
  /** Checks one verification now (through the read budget), tracking it if the ledger does not know it. */
  check(key: LedgerKey): Promise<ObserveOutcome>;
  /** Counts since it was made. */
  stats(): ReconcilerStats;
}

/**
 * Keeps the ledger equal to the service when webhooks are lost: on every instance, takes due rows
 * one at a time, reads each within the shared budget and records what changed through the same
 * path as the webhook worker. A change it finds is a warning naming the refId: a webhook was missed.
 * @example
 * const reconciler = createReconciler({ ledger, client, onChange, readsPerMinute: 60 });
 * reconciler.start();
 * process.on('SIGTERM', () => reconciler.stop());
 */
export function createReconciler<Tx>(options: ReconcilerOptions<Tx>): Reconciler {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', 'createReconciler needs an options object');
  const observer = createLedgerObserver(options);
  const { ledger } = observer;
  const pollIntervalMs = positiveInteger('pollIntervalMs', options.pollIntervalMs, 1_000);
  const silenceWarningMs = positiveInteger('silenceWarningMs', options.silenceWarningMs, 6 * 60 * 60_000);
  const logger: Logger = resolveLogger(options.logger);
  const stats = { checks: 0, failures: 0 };
  const startedAt = Date.now();
  let silenceWarnedAt = 0;
  let silenceCheckedAt = 0;
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;
  let watching: Watching | undefined;

  /** Warns (at most once per silence period) when verifications are pending and webhooks have gone quiet. */
  const checkSilence = async () => {
    const now = Date.now();
    // A count of the ledger at most once a minute (or a quarter of the period), not once per check.
    if (now - silenceWarnedAt < silenceWarningMs || now - silenceCheckedAt < Math.min(60_000, silenceWarningMs / 4)) return;
    silenceCheckedAt = now;
    const { pending, lastWebhookAt } = await ledger.stats();
    const quietSince = lastWebhookAt?.getTime() ?? startedAt;
    if (pending > 0 && now - quietSince >= silenceWarningMs) {
      silenceWarnedAt = now;
      logger.warn(
        { pending, lastWebhookAt: lastWebhookAt?.toISOString() ?? null },
        'ledger: verifications are pending and no webhook has arrived for a while: is the webhook endpoint down, or its secret wrong?',
      );
    }
  };

  const checkOne = async (signal: AbortSignal): Promise<boolean> => {
    const [lock] = await ledger.claimDue({ limit: 1, leaseMs: observer.lockMs });
    if (lock === undefined) return false;
    try {
      const outcome = await observer.observeLocked(lock, 'reconcile', { signal });
      if (typeof outcome === 'object') {
        // The budget's wait was long, so the row was let go meanwhile; the slot waited for is ours now.
        const [again] = await ledger.claimDue({ limit: 1, leaseMs: observer.lockMs });
        if (again === undefined) return true;
        await observer.observeLocked(again, 'reconcile', { signal, slotAt: outcome.released });
      }
      stats.checks++;
    } catch (error) {
      if (signal.aborted) return false;
      stats.failures++;
      logger.warn({ kind: lock.key.kind, refId: lock.key.refId, err: error }, 'ledger: a check failed; it is tried again later');
      tell(options.onError, error, lock.key);
    }
    return true;
  };

  const run = async (signal: AbortSignal) => {
    while (!signal.aborted) {
      let worked = false;
      try {
        await checkSilence();
        worked = await checkOne(signal);
      } catch (error) {
        if (signal.aborted) break;
        logger.error({ err: error }, 'ledger: the reconciler could not reach the ledger');
      }
      // A meter provider registered since is picked up here, for the ledger's gauges.
      watching?.refresh();
      if (!worked) await sleep(pollIntervalMs, signal).catch(() => {});
    }
  };

  return {
    start() {
      if (stopping !== undefined && !stopping.signal.aborted) return;
      stopping = new AbortController();
      watching = observer.watch();
      loop = run(stopping.signal);
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping?.abort();
      watching?.stop();
      watching = undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([loop, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
    check: (key) => observer.observe(key, 'reconcile'),
    stats: () => ({ ...stats, missedWebhooks: observer.missed }),
  };
}
