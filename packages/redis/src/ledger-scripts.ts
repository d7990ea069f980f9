import { CROSS_SLOT } from './transaction.js';

// The ledger's Lua. Every key a script touches is under one base holding one hash tag (see
// ledger-keys.ts), so they share a Cluster slot: that is what lets a script reach rows it finds in
// an index (ARGV[1] is the base) and update a row, the due index, the per-kind indexes and the
// shared state at once. Times are the server's (TIME), in ms.
//
// A row is a hash: status, final ('1'/'0'), fingerprint, version, observed_at, source, tracked_at,
// next_check_at ('' for never), failures, lock_token and lock_until while locked, and last_token /
// last_outcome: the lock that last recorded or released it and what it did, so a script ioredis
// resends after a lost reply answers the same instead of `stale`.
// Indexes: `due` (score next_check_at, or lock_until while claimDue or a busy lock moved it there),
// and `idx:<kind>:<pending|final>` (score next_check_at, inf for never) for list and stats.

const COMMON = `local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function indexOf(base, member, final)
  return base .. 'idx:' .. string.sub(member, 1, 3) .. ':' .. (final == '1' and 'final' or 'pending')
end
local function place(base, member, final, nextCheck)
  redis.call('ZREM', indexOf(base, member, final == '1' and '0' or '1'), member)
  redis.call('ZADD', indexOf(base, member, final), nextCheck == '' and 'inf' or nextCheck, member)
  if nextCheck == '' then
    redis.call('ZREM', base .. 'due', member)
  else
    redis.call('ZADD', base .. 'due', nextCheck, member)
  end
end
local function remove(key, base, member)
  redis.call('DEL', key)
  redis.call('ZREM', indexOf(base, member, '0'), member)
  redis.call('ZREM', indexOf(base, member, '1'), member)
  redis.call('ZREM', base .. 'due', member)
end
`;

/** KEYS: row. ARGV: base, member, next_check_at. 1: tracked now; 0: already there. */
export const TRACK = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', 0, 'final', '0', 'tracked_at', now(), 'next_check_at', ARGV[3], 'failures', 0)
place(ARGV[1], ARGV[2], '0', ARGV[3])
return 1`;

/** KEYS: row. ARGV: base, member. 1: removed; 0: absent or observed. */
export const FORGET = `${COMMON}
local version = redis.call('HGET', KEYS[1], 'version')
if not version or tonumber(version) > 0 then return 0 end
remove(KEYS[1], ARGV[1], ARGV[2])
return 1`;

/** KEYS: row. ARGV: base, member. 1: the row and its index entries removed, whatever its state (a lock held on it then finds it gone: `stale`); 0: absent. */
export const ERASE = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
remove(KEYS[1], ARGV[1], ARGV[2])
return 1`;

/**
 * KEYS: row. ARGV: base, member. Makes the row due now (final or not): the next claim takes it, or
 * finds it locked and leaves it to that check. 1: done; 0: untracked.
 */
export const CHECK_SOON = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local at = tostring(now())
redis.call('HSET', KEYS[1], 'next_check_at', at)
place(ARGV[1], ARGV[2], redis.call('HGET', KEYS[1], 'final'), at)
return 1`;

/** KEYS: row. ARGV: token, leaseMs. `untracked`, `busy`, or {now, the row's fields before the lock}. */
export const LOCK = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'untracked' end
local at = now()
local held = redis.call('HMGET', KEYS[1], 'lock_token', 'lock_until')
if held[1] and tonumber(held[2]) > at then return 'busy' end
local row = redis.call('HGETALL', KEYS[1])
redis.call('HSET', KEYS[1], 'lock_token', ARGV[1], 'lock_until', at + tonumber(ARGV[2]))
return {at, row}`;

/**
 * KEYS: due. ARGV: base, limit, leaseMs, token prefix, most rows to look at. Locks due rows whose
 * lock is free, oldest due first, and moves each locked row's due score to its lock's end, claimed
 * or busy alike, so the next claim neither sees it nor stops at it: one whose holder dies is due
 * again when that lock runs out. Answers {now, {member, token, fields before the lock}...}.
 */
export const CLAIM_DUE = `${COMMON}
local at = now()
local base, limit, untilMs = ARGV[1], tonumber(ARGV[2]), at + tonumber(ARGV[3])
local claimed, examined = {}, 0
while #claimed < limit and examined < tonumber(ARGV[5]) do
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', at, 'LIMIT', 0, limit - #claimed)
  if #batch == 0 then break end
  for _, member in ipairs(batch) do
    examined = examined + 1
    local row = base .. 'row:' .. member
    local held = redis.call('HMGET', row, 'lock_token', 'lock_until')
    if redis.call('EXISTS', row) == 0 then
      redis.call('ZREM', KEYS[1], member)
    elseif held[1] and tonumber(held[2]) > at then
      redis.call('ZADD', KEYS[1], held[2], member)
    else
      local token = ARGV[4] .. ':' .. #claimed
      local fields = redis.call('HGETALL', row)
      redis.call('HSET', row, 'lock_token', token, 'lock_until', untilMs)
      redis.call('ZADD', KEYS[1], untilMs, member)
      claimed[#claimed + 1] = {member, token, fields}
    end
  end
end
return {at, claimed}`;

