// The inbox's own Lua, beside BullMQ's: what payload retention, erasure, dead-letter paging and
// re-sealing change in a queue. Every script takes the queue's keys in the order of INBOX_KEYS (all
// under one hash tag, so one Cluster slot) and ARGV[1], the prefix of a job's key; a job is the hash
// `<prefix><jobId>` whose `data` field is the delivery as JSON, `{"id":...,"timestamp":...,"body":"..."}`,
// always in that order (the inbox writes it so), and `{"id":...,"timestamp":...}` once its body is removed.
//
// Two indexes of verikit's own sit beside BullMQ's sets, under names no job id can take (job ids
// hold no `:`):
// - `verikit:bodies`: completed jobs that may still hold a body, scored by when they completed. A
//   completion adds its job (the worker sends the ZADD just ahead of BullMQ's completion, on the same
//   connection); the prune strips the body once the job is done long enough. BullMQ's `completed` set
//   cannot serve: most of it (the 7 days of ids kept for dedupe) holds no body any more.
// - `verikit:dead`: dead letters scored by when they were received, the order an operator pages
//   them in (BullMQ's `failed` set is scored by when they died). A dead-lettering adds its job the
//   same way; replays, purges and erasure remove theirs. It is rebuilt from `failed` whenever the two
//   disagree in size (dead letters of an older version, a dead-lettering whose lease was lost).

/** The queue keys every script here takes, in this order (KEYS[1] ... KEYS[12]). */
export const INBOX_KEYS = [
  'wait',
  'paused',
  'active',
  'prioritized',
  'delayed',
  'completed',
  'failed',
  'events',
  'stalled',
  'verikit:bodies',
  'verikit:dead',
  'verikit:backfilled',
] as const;

const COMMON = `local K = {wait = KEYS[1], paused = KEYS[2], active = KEYS[3], prioritized = KEYS[4], delayed = KEYS[5],
  completed = KEYS[6], failed = KEYS[7], events = KEYS[8], stalled = KEYS[9], bodies = KEYS[10], dead = KEYS[11],
  backfilled = KEYS[12]}
local prefix = ARGV[1]

-- Removes the body from a job's data, keeping its id and timestamp; true when there was one.
local function strip(job)
  local data = redis.call('HGET', job, 'data')
  if not data then return false end
  -- The body is the last field; inside a JSON string a quote is escaped, so this is the field itself.
  local at = string.find(data, ',"body":', 1, true)
  if not at then return false end
  redis.call('HSET', job, 'data', string.sub(data, 1, at - 1) .. '}')
  return true
end

-- Moves a job that waits, waits out a backoff or is dead to BullMQ's completed set, finished now,
-- so no worker runs it and a repeat of its id is still one; a completed job stays. With held, a
-- job a worker holds is taken from it too (its lock deleted: the worker's completion, failure or
-- extension is then refused as stale, with none of its ctx.sql writes applied).
local function finish(id, now, held)
  if redis.call('ZSCORE', K.completed, id) then return end
  local moved = redis.call('ZREM', K.failed, id) + redis.call('LREM', K.wait, 0, id) + redis.call('LREM', K.paused, 0, id)
    + redis.call('ZREM', K.delayed, id) + redis.call('ZREM', K.prioritized, id)
  if held and redis.call('LREM', K.active, 0, id) > 0 then
    redis.call('DEL', prefix .. id .. ':lock')
    redis.call('SREM', K.stalled, id)
    moved = moved + 1
  end
  if moved == 0 then return end
  redis.call('ZADD', K.completed, now, id)
  redis.call('HSET', prefix .. id, 'finishedOn', now)
end

-- Makes the dead-letter index hold what BullMQ's failed set holds, when their sizes differ.
local function indexDead()
  if redis.call('ZCARD', K.failed) == redis.call('ZCARD', K.dead) then return end
  redis.call('DEL', K.dead)
  for _, id in ipairs(redis.call('ZRANGE', K.failed, 0, -1)) do
    redis.call('ZADD', K.dead, tonumber(redis.call('HGET', prefix .. id, 'timestamp')) or 0, id)
  end
end
`;

/**
 * ARGV: prefix, now, done-before (ms), batch. Strips the bodies of jobs completed before done-before;
 * a job held by a worker (its completion racing this prune) is looked at again later, and one no
 * longer completed leaves the index (its next completion adds it again). Answers {looked at, removed}.
 */
export const PRUNE = `${COMMON}
local ids = redis.call('ZRANGEBYSCORE', K.bodies, '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local stripped = 0
for _, id in ipairs(ids) do
  if redis.call('ZSCORE', K.completed, id) then
    if strip(prefix .. id) then stripped = stripped + 1 end
    redis.call('ZREM', K.bodies, id)
  elseif redis.call('EXISTS', prefix .. id .. ':lock') == 1 then
    redis.call('ZADD', K.bodies, ARGV[2], id)
  else
    redis.call('ZREM', K.bodies, id)
  end
end
return {#ids, stripped}`;

/**
 * ARGV: prefix, now, received-before (ms), batch. Purges dead letters received before
 * received-before (purgeDead, and dead-letter retention): body removed, moved to completed. Answers {looked at, purged}.
 */
export const PURGE_DEAD = `${COMMON}
indexDead()
local ids = redis.call('ZRANGEBYSCORE', K.dead, '-inf', '(' .. ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]))
local purged = 0
for _, id in ipairs(ids) do
  if redis.call('ZSCORE', K.failed, id) then
    strip(prefix .. id)
    finish(id, ARGV[2], false)
    purged = purged + 1
  end
  redis.call('ZREM', K.dead, id)
end
return {#ids, purged}`;

