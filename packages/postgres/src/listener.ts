import { ConfigurationError, withTimeout } from '@verikit/core';
import type { Queryable } from './db.js';
import { isPool, type PoolLike } from './pool.js';

/** PGlite, which can LISTEN with callbacks of its own. */
interface CallbackListener {
  listen(channel: string, callback: () => void): Promise<() => Promise<void>>;
}

/** What a LISTEN needs: where, on which channel, how long its setup may take, and whom to tell. */
export interface ListenOptions {
  db: Queryable;
  channel: string;
  timeoutMs: number;
  /** Called on every notification. */
  onNotification: () => void;
  /** Called once when the connection dies (a restart, pg_terminate_backend), so the next wait listens again. */
  onClosed: () => void;
}

/**
 * Checks, at creation, that a pg Pool can make a connection outside itself (pg's Pool can): LISTEN
 * holds its connection for as long as the inbox lives, and taking it from your pool would leave
 * one less for the route and the events (with `max: 1`, none at all: every accept would wait).
 */
export function checkCanListen(db: Queryable): void {
  if (isPool(db) && (typeof db.Client !== 'function' || db.options === undefined)) {
    throw new ConfigurationError('db', "the inbox needs pg's own Pool: it opens its LISTEN connection with the pool's Client and options");
  }
}

/** LISTENs on `channel`, within `timeoutMs`; resolves to how to stop. */
export function listen(options: ListenOptions): Promise<() => Promise<void>> {
  const { db, channel, timeoutMs, onNotification } = options;
  if (!isPool(db)) {
    const started = (db as unknown as CallbackListener).listen(channel, onNotification);
    return withTimeout(started, timeoutMs, 'a LISTEN').catch((error: unknown) => {
      // PGlite answers once it is free: a LISTEN nobody waits for any more is undone then.
      void started.then(
        (stop) => stop(),
        () => {},
      );
      throw error;
    });
  }
  return listenOnOwnConnection(db, options);
}

/**
 * A connection of its own, made like the pool's (its Client class and options) but outside it, so
 * it never takes a connection the pool was sized for.
 */
async function listenOnOwnConnection(pool: PoolLike, options: ListenOptions): Promise<() => Promise<void>> {
  const { channel, timeoutMs, onNotification, onClosed } = options;
  const Client = pool.Client as NonNullable<PoolLike['Client']>;
  const client = new Client(pool.options);
  let dead = false;
  const close = () => withTimeout(client.end(), timeoutMs, 'closing the LISTEN connection').catch(() => {});
  // Kept as listeners for good, so an error the server sends after the close is heard, not thrown.
  const die = () => {
    if (dead) return;
    dead = true;
    onClosed();
    void close();
  };
  client.on('error', die);
  client.on('end', die);
  client.on('notification', onNotification);
  try {
    await withTimeout(
      client.connect().then(() => client.query(`LISTEN "${channel}"`)),
      timeoutMs,
      'opening the LISTEN connection',
    );
  } catch (error) {
    die();
    throw error;
  }
  return async () => {
    if (dead) return;
    dead = true;
    await close();
  };
}
