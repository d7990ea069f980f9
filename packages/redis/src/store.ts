import type { ClaimOptions, ClaimResult, IdempotencyStore, Lease, LeaseOutcome } from '@verikit/core';
import { checkPrefix, type RedisBaseOptions, redisTimeouts, resolveBaseOptions } from './options.js';
import type { PersistenceReport } from './persistence.js';
import { redactingErrors } from './redact.js';
import { defineScript, type Script } from './scripts.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions extends RedisBaseOptions {
  /** Prefix of every key the store writes (default `verikit:receipt:`); one key per delivery id. */
  prefix?: string;
}

/** An {@link IdempotencyStore} on Redis, shared by every instance. */
export interface RedisIdempotencyStore extends IdempotencyStore {
  /** Reads the server's persistence settings now: logs or refuses per the `persistence` option. Call it at startup. */
  checkPersistence(): Promise<PersistenceReport>;
}

// One key per id, so every script touches a single key: any Redis Cluster layout is safe. Its value
// says who holds it: `l:<until>:<owner>` a lease until `until` (ms on the server's clock, TIME), or
// `d:<owner>` handled. The key itself lives for the retention, so an owner whose lease ran out, with
// no one claiming since, may still complete or release it (the contract's rule).
// A script resent by ioredis after a dropped connection (its reply lost) finds the caller's own value and answers the same.
const LEASE = `local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function lease(v)
  if not v or string.sub(v, 1, 2) ~= 'l:' then return nil end
  local sep = string.find(v, ':', 3, true)
  return tonumber(string.sub(v, 3, sep - 1)), string.sub(v, sep + 1)
end
`;
const CLAIM = `${LEASE}
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, 2) == 'd:' then return 'done' end
  local untilMs, owner = lease(v)
  if owner == ARGV[1] then return 'claimed' end
  if untilMs > now() then return 'in-progress' end
end
redis.call('SET', KEYS[1], 'l:' .. (now() + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[3])
return 'claimed'`;
const COMPLETE = `${LEASE}
local v = redis.call('GET', KEYS[1])
local _, owner = lease(v)
if owner == ARGV[1] or v == 'd:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'd:' .. ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;
const RELEASE = `${LEASE}
local _, owner = lease(redis.call('GET', KEYS[1]))
if owner == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;
const EXTEND = `${LEASE}
local _, owner = lease(redis.call('GET', KEYS[1]))
if owner == ARGV[1] then
  redis.call('SET', KEYS[1], 'l:' .. (now() + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[3])
  return 1
end
return 0`;

const outcome = (reply: unknown): LeaseOutcome => (reply === 1 ? 'ok' : 'stale');

/**
 * An idempotency store on Redis: one key per delivery id, every claim, completion, release and
 * extension one atomic Lua script acting only for the lease's owner, every expiry on the Redis
 * server's clock (`TIME`, `PX`), never a client's. Handled ids are kept for `retentionMs` (7 days default).
 * @example
 * const store = createRedisStore({ redis: new Redis(process.env.REDIS_URL) });
 * await store.checkPersistence(); // warns when a Redis restart could forget handled ids
 * app.use('/verikit', verikitRouter({ webhook: { secret, store, onEvent } }));
 */
export function createRedisStore(options: RedisStoreOptions): RedisIdempotencyStore {
  const { redis, retentionMs, persistence, timeoutMs } = resolveBaseOptions(options, 'createRedisStore');
  // One interval sweeps the deadlines of this instance's calls: a timer per call cost the accept route about a microsecond.
  const bounded = redisTimeouts(timeoutMs);
  const prefix = checkPrefix(options.prefix ?? 'verikit:receipt:', 'prefix');
  const [claimScript, completeScript, releaseScript, extendScript] = [CLAIM, COMPLETE, RELEASE, EXTEND].map((lua) =>
    defineScript(redis, lua, 1),
  ) as [Script, Script, Script, Script];
  const ms = (value: number) => String(Math.max(1, Math.ceil(value)));
  const keep = ms(retentionMs);

  return redactingErrors<RedisIdempotencyStore>({
    checkPersistence: persistence.check,
    async claim(id: string, claim: ClaimOptions): Promise<ClaimResult> {
      const owner = crypto.randomUUID();
      const claiming = persistence.before(() => claimScript([prefix + id], [owner, ms(claim.leaseMs), keep]));
      const status = await bounded(claiming, 'a claim');
      if (status === 'claimed') return { status, lease: { id, owner } };
      return status === 'done' ? { status: 'done' } : { status: 'in-progress' };
    },
    async complete(lease: Lease): Promise<LeaseOutcome> {
      return outcome(await bounded(completeScript([prefix + lease.id], [lease.owner, keep]), 'a completion'));
    },
    async release(lease: Lease): Promise<LeaseOutcome> {
      return outcome(await bounded(releaseScript([prefix + lease.id], [lease.owner]), 'a release'));
    },
    async extend(lease: Lease, claim: ClaimOptions): Promise<LeaseOutcome> {
      return outcome(await bounded(extendScript([prefix + lease.id], [lease.owner, ms(claim.leaseMs), keep]), 'an extension'));
    },
  });
}
