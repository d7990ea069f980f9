import { ConfigurationError } from '../errors.js';
import { positiveNumber } from '../util/option-checks.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** When the reconciler checks a verification, by its age (time since it was tracked). */
export interface ReconcileScheduleOptions {
  /** Checks of a pending verification at these ages (default 1 min, 5 min, 15 min, 1 h, 6 h). */
  stepsMs?: readonly number[];
  /** After the last step, a pending verification is checked this often until final (default daily). */
  repeatMs?: number;
  /** A final one is checked again this often, for reopened cases and overturned decisions (default daily)... */
  finalRecheckMs?: number;
  /** ...until it is this old (default 30 days); then never again. */
  finalWindowMs?: number;
  /** After a failed check: backoff from this (default 30 s), doubling, full jitter... */
  failureBaseMs?: number;
  /** ...to at most this (default 1 h). */
  failureMaxMs?: number;
}

/** A resolved schedule: when a row is next due. */
export interface ReconcileSchedule {
  /** When a verification tracked at `trackedAt` is first checked. */
  first(trackedAt: Date): Date;
  /**
   * After an observation at `now`: the next check of a row tracked at `trackedAt`. A webhook's
   * observation pushes it one step further out (the webhooks are evidently arriving).
   */
  next(row: { trackedAt: Date; final: boolean }, now: number, afterWebhook: boolean): Date | null;
  /** After the `failures`-th failed check in a row. */
  afterFailure(failures: number, now: number): Date;
}

const duration = (name: string, value: number | undefined, fallback: number): number =>
  positiveNumber(`schedule.${name}`, value, fallback, 'ms');

/** Checks the options and builds the schedule. */
export function resolveSchedule(options: ReconcileScheduleOptions = {}, random: () => number = Math.random): ReconcileSchedule {
  const steps = options.stepsMs ?? [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 6 * HOUR];
  if (!Array.isArray(steps) || steps.length === 0 || steps.some((s, i) => !(s > 0) || (i > 0 && s <= (steps[i - 1] as number))))
    throw new ConfigurationError('schedule.stepsMs', 'schedule.stepsMs must be positive and increasing');
  const repeatMs = duration('repeatMs', options.repeatMs, DAY);
  const finalRecheckMs = duration('finalRecheckMs', options.finalRecheckMs, DAY);
  const finalWindowMs = duration('finalWindowMs', options.finalWindowMs, 30 * DAY);
  const failureBaseMs = duration('failureBaseMs', options.failureBaseMs, 30_000);
  const failureMaxMs = duration('failureMaxMs', options.failureMaxMs, HOUR);
  /** The first step boundary after `at`, or `at + repeatMs` past the last. */
  const boundaryAfter = (trackedAt: number, at: number): number => {
    for (const step of steps) if (trackedAt + step > at) return trackedAt + step;
    return at + repeatMs;
  };
  return {
    first: (trackedAt) => new Date(trackedAt.getTime() + (steps[0] as number)),
    next(row, now, afterWebhook) {
      const trackedAt = row.trackedAt.getTime();
      if (row.final) return now - trackedAt < finalWindowMs ? new Date(now + finalRecheckMs) : null;
      const due = boundaryAfter(trackedAt, now);
      return new Date(afterWebhook ? boundaryAfter(trackedAt, due) : due);
    },
    afterFailure(failures, now) {
      const ceiling = Math.min(failureMaxMs, failureBaseMs * 2 ** Math.min(failures - 1, 30));
      // Never sooner than a tenth of the ceiling: a failing service is not hammered by an unlucky draw.
      return new Date(now + ceiling * (0.1 + 0.9 * random()));
    },
  };
}