/**
 * ARGV: prefix, limit, received-since (ms or ''), after (a job id or ''), after's old job id (or '').
 * A page of dead letters by (received, job id): {{jobId, received, attempts started, failedReason}...},
 * or 'unknown-after' when `after` names no stored event.
 */
export const DEAD_PAGE = `${COMMON}
indexDead()
local limit = tonumber(ARGV[2])
local start = 0
if ARGV[3] ~= '' then start = redis.call('ZCOUNT', K.dead, '-inf', '(' .. ARGV[3]) end
if ARGV[4] ~= '' then
  local after, received = nil, nil
  for i = 4, 5 do
    if not after and ARGV[i] ~= '' then
      received = redis.call('ZSCORE', K.dead, ARGV[i]) or redis.call('HGET', prefix .. ARGV[i], 'timestamp')
      if received then after = ARGV[i] end
    end
  end
  if not after then return 'unknown-after' end
  -- Where it stands (or would stand) in the index: placed there for the moment it takes to ask.
  local placed = redis.call('ZADD', K.dead, 'NX', received, after)
  local rank = redis.call('ZRANK', K.dead, after)
  if placed == 1 then redis.call('ZREM', K.dead, after) else rank = rank + 1 end
  if rank > start then start = rank end
end
local page = {}
while #page < limit do
  local scored = redis.call('ZRANGE', K.dead, start, start + limit - #page - 1, 'WITHSCORES')
  if #scored == 0 then break end
  local gone = 0
  for i = 1, #scored, 2 do
    local id = scored[i]
    if redis.call('ZSCORE', K.failed, id) then
      local job = redis.call('HMGET', prefix .. id, 'ats', 'failedReason')
      page[#page + 1] = {id, scored[i + 1], job[1] or '0', job[2] or false}
    else
      redis.call('ZREM', K.dead, id)
      gone = gone + 1
    end
  end
  start = start + #scored / 2 - gone
end
return page`;

/**
 * ARGV: prefix, batch. Adds to the body index, a batch per call, the completed jobs that still hold
 * a body but were completed before it existed (by an older version), newest first: a completion
 * meanwhile only moves ranks up, so none is skipped. Answers 1 once every one was looked at.
 */
export const BACKFILL = `${COMMON}
local state = redis.call('GET', K.backfilled)
if state == 'done' then return 1 end
local offset, batch = tonumber(state or '0'), tonumber(ARGV[2])
local scored = redis.call('ZREVRANGE', K.completed, offset, offset + batch - 1, 'WITHSCORES')
for i = 1, #scored, 2 do
  local data = redis.call('HGET', prefix .. scored[i], 'data')
  if data and string.find(data, ',"body":', 1, true) then redis.call('ZADD', K.bodies, 'NX', scored[i + 1], scored[i]) end
end
if #scored < batch * 2 then
  redis.call('SET', K.backfilled, 'done')
  return 1
end
redis.call('SET', K.backfilled, offset + batch)
return 0`;

/** ARGV: prefix. Every job that may still hold a body: pending, held, dead, or completed within payload retention. */
export const WITH_BODIES = `${COMMON}
local ids = {}
for _, list in ipairs({K.wait, K.paused, K.active}) do
  for _, id in ipairs(redis.call('LRANGE', list, 0, -1)) do
    -- "0:..." entries are markers older BullMQ versions put in the wait list, no jobs.
    if string.sub(id, 1, 2) ~= '0:' then ids[#ids + 1] = id end
  end
end
for _, set in ipairs({K.prioritized, K.delayed, K.failed, K.bodies}) do
  for _, id in ipairs(redis.call('ZRANGE', set, 0, -1)) do ids[#ids + 1] = id end
end
return ids`;

/** ARGV: prefix, job ids... Their `data` fields (nil for a job that is gone). */
export const READ_DATA = `local out = {}
for i = 2, #ARGV do out[i - 1] = redis.call('HGET', ARGV[1] .. ARGV[i], 'data') end
return out`;

/**
 * ARGV: prefix, now, job ids... Erases each job's body and its errors (the error of a failed attempt
 * may name the verification), finishes it (taking it from a worker that holds it), drops it from
 * verikit's indexes and deletes the entries of BullMQ's event stream about it. Answers how many bodies were removed.
 */
export const ERASE = `${COMMON}
local erased, ids = 0, {}
for i = 3, #ARGV do
  local id = ARGV[i]
  ids[id] = true
  if strip(prefix .. id) then erased = erased + 1 end
  redis.call('HDEL', prefix .. id, 'failedReason', 'stacktrace')
  finish(id, ARGV[2], true)
  redis.call('ZREM', K.bodies, id)
  redis.call('ZREM', K.dead, id)
end
-- Pages of the stream, each starting at the last entry of the one before (read again, not twice deleted).
local from, entries = '-', nil
repeat
  entries = redis.call('XRANGE', K.events, from, '+', 'COUNT', 1000)
  for _, entry in ipairs(entries) do
    local fields = entry[2]
    for j = 1, #fields - 1, 2 do
      if fields[j] == 'jobId' and ids[fields[j + 1]] then redis.call('XDEL', K.events, entry[1]) end
    end
  end
  if #entries > 0 then from = entries[#entries][1] end
until #entries < 1000
return erased`;

/** ARGV: prefix, then (job id, data read, data to write) for each job. Writes each only where `data` is still what was read. */
export const RESEAL = `local written = 0
for i = 2, #ARGV, 3 do
  local job = ARGV[1] .. ARGV[i]
  if redis.call('HGET', job, 'data') == ARGV[i + 1] then
    redis.call('HSET', job, 'data', ARGV[i + 2])
    written = written + 1
  end
end
return written`;
