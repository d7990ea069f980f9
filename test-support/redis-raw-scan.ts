import type { Cluster, Redis } from 'ioredis';

/** A connected ioredis client, as `@verikit/redis` takes it: one server, or a Cluster. */
type RedisClient = Redis | Cluster;

/** What a raw scan read: every key with its type, and all of it as one text to search. */
export interface RawScan {
  /** Each key found, with its Redis type. */
  types: Map<string, string>;
  /** Every key and every value (hash fields and values, list and set members, zset members and scores, stream entries), one per line. */
  text: string;
}

/** The servers that hold the keys: a single server itself, or every master of a Cluster. */
const serversOf = (redis: RedisClient): Redis[] =>
  'nodes' in redis && typeof redis.nodes === 'function' ? redis.nodes('master') : [redis as Redis];
/** The SCAN/KEYS pattern of every key starting with `prefix`: its glob characters matched as themselves. */
const patternOf = (prefix: string) => `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;

/** Deletes every key starting with one of `prefixes`, on every server that holds keys. */
export async function removeKeys(redis: RedisClient, prefixes: string[]): Promise<void> {
  for (const server of serversOf(redis))
    for (const prefix of prefixes) {
      const keys = await server.keys(patternOf(prefix));
      if (keys.length > 0) await server.del(...keys);
    }
}

/** The value of `key` (of `type`) as lines of text, read with the command of its type. */
async function readValue(server: Redis, key: string, type: string): Promise<string[]> {
  switch (type) {
    case 'string':
      return [(await server.get(key)) ?? ''];
    case 'hash':
      return Object.entries(await server.hgetall(key)).map(([field, value]) => `${field}=${value}`);
    case 'list':
      return server.lrange(key, '0', '-1');
    case 'set':
      return server.smembers(key);
    case 'zset':
      return server.zrange(key, '0', '-1', 'WITHSCORES');
    case 'stream':
      return (await server.xrange(key, '-', '+')).map(([id, fields]) => `${id} ${fields.join(' ')}`);
    default:
      throw new Error(`a key of type ${type} (${key}): the scan does not know how to read it`);
  }
}

/**
 * Reads, around verikit, every key starting with one of `prefixes` on every server that holds keys
 * (SCAN on each master of a Cluster), and each value with the command of its type: what someone
 * looking at the Redis data would find.
 */
export async function rawScan(redis: RedisClient, prefixes: string[]): Promise<RawScan> {
  const types = new Map<string, string>();
  const lines: string[] = [];
  for (const server of serversOf(redis)) {
    for (const prefix of prefixes) {
      const pattern = patternOf(prefix);
      let cursor = '0';
      do {
        const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
        cursor = next;
        for (const key of keys) {
          if (types.has(key)) continue;
          const type = await server.type(key);
          if (type === 'none') continue; // gone since the scan saw it
          types.set(key, type);
          lines.push(key, ...(await readValue(server, key, type)));
        }
      } while (cursor !== '0');
    }
  }
  return { types, text: lines.join('\n') };
}
