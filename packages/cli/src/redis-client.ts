import type { RedisClient } from '@verikit/redis';
import type { RedisOptions } from 'ioredis';
import { CONNECT_DID_NOT_ANSWER } from './errors.js';
import { COMMAND_TIMEOUT_MS, CONNECT_TIMEOUT_MS } from './storage.js';
import type { Target } from './target.js';

/** What the CLI's connections share: a name servers list them by, the CLI's bound, and no reconnection (a lost server is reported at once). */
const CONNECTION: RedisOptions = {
  connectionName: 'verikit-cli',
  connectTimeout: CONNECT_TIMEOUT_MS,
  commandTimeout: COMMAND_TIMEOUT_MS,
  // A server that never answered does not close its end either: the CLI ends its own soon after (ioredis waits 2 s).
  disconnectTimeout: 500,
  maxRetriesPerRequest: 1,
  retryStrategy: () => null,
};

/** One Redis server, or a Redis Cluster (`--cluster`), connected; or why it could not be. */
export async function connectRedis(ioredis: typeof import('ioredis'), target: Target): Promise<RedisClient> {
  const seeds = target.cluster;
  if (seeds === undefined) return connected(new ioredis.Redis(target.url, { lazyConnect: true, ...CONNECTION }));
  // The credentials and TLS of every node, seeds and those the Cluster names alike.
  const node: RedisOptions = {
    ...CONNECTION,
    ...(seeds.username !== undefined && { username: seeds.username }),
    ...(seeds.password !== undefined && { password: seeds.password }),
    ...(seeds.tls && { tls: {} }),
  };
  const cluster = new ioredis.Cluster(seeds.nodes, {
    lazyConnect: true,
    clusterRetryStrategy: () => null,
    // The first CLUSTER SLOTS, its connection included, within the CLI's bound (ioredis's own is 1 s).
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    // Over TLS, nodes keep the names the Cluster gives them, so certificates are checked against those
    // names (ElastiCache, MemoryDB) rather than the addresses they resolve to, as ioredis advises.
    ...(seeds.tls && { dnsLookup: (address, callback) => callback(null, address) }),
    redisOptions: node,
  });
  try {
    return await connected(cluster);
  } catch (error) {
    if (!/^(Connection is closed|None of startup nodes)/.test(error instanceof Error ? error.message : '')) throw error;
    // ioredis reads CLUSTER SLOTS on a connection whose errors it drops, which leaves only "Connection is
    // closed.": one plain connection to the first seed says why (refused, unknown host, TLS, password).
    const probe = await connected(new ioredis.Redis({ ...seeds.nodes[0], lazyConnect: true, ...node }));
    probe.disconnect();
    throw error;
  }
}

/**
 * `client` connected, heard on its 'error' event for its whole life (an unheard one would end the
 * process; failures reach the caller through the commands); or the cause of its failure.
 */
async function connected<T extends RedisClient>(client: T): Promise<T> {
  let lastError: unknown;
  client.on('error', (error) => {
    lastError = error;
  });
  // ioredis's connectTimeout ends at the TCP connection: a server that accepts and never answers its
  // ready check would hold the CLI for the command bound, so the whole of connecting has the connect bound.
  const late = new Error(CONNECT_DID_NOT_ANSWER);
  let timer: NodeJS.Timeout | undefined;
  const answered = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), answered]);
    return client;
  } catch (error) {
    // Already ended without reconnection; disconnect() on an ended client would hold the process for its 2 s disconnectTimeout.
    if (client.status !== 'end') client.disconnect();
    if (error === late) throw late;
    // Without reconnection, connect() rejects with "Connection is closed." (a Cluster: "None of startup nodes is
    // available"); the event before it says why (ECONNREFUSED), a Cluster's with the last seed's error inside.
    throw (lastError as { lastNodeError?: unknown } | undefined)?.lastNodeError ?? lastError ?? error;
  } finally {
    clearTimeout(timer);
  }
}
