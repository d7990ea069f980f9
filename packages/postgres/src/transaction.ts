import { ConfigurationError } from '@verikit/core';
import type { Queryable } from './db.js';

/** A client checked out of a pg Pool. */
export interface PooledClient extends Queryable {
  release(error?: Error | boolean): void;
  /** The server's process id for this connection, to stop its backend. */
  readonly processID?: number | null;
  on(event: 'error' | 'notification', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pg Pool: hands out one client per transaction. */
export interface PoolLike extends Queryable {
  connect(callback: (error: Error | undefined, client: PooledClient | undefined) => void): void;
  totalCount: number;
}

/** PGlite: one in-process connection with transactions of its own. */
interface TransactionalLike extends Queryable {
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

export const isPool = (db: Queryable): db is PoolLike =>
  typeof (db as PoolLike).connect === 'function' && typeof (db as PoolLike).totalCount === 'number';
const isTransactional = (db: Queryable): db is TransactionalLike => typeof (db as TransactionalLike).transaction === 'function';

/** Checks, at creation, that `db` can run a transaction on a connection of its own (a pg Pool, or PGlite). */
export function checkTransactional(db: Queryable): void {
  if (!isPool(db) && !isTransactional(db)) {
    throw new ConfigurationError(
      'db',
      'the inbox needs a pg Pool or a PGlite instance: each event runs in a transaction on a connection of its own',
    );
  }
}

/** A thrown value as an Error, for `client.release(error)`, which takes only an Error to mean "destroy it". */
export const asError = (value: unknown): Error => (value instanceof Error ? value : new Error(String(value)));

/** An open transaction: its queries, and how it ends. */
interface OpenTransaction {
  tx: Queryable;
  commit(): Promise<void>;
  /** Rolls back; `busy` when a query of the work is still running (an abandoned, timed-out `onEvent`'s). */
  rollback(error: unknown, busy: boolean): Promise<void>;
}

/**
 * Checks a client out with `onError` listening from the moment it is handed over. pg reports a
 * connection killed while checked out as an 'error' event, and unheard that crashes the process.
 * The callback form matters: pg parses a network read's messages in one go, so a kill that arrives
 * with the connection's first "ready" is emitted before a promise's `await` would resume.
 */
export function checkout(pool: PoolLike, onError: (error: Error) => void): Promise<PooledClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error !== undefined || client === undefined) return reject(error ?? new Error('pg Pool gave no client'));
      client.on('error', onError);
      resolve(client);
    });
  });
}

/** Checks a client out of the pool and sends BEGIN. */
async function beginOnPool(pool: PoolLike): Promise<OpenTransaction> {
  let broken: Error | undefined;
  // A connection killed while idle inside the transaction (between the work's queries): the next query fails anyway.
  const onError = (error: Error) => {
    broken = error;
  };
  const client = await checkout(pool, onError);
  const release = () => {
    client.removeListener('error', onError);
    client.release(broken);
  };
  try {
    await client.query('BEGIN');
  } catch (error) {
    broken = asError(error);
    release();
    throw error;
  }
  return {
    tx: client,
    async commit() {
      try {
        await client.query('COMMIT');
      } catch (error) {
        broken = asError(error);
        throw error;
      } finally {
        release();
      }
    },
    async rollback(_error, busy) {
      if (busy) {
        // ROLLBACK would wait behind the running query, perhaps for ever: end the session instead,
        // which rolls the transaction back. The connection is destroyed first, so the pool has room
        // for the statement that stops its backend now rather than when that query ends.
        broken = new Error('transaction abandoned with a query still running');
        const pid = client.processID;
        client.release(broken);
        if (typeof pid === 'number') await pool.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => {});
        return;
      }
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        // A connection that cannot even roll back (killed, say) must not go back to the pool.
        broken = asError(rollback);
      });
      release();
    },
  };
}

/** Opens PGlite's callback-scoped transaction and holds it open until told how it ends. */
function beginOnPGlite(db: TransactionalLike): Promise<OpenTransaction> {
  return new Promise((resolveOpen, rejectOpen) => {
    let end!: (error: unknown) => void;
    const ending = new Promise<unknown>((resolve) => (end = resolve));
    const finished = db.transaction(async (tx) => {
      resolveOpen({
        tx,
        commit: async () => {
          end(undefined);
          await finished;
        },
        // A query still running finishes first (PGlite runs one at a time, in this process), then the rollback.
        rollback: async (error) => {
          end(error ?? new Error('rolled back'));
          await finished.catch(() => {});
        },
      });
      // Throwing here is how PGlite is told to roll back.
      const error = await ending;
      if (error !== undefined) throw error;
    });
    finished.catch(rejectOpen);
  });
}

/**
 * Runs `work` with a transaction that opens on its first query, then `last` in that transaction,
 * and commits both; a throw from either rolls both back. When `work` never queries, no transaction
 * is opened and `last` runs on `db` alone: work that writes elsewhere costs one statement, not
 * BEGIN, the statement and COMMIT.
 */
export async function inLazyTransaction<T>(
  db: Queryable,
  work: (tx: Queryable) => Promise<void>,
  last: (db: Queryable) => Promise<T>,
): Promise<T> {
  let opening: Promise<OpenTransaction> | undefined;
  const open = () => (opening ??= isTransactional(db) && !isPool(db) ? beginOnPGlite(db) : beginOnPool(db as PoolLike));
  let running = 0;
  const tx: Queryable = {
    query: async (text, params) => {
      running++;
      try {
        return await (await open()).tx.query(text, params);
      } finally {
        running--;
      }
    },
  };
  try {
    await work(tx);
  } catch (error) {
    if (opening !== undefined) await (await opening.catch(() => undefined))?.rollback(error, running > 0);
    throw error;
  }
  if (opening === undefined) return last(db);
  const transaction = await opening;
  let result: T;
  try {
    result = await last(transaction.tx);
  } catch (error) {
    await transaction.rollback(error, false);
    throw error;
  }
  await transaction.commit();
  return result;
}
