import { VerikitError } from '../errors.js';

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
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimedOut(what, timeoutMs)), timeoutMs);
    call.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
