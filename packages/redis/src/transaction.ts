import { RedisCrossSlotError } from './cluster.js';
import type { Script } from './scripts.js';

/**
 * `ctx.sql` on Redis: the writes `onEvent` queues here are applied in one Lua script together with
 * the mark that they were applied, and only while this worker still holds the event's lease, so
 * they happen exactly once even when the worker dies between them and completing the job.
 * Queue writes only: nothing runs (and no reply comes back) until `onEvent` has returned.
 * @example
 * onEvent: async (ctx) => {
 *   const { refId, result } = await ctx.fetchResult();
 *   ctx.sql.call('HSET', `verification:${refId}`, 'status', result.status, 'event', ctx.id);
 * }
 */
export interface RedisTransaction {
  /** Queues one Redis write command with its arguments, e.g. `call('HSET', key, field, value)`. */
  call(command: string, ...args: Array<string | number>): void;
}

/** A {@link RedisTransaction} that records what it is given, for {@link commitScript}. */
export class RecordedTransaction implements RedisTransaction {
  /** Each queued command as its words. */
  readonly commands: string[][] = [];

  call(command: string, ...args: Array<string | number>): void {
    if (typeof command !== 'string' || command === '') throw new TypeError('ctx.sql.call needs a Redis command name');
    this.commands.push([command, ...args.map(String)]);
  }
}

/**
 * KEYS: the job's lock, the applied-mark. ARGV: the lease token, the mark's lifetime (ms), the
 * commands as JSON, `1` on a Cluster. 0: the lease is someone else's, nothing applied; 1: applied
 * now or earlier; `{'cross-slot', n}`: command n names a key in another slot, nothing applied (a
 * Cluster refuses such a key only when the script reaches it, after the writes before it).
 * Redis has no rollback: a command Redis refuses stops the script with the ones before it applied.
 */
export const COMMIT = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local commands = cjson.decode(ARGV[3])
if ARGV[4] == '1' then
  local slot = redis.call('CLUSTER', 'KEYSLOT', KEYS[1])
  for n, command in ipairs(commands) do
    local known, keys = pcall(redis.call, 'COMMAND', 'GETKEYS', unpack(command))
    if known then
      for _, key in ipairs(keys) do
        if redis.call('CLUSTER', 'KEYSLOT', key) ~= slot then return {'cross-slot', n} end
      end
    end
  end
end
for _, command in ipairs(commands) do redis.call(unpack(command)) end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return 1`;

/**
 * Applies `tx`'s commands for the lease `token` holds on a job: `ok`, or `stale` with nothing
 * applied. `hashTag` is the queue's on a Cluster (undefined on a single server): there, a command
 * naming a key of another slot is refused with {@link RedisCrossSlotError} before anything is applied.
 */
export async function commitScript(
  commit: Script,
  keys: { lock: string; applied: string },
  token: string,
  retentionMs: number,
  tx: RecordedTransaction,
  hashTag: string | undefined,
): Promise<'ok' | 'stale'> {
  const reply = await commit(
    [keys.lock, keys.applied],
    [token, String(retentionMs), JSON.stringify(tx.commands), hashTag === undefined ? '0' : '1'],
  );
  if (Array.isArray(reply)) {
    const position = Number(reply[1]);
    throw new RedisCrossSlotError(tx.commands[position - 1]?.[0] ?? '?', position, hashTag ?? '');
  }
  return reply === 1 ? 'ok' : 'stale';
}
