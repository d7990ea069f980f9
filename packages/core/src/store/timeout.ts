import { VerikitError } from '../errors.js';
import { type Deadlines, type DeadlinesFactory, TimerDeadlines } from '../util/deadlines.js';

/**
 * A database or Redis did not answer one of verikit's calls in time (down, unreachable, or every
 * connection busy): the webhook route answers 503 and the sender retries; a worker tries again later.
 */
export class StorageTimeoutError extends VerikitError {
  override name = 'StorageTimeoutError';
  /** The bound that passed, in ms. */
  readonly timeoutMs: number;

  /** `what` names the call (`'the accept'`); `storage` the engine, as the message says it. */
  constructor(what: string, timeoutMs: number, storage = 'the database') {
    super('timeout', `${storage} did not answer ${what} within ${timeoutMs} ms (down, unreachable or every connection busy?)`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Settles like `call`, or rejects with a {@link StorageTimeoutError} (or the `TimedOut` subclass
 * given) once `timeoutMs` has passed. The call itself goes on: whoever started it cleans up what it
 * leaves behind, and an answer that comes later is never taken as this call's result.
 * @example
 * const rows = await withTimeout(pool.query(sql, params), 5_000, 'a claim');
 */
export function withTimeout<T>(
  call: PromiseLike<T>,
  timeoutMs: number,
  what: string,
  TimedOut: new (what: string, timeoutMs: number) => Error = StorageTimeoutError,
): Promise<T> {
  return raceTimeout(call, new TimerDeadlines(timeoutMs), () => new TimedOut(what, timeoutMs));
}

/** The signature of `sharedTimeouts`: a bound of `timeoutMs` for each call given. */
export type SharedTimeouts = (
  timeoutMs: number,
  TimedOut?: new (what: string, timeoutMs: number) => Error,
) => <T>(call: PromiseLike<T>, what: string) => Promise<T>;

/** `sharedTimeouts` over a build's deadlines: one sweeping interval on Node, a timer per call elsewhere. */
export const sharedTimeoutsOn =
  (makeDeadlines: DeadlinesFactory): SharedTimeouts =>
  (timeoutMs, TimedOut = StorageTimeoutError) => {
    const deadlines = makeDeadlines(timeoutMs);
    return (call, what) => raceTimeout(call, deadlines, () => new TimedOut(what, timeoutMs));
  };

function raceTimeout<T>(call: PromiseLike<T>, deadlines: Deadlines, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const deadline = deadlines.arm(() => reject(timedOut()));
    call.then(
      (value) => {
        deadline.cancel();
        resolve(value);
      },
      (error: unknown) => {
        deadline.cancel();
        reject(error);
      },
    );
  });
}
