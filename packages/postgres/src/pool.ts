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
  /** The class pg's Pool makes its clients with, and their connection options: how to make one outside it. */
  Client?: new (
    options: unknown,
  ) => OwnClient;
  options?: unknown;
}

/** A pg Client verikit connects and ends itself, outside the pool. */
export interface OwnClient extends Queryable {
  connect(): Promise<void>;
  end(): Promise<void>;
  on(event: 'error' | 'end' | 'notification', listener: () => void): unknown;
}

export const isPool = (db: Queryable): db is PoolLike =>
  typeof (db as PoolLike).connect === 'function' && typeof (db as PoolLike).totalCount === 'number';

/** A thrown value as an Error, for `client.release(error)`, which takes only an Error to mean "destroy it". */
export const asError = (value: unknown): Error => (value instanceof Error ? value : new Error(String(value)));

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

/** A client asked of the pool, which goes back exactly once however the work on it ends. */
export interface HeldClient {
  /** The client, once the pool hands it over (a rejection when it was released before that). */
  client: Promise<PooledClient>;
  /**
   * Gives it back: destroyed when `error` is given (a statement on it failed or never answered) or
   * the server killed it meanwhile. Given before the pool has handed it over (a wait that timed
   * out), the client goes back unused the moment it arrives.
   */
  release(error?: Error): void;
}

/** Asks `pool` for a client, to be handed back through {@link HeldClient.release}. */
export function hold(pool: PoolLike): HeldClient {
  let broken: Error | undefined;
  // Killed while checked out: it must not go back to the pool as if healthy.
  const onError = (error: Error) => {
    broken = error;
  };
  let arrived: PooledClient | undefined;
  let released = false;
  const give = (client: PooledClient, error: Error | undefined) => {
    client.removeListener('error', onError);
    client.release(broken ?? error);
  };
  const client = checkout(pool, onError).then((c) => {
    arrived = c;
    if (!released) return c;
    // Given up on while waiting (a timeout): back unused, and no work may start on it.
    give(c, undefined);
    throw new Error('the client was released before the pool handed it over');
  });
  // A checkout that ends after the work has gone is nobody's to hear.
  client.catch(() => {});
  return {
    client,
    release(error) {
      if (released) return;
      released = true;
      if (arrived !== undefined) give(arrived, error);
    },
  };
}
