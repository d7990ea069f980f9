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
 * Lua: `cross_slot(commands, key)`, the position of the first of the decoded ctx.sql `commands`
 * that names a key outside `key`'s Cluster slot, or nil. A Cluster refuses such a key only when a
 * script reaches it, after the writes before it: a script that applies ctx.sql writes checks them
 * all first (on a Cluster only: CLUSTER KEYSLOT fails on a single server) and answers
 * `{'cross-slot', n}`, which {@link crossSlotError} turns into the error. A command Redis does not
 * know, or that names no key, is left for Redis to refuse or run.
 */
export const CROSS_SLOT = `local function cross_slot(commands, key)
  local slot = redis.call('CLUSTER', 'KEYSLOT', key)
  for n, command in ipairs(commands) do
    local known, keys = pcall(redis.call, 'COMMAND', 'GETKEYS', unpack(command))
    if known then
      for _, named in ipairs(keys) do
        if redis.call('CLUSTER', 'KEYSLOT', named) ~= slot then return n end
      end
    end
  end
  return nil
end
`;

/** The {@link RedisCrossSlotError} for a script's `{'cross-slot', n}` reply about `tx`, else undefined. */
export function crossSlotError(reply: unknown, tx: RecordedTransaction, hashTag: string): RedisCrossSlotError | undefined {
  if (!Array.isArray(reply) || reply[0] !== 'cross-slot') return undefined;
  const position = Number(reply[1]);
  return new RedisCrossSlotError(tx.commands[position - 1]?.[0] ?? '?', position, hashTag);
}

/**
 * KEYS: the job's lock, the applied-mark. ARGV: the lease token, the mark's lifetime (ms), the
 * commands as JSON, `1` on a Cluster. 0: the lease is someone else's, nothing applied; 1: applied
 * now or earlier; `{'cross-slot', n}`: see {@link CROSS_SLOT}, nothing applied.
 * Redis has no rollback: a command Redis refuses stops the script with the ones before it applied.
 */
export const COMMIT = `${CROSS_SLOT}
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local commands = cjson.decode(ARGV[3])
if ARGV[4] == '1' then
  local n = cross_slot(commands, KEYS[1])
  if n then return {'cross-slot', n} end
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
  const refused = hashTag === undefined ? undefined : crossSlotError(reply, tx, hashTag);
  if (refused !== undefined) throw refused;
  return reply === 1 ? 'ok' : 'stale';
}
