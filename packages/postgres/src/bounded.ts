import { type LeaseOutcome, StorageTimeoutError, withTimeout } from '@verikit/core';
import { leaseOutcome, type Queryable, type Statement } from './db.js';
import { asError, hold, isPool } from './pool.js';

/** Where verikit's own statements go, and the longest each may take. */
export interface Bound {
  db: Queryable;
  timeoutMs: number;
}

/**
 * Runs `work` (one of verikit's statements) within `timeoutMs`, else rejects with core's
 * `StorageTimeoutError` naming `what`. On a pg Pool the wait for a free client counts too, and the
 * work runs on a client of its own: one that does not answer in time is destroyed, never handed
 * back to the pool mid-statement (the server rolls back what it had begun). PGlite or a single
 * client cannot be interrupted: their answer may still come, and then goes to `late` (to undo what
 * the statement did), never to the caller, who was told it failed.
 */
export function runBounded<T>(
  { db, timeoutMs }: Bound,
  what: string,
  work: (db: Queryable) => Promise<T>,
  late?: (result: T) => void,
): Promise<T> {
  const held = isPool(db) ? hold(db) : undefined;
  const call = held === undefined ? work(db) : held.client.then(work);
  return withTimeout(call, timeoutMs, what).then(
    (result) => {
      held?.release();
      return result;
    },
    (error: unknown) => {
      held?.release(asError(error));
      if (late !== undefined && error instanceof StorageTimeoutError) call.then(late, () => {});
      throw error;
    },
  );
}

/** An owner's statement (`RETURNING` a row when it matched) within the bound: `ok`, or `stale` when it matched none. */
export async function ownersCall(bound: Bound, what: string, statement: Statement, params: unknown[]): Promise<LeaseOutcome> {
  return leaseOutcome((await runBounded(bound, what, (q) => statement.run(q, params))).rows);
}