/**
 * KEYS: row. ARGV: base, member, token, changed ('1'/'0'), version, status, final, fingerprint,
 * observed_at, source, next_check_at, the queued commands as JSON, `1` on a Cluster. Applies the
 * commands and the row's change together, only for the lock's holder: `changed`, `unchanged`,
 * `stale` with nothing applied, or `{'cross-slot', n}` (see CROSS_SLOT) with nothing applied. Redis has no rollback: a command Redis refuses stops the script with the
 * commands before it applied and the row (and its lock) as they were.
 */
export const RECORD = `${COMMON}
${CROSS_SLOT}
local held = redis.call('HMGET', KEYS[1], 'lock_token', 'last_token', 'last_outcome')
if held[1] ~= ARGV[3] then
  if held[2] == ARGV[3] and held[3] ~= 'released' then return held[3] end
  return 'stale'
end
local outcome = 'unchanged'
if ARGV[4] == '1' then
  local commands = cjson.decode(ARGV[12])
  if ARGV[13] == '1' then
    local n = cross_slot(commands, KEYS[1])
    if n then return {'cross-slot', n} end
  end
  for _, command in ipairs(commands) do redis.call(unpack(command)) end
  redis.call('HSET', KEYS[1], 'version', ARGV[5], 'status', ARGV[6], 'final', ARGV[7], 'fingerprint', ARGV[8])
  outcome = 'changed'
end
redis.call('HSET', KEYS[1], 'observed_at', ARGV[9], 'source', ARGV[10], 'next_check_at', ARGV[11], 'failures', 0,
  'last_token', ARGV[3], 'last_outcome', outcome)
redis.call('HDEL', KEYS[1], 'lock_token', 'lock_until')
place(ARGV[1], ARGV[2], redis.call('HGET', KEYS[1], 'final'), ARGV[11])
if ARGV[10] == 'webhook' then redis.call('HSET', ARGV[1] .. 'state', 'last_webhook_at', now()) end
return outcome`;

/** KEYS: row. ARGV: base, member, token, next_check_at, failures. 1: released; 0: not the holder's. */
export const RELEASE = `${COMMON}
local held = redis.call('HMGET', KEYS[1], 'lock_token', 'last_token', 'last_outcome')
if held[1] ~= ARGV[3] then
  if held[2] == ARGV[3] and held[3] == 'released' then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'next_check_at', ARGV[4], 'failures', ARGV[5], 'last_token', ARGV[3], 'last_outcome', 'released')
redis.call('HDEL', KEYS[1], 'lock_token', 'lock_until')
place(ARGV[1], ARGV[2], redis.call('HGET', KEYS[1], 'final'), ARGV[4])
return 1`;

/** KEYS: state. ARGV: intervalMs. Answers how long (ms) to wait for the slot reserved. */
export const RESERVE_READ = `${COMMON}
local at = now()
local slot = math.max(at, tonumber(redis.call('HGET', KEYS[1], 'next_read_at') or '0'))
redis.call('HSET', KEYS[1], 'next_read_at', slot + tonumber(ARGV[1]))
return slot - at`;

/** KEYS: state. ARGV: ms. No read slot before now + ms. */
export const PAUSE_READS = `${COMMON}
local resume = now() + tonumber(ARGV[1])
if resume > tonumber(redis.call('HGET', KEYS[1], 'next_read_at') or '0') then
  redis.call('HSET', KEYS[1], 'next_read_at', resume)
end
return 1`;

/**
 * KEYS: the indexes, kyb pending, kyb final, kyc pending, kyc final. ARGV: base, limit, pending
 * only ('1'/'0'), kind ('' for both). The first `limit` rows by next check (never last), as {member, fields}.
 */
export const LIST = `local limit = tonumber(ARGV[2])
local ranked = {}
for i, key in ipairs(KEYS) do
  local kind, final = i <= 2 and 'kyb' or 'kyc', i % 2 == 0
  if (ARGV[4] == '' or ARGV[4] == kind) and not (final and ARGV[3] == '1') then
    local scored = redis.call('ZRANGE', key, 0, limit - 1, 'WITHSCORES')
    for j = 1, #scored, 2 do
      ranked[#ranked + 1] = {scored[j], scored[j + 1] == 'inf' and math.huge or tonumber(scored[j + 1])}
    end
  end
end
table.sort(ranked, function(a, b)
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[1] < b[1]
end)
local rows = {}
for i = 1, math.min(limit, #ranked) do
  rows[i] = {ranked[i][1], redis.call('HGETALL', ARGV[1] .. 'row:' .. ranked[i][1])}
end
return rows`;

/**
 * KEYS: state, then the indexes as for LIST. ARGV: base.
 * {kyb pending, kyb oldest tracked_at or -1, kyc pending, kyc oldest or -1, final, last_webhook_at or ''}:
 * the oldest is read from each pending row (the indexes are ordered by next check, not by tracking).
 */
export const STATS = `local function pendingOf(index)
  local oldest = -1
  local members = redis.call('ZRANGE', index, 0, -1)
  for _, member in ipairs(members) do
    local at = tonumber(redis.call('HGET', ARGV[1] .. 'row:' .. member, 'tracked_at'))
    if at and (oldest < 0 or at < oldest) then oldest = at end
  end
  return #members, oldest
end
local kybPending, kybOldest = pendingOf(KEYS[2])
local kycPending, kycOldest = pendingOf(KEYS[4])
local final = redis.call('ZCARD', KEYS[3]) + redis.call('ZCARD', KEYS[5])
return {kybPending, kybOldest, kycPending, kycOldest, final, redis.call('HGET', KEYS[1], 'last_webhook_at') or ''}`;
