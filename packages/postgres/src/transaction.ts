import { ConfigurationError, StorageTimeoutError, TransactionEndedError, withTimeout } from '@verikit/core';
import { type Bound, runBounded } from './bounded.js';
import type { Queryable } from './db.js';
import { asError, hold, isPool, type PooledClient, type PoolLike } from './pool.js';

/** PGlite: one in-process connection with transactions of its own. */
interface TransactionalLike extends Queryable {
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

const isTransactional = (db: Queryable): db is TransactionalLike => typeof (db as TransactionalLike).transaction === 'function';

/**
 * Checks, at creation, that `db` can run a transaction on a connection of its own (a pg Pool, or
 * PGlite). `user` and `why` word the error: who needs it, and what runs in those transactions.
 */
export function checkTransactional(db: Queryable, user: string, why: string): void {
  if (!isPool(db) && !isTransactional(db)) {
    throw new ConfigurationError(
      'db',
      `${user} needs a pg Pool or a PGlite instance: ${why} runs in a transaction on a connection of its own`,
    );
  }
}

/** What a statement in the work's transaction is called when it does not answer in time. */
const WORK_QUERY = 'a ctx.sql query';

/** An open transaction: its statements, each within the bound, and how it ends. */
interface OpenTransaction {
  /** The work's queries (`ctx.sql`). */
  tx: Queryable;
  /** Runs one of verikit's own statements in it. */
  run<T>(what: string, statement: (tx: Queryable) => Promise<T>): Promise<T>;
  commit(): Promise<void>;
  /**
   * Never throws: a transaction that cannot even roll back has its connection destroyed, which rolls
   * it back. `busy` when a query of the work is still running (an abandoned, timed-out `onEvent`'s).
   */
  rollback(busy: boolean): Promise<void>;
}

/**
 * Checks a client out of the pool and sends BEGIN. A statement that does not answer in time ends
 * the transaction: its client is destroyed, never handed back mid-statement, so the server rolls
 * back when the connection goes, and whatever comes after is refused. An SQL error does not end it
 * (the work may recover with a savepoint); a failed BEGIN, COMMIT or ROLLBACK destroys the client.
 */
async function beginOnPool(pool: PoolLike, timeoutMs: number): Promise<OpenTransaction> {
  const held = hold(pool);
  let ended = false;
  let backend: number | null | undefined;
  void held.client.then(
    (client) => (backend = client.processID),
    () => {},
  );
  /**
   * Ends the transaction by giving its client back (destroyed with an `error`). With a statement
   * still running on the server, destroying the connection does not stop it (it may hold locks until
   * it ends, perhaps never): its backend is stopped too, which rolls the transaction back.
   */
  const end = (error?: Error, running = false) => {
    ended = true;
    held.release(error);
    if (running && typeof backend === 'number')
      void runBounded({ db: pool, timeoutMs }, 'stopping an abandoned statement', (q) =>
        q.query('SELECT pg_terminate_backend($1)', [backend]),
      ).catch(() => {});
  };
  const bounded = async <T>(what: string, call: (client: PooledClient) => Promise<T>): Promise<T> => {
    if (ended) throw new TransactionEndedError();
    try {
      return await withTimeout(held.client.then(call), timeoutMs, what);
    } catch (error) {
      if (error instanceof StorageTimeoutError) end(error, true);
      throw error;
    }
  };
  const control = (what: string, statement: string): Promise<unknown> =>
    bounded(what, (client) => client.query(statement)).catch((error: unknown) => {
      end(asError(error));
      throw error;
    });
  await control('opening a transaction', 'BEGIN');
  return {
    tx: { query: (text, params) => bounded(WORK_QUERY, (client) => client.query(text, params)) },
    run: bounded,
    async commit() {
      await control('a commit', 'COMMIT');
      end();
    },
    async rollback(busy) {
      if (ended) return;
      // ROLLBACK would wait behind the running query, perhaps for ever: end the session instead.
      if (busy) return end(new Error('transaction abandoned with a query still running'), true);
      // A failure has destroyed the client already, which rolls it back just as well.
      await control('a rollback', 'ROLLBACK').then(
        () => end(),
        () => {},
      );
    },
  };
}

/** Opens PGlite's callback-scoped transaction and holds it open until told how it ends. */
function beginOnPGlite(db: TransactionalLike, timeoutMs: number): Promise<OpenTransaction> {
  const opening = new Promise<OpenTransaction>((resolveOpen, rejectOpen) => {
    let end!: (rollback: boolean) => void;
    const ending = new Promise<boolean>((resolve) => (end = resolve));
    const finished = db.transaction(async (tx) => {
      resolveOpen({
        tx: { query: (text, params) => withTimeout(tx.query(text, params), timeoutMs, WORK_QUERY) },
        run: (what, statement) => withTimeout(statement(tx), timeoutMs, what),
        commit: async () => {
          end(false);
          await withTimeout(finished, timeoutMs, 'a commit');
        },
        // A query still running finishes first (PGlite runs one at a time, in this process), then the rollback.
        rollback: async () => {
          end(true);
          await withTimeout(finished, timeoutMs, 'a rollback').catch(() => {});
        },
      });
      // Throwing here is how PGlite is told to roll back.
      if (await ending) throw new Error('rolled back');
    });
    finished.catch(rejectOpen);
  });
  return withTimeout(opening, timeoutMs, 'opening a transaction').catch((error: unknown) => {
    // PGlite opens it later, when its connection is free: no work will come, so it ends at once.
    void opening.then(
      (late) => late.rollback(false),
      () => {},
    );
    throw error;
  });
}

/** Runs one of verikit's own statements in the transaction (opening it when need be); a timeout names it `what`. */
export type OwnStatement = <R>(what: string, statement: (tx: Queryable) => Promise<R>) => Promise<R>;

/**
 * Runs `work` with a transaction that opens on its first query, then `last` in that transaction,
 * and commits both; a throw from either rolls both back. When `work` never queries, no transaction
 * is opened and `last` runs on `db` alone (or as `last.alone`, which may share a statement with
 * others): work that writes elsewhere costs one statement, perhaps shared, not BEGIN, the statement
 * and COMMIT. Every statement is bounded by `timeoutMs`, and the `tx` handed to `work` refuses
 * every query once `work` has settled: kept and used later, it would write outside the transaction
 * (on a pg Pool, on a client already back in the pool), once per attempt. `own` runs verikit's
 * statements inside `work` (a row locked before the integrator's work runs).
 */
export async function inLazyTransaction<T>(
  bound: Bound,
  work: (tx: Queryable, own: OwnStatement) => Promise<void>,
  last: { what: string; run: (db: Queryable) => Promise<T>; alone?: () => Promise<T> },
): Promise<T> {
  const { db, timeoutMs } = bound;
  let opening: Promise<OpenTransaction> | undefined;
  let settled = false;
  let running = 0;
  const open = () =>
    (opening ??= isTransactional(db) && !isPool(db) ? beginOnPGlite(db, timeoutMs) : beginOnPool(db as PoolLike, timeoutMs));
  const inside = async <R>(use: (transaction: OpenTransaction) => Promise<R>): Promise<R> => {
    if (settled) throw new TransactionEndedError();
    running++;
    try {
      return await use(await open());
    } finally {
      running--;
    }
  };
  const tx: Queryable = { query: (text, params) => inside((transaction) => transaction.tx.query(text, params)) };
  const own: OwnStatement = (what, statement) => inside((transaction) => transaction.run(what, statement));
  try {
    await work(tx, own);
  } catch (error) {
    settled = true;
    if (opening !== undefined) await (await opening.catch(() => undefined))?.rollback(running > 0);
    throw error;
  }
  settled = true;
  if (opening === undefined) return last.alone === undefined ? runBounded(bound, last.what, last.run) : last.alone();
  const transaction = await opening;
  let result: T;
  try {
    result = await transaction.run(last.what, last.run);
  } catch (error) {
    await transaction.rollback(false);
    throw error;
  }
  await transaction.commit();
  return result;
}
