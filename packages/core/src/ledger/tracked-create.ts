import { AuthenticationError, BadRequestError, NotFoundError } from '../client/errors.js';
import { ConfigurationError } from '../errors.js';
import type { LedgerEngine, LedgerKey } from './ledger.js';
import { type ReconcileScheduleOptions, resolveSchedule } from './schedule.js';

/** Runs a create call for `key` with the ledger told first; returns the call's answer. */
export type TrackCreation = <T>(key: LedgerKey, create: () => Promise<T>) => Promise<T>;

/** Answers that say the service did not create it: nothing to reconcile. A timeout or a 5xx says nothing, so its row stays. */
const refused = (error: unknown): boolean =>
  error instanceof BadRequestError || error instanceof AuthenticationError || error instanceof NotFoundError;

/** The client's create calls, tracked in `ledger` when one is given. */
export function trackCreation(ledger: LedgerEngine | undefined, scheduleOptions: ReconcileScheduleOptions | undefined): TrackCreation {
  if (ledger === undefined) return (_key, create) => create();
  if (typeof ledger.track !== 'function')
    throw new ConfigurationError('ledger', 'ledger must be a ledger engine (createPostgresLedger, createRedisLedger, createMemoryLedger)');
  const schedule = resolveSchedule(scheduleOptions);
  return async (key, create) => {
    await ledger.track(key, { nextCheckAt: schedule.first(new Date()) });
    try {
      return await create();
    } catch (error) {
      if (refused(error)) await ledger.forget(key);
      throw error;
    }
  };
}
