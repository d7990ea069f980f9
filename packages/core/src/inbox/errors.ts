import { VerikitError } from '../errors.js';

/**
 * An inbox worker's `onEvent` did not settle within `eventTimeoutMs`: its `ctx.signal` was aborted,
 * its transaction rolled back, and the attempt counted as failed (retried, or dead-lettered at the last).
 */
export class InboxEventTimeoutError extends VerikitError {
  override name = 'InboxEventTimeoutError';
  /** The event's svix id. */
  readonly id: string;
  /** The attempt that timed out. */
  readonly attempt: number;
  /** The bound it passed. */
  readonly timeoutMs: number;

  constructor(id: string, attempt: number, timeoutMs: number) {
    super('event_timeout', `onEvent for ${JSON.stringify(id)} (attempt ${attempt}) did not settle within eventTimeoutMs (${timeoutMs} ms)`);
    this.id = id;
    this.attempt = attempt;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * An event was leased more often than `retry.maxAttempts` allows: an attempt's worker died or froze
 * before recording its outcome (a crash, a SIGKILL, an out-of-memory kill). It is dead-lettered
 * without running again, so an event that kills its worker cannot crash-loop every instance.
 */
export class InboxEventAbandonedError extends VerikitError {
  override name = 'InboxEventAbandonedError';
  /** The event's svix id. */
  readonly id: string;
  /** How many times it was leased, this lease included. */
  readonly leases: number;

  constructor(id: string, leases: number, maxAttempts: number) {
    super(
      'event_abandoned',
      `${JSON.stringify(id)} was leased ${leases} times, more than retry.maxAttempts (${maxAttempts}): an attempt never finished (its worker crashed or stalled), so it is dead-lettered without running again`,
    );
    this.id = id;
    this.leases = leases;
  }
}

/**
 * With a ledger and no `onEvent`, an event whose subject (`{ kind, refId }`) `identify` could not
 * read: it is dead-lettered with this reason, never dropped. Fix `identify` and replay it, or give
 * `onEvent` to handle such events.
 */
export class UnidentifiedEventError extends VerikitError {
  override name = 'UnidentifiedEventError';
  /** The event's svix id. */
  readonly id: string;

  constructor(id: string) {
    super(
      'unidentified_event',
      `event ${JSON.stringify(id)} names no verification identify() can read ({ kind, refId }): dead-lettered; pass identify (or onEvent for such events) and replay it`,
    );
    this.id = id;
  }
}
