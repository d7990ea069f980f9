import { ConfigurationError } from '@verikit/core';
import type { Queryable } from './db.js';

/** A pg Pool: hands out one client per transaction. */
interface PoolLike extends Queryable {
  connect(): Promise<
    Queryable & {
      release(error?: Error | boolean): void;
      on(event: 'error', listener: (error: Error) => void): unknown;
      removeListener(event: 'error', listener: (error: Error) => void): unknown;
    }
  >;
  totalCount: number;
}

/** PGlite: one in-process connection with transactions of its own. */
interface TransactionalLike extends Queryable {
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
}

const isPool = (db: Queryable): db is PoolLike =>
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

/** Runs `work` in a transaction: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(db: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  if (isTransactional(db) && !isPool(db)) return db.transaction(work);
  const client = await (db as PoolLike).connect();
  let broken: Error | undefined;
  // A connection killed while idle inside the transaction (between the work's queries) is reported as
  // an 'error' event on the client; unheard, it would crash the process. The next query fails anyway.
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      // A connection that cannot even roll back (killed, say) must not go back to the pool.
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
