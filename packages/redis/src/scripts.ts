import { createHash } from 'node:crypto';
import type { RedisClient } from './options.js';

/** A Lua script bound to a client: run with its keys and arguments, answering the script's reply. */
export type Script = (keys: string[], args: string[]) => Promise<unknown>;

/**
 * Registers `lua` on `redis` (ioredis runs it by EVALSHA and loads it on NOSCRIPT, on a single
 * server and on a Cluster alike) under a name drawn from its text, so two versions never clash.
 */
export function defineScript(redis: RedisClient, lua: string, numberOfKeys: number): Script {
  const name = `verikit_${createHash('sha1').update(lua).digest('hex').slice(0, 16)}`;
  const client = redis as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
  if (typeof client[name] !== 'function') redis.defineCommand(name, { numberOfKeys, lua });
  return (keys, args) => (client[name] as (...args: string[]) => Promise<unknown>).call(redis, ...keys, ...args);
}
