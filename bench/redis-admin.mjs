// Operator work on the Redis inbox (VERIKIT_TEST_REDIS_URL, else 127.0.0.1:6379): how long erase,
// reseal and the payload prune take on a queue of `jobs` completed events of which `kept` still have a
// body (the rest past payload retention, as most of a 7-day queue is), written as the inbox leaves
// them (BullMQ's job hashes and completed set, verikit's body index), and the longest one script ran.
import { randomBytes } from 'node:crypto';
import { createRedisInbox } from '@verikit/redis';
import { Redis } from 'ioredis';
import { fmt, reportMedian } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'verikit-inbox';
const key = (id) => ({ id, key: randomBytes(32) });

/**
 * KEYS: completed, the body index. ARGV: job key prefix, first, last, kept from, finished at.
 * Completed jobs `msg_<i>`; those from `kept from` keep a ~1.5 KB body about one of 1,000 people.
 */
const FILL = `for i = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local id = string.format('msg_%07d', i)
  local data = '{"id":"' .. id .. '","timestamp":1700000000'
  if i >= tonumber(ARGV[4]) then
    data = data .. ',"body":' .. cjson.encode(cjson.encode({type = 'kyc.session.status_changed', data = {refId = 'user-' .. (i % 1000),
      status = 'IN_REVIEW', person = {name = 'Zoë Canary-Ångström ' .. i, address = i .. ' Rue des Mésanges, 75011 Paris'},
      pad = string.rep('x', 1300)}}))
    redis.call('ZADD', KEYS[2], ARGV[5], id)
  end
  redis.call('HSET', ARGV[1] .. id, 'name', 'event', 'data', data .. '}', 'opts', '{}', 'timestamp', ARGV[5], 'finishedOn', ARGV[5],
    'processedOn', ARGV[5], 'ats', 1, 'atm', 1, 'returnvalue', 'null')
  redis.call('ZADD', KEYS[1], ARGV[5], id)
end
return 1`;

async function fill(redis, prefix, jobs, kept) {
  const toKey = (name) => `${prefix}:${QUEUE}:${name}`;
  await redis.set(toKey('verikit:backfilled'), 'done');
  for (let first = 1; first <= jobs; first += 5_000)
    await redis.eval(
      FILL,
      2,
      toKey('completed'),
      toKey('verikit:bodies'),
      toKey(''),
      first,
      Math.min(jobs, first + 4_999),
      jobs - kept + 1,
      Date.now(),
    );
}

async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

/**
 * The longest command naming `prefix` the server's SLOWLOG holds after entry `since`, in ms, or 0 when
 * none took longer than its threshold (`slowlog-log-slower-than`, 10 ms by default; read, not changed:
 * the server is shared).
 */
async function longestSince(redis, since, prefix) {
  const entries = await redis.slowlog('GET', 1_000);
  const ours = entries.filter(([id, , , args]) => id > since && args.some((arg) => String(arg).includes(prefix)));
  return Math.max(0, ...ours.map(([, , micros]) => micros / 1000));
}

/** Runs the operator benchmarks on Redis and prints their figures. */
export async function benchRedisAdmin({ jobs = 100_000, kept = 10_000, rounds = 3 } = {}) {
  const redis = new Redis(URL);
  const figures = { erasePlain: [], sealPlain: [], rotate: [], eraseSealed: [], prune: [], longest: [] };
  const [, threshold] = await redis.config('GET', 'slowlog-log-slower-than');
  try {
    for (let round = 0; round < rounds; round++) {
      const prefix = `{verikit-bench-admin-${Date.now().toString(36)}}`;
      const [k1, k2] = [key('k1'), key('k2')];
      const opened = [];
      const inbox = (options = {}) => {
        const made = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false, pruneIntervalMs: 0, ...options });
        opened.push(made);
        return made;
      };
      try {
        await fill(redis, prefix, jobs, kept);
        const [[since = -1] = []] = await redis.slowlog('GET', 1);
        const erasePlain = await timed(() => inbox().erase({ kind: 'kyc', refId: 'user-7' }));
        const sealPlain = await timed(() => inbox({ encryption: { keys: [k1] } }).reseal());
        const rotate = await timed(() => inbox({ encryption: { keys: [k2, k1] } }).reseal());
        const eraseSealed = await timed(() => inbox({ encryption: { keys: [k2] } }).erase({ kind: 'kyc', refId: 'user-8' }));
        const prune = await timed(() => inbox({ payloadRetentionMs: 0 }).prune());
        figures.longest.push(await longestSince(redis, since, prefix));
        const perRefId = kept / 1000;
        if (erasePlain.result.erased !== perRefId || eraseSealed.result.erased !== perRefId)
          throw new Error(`erased ${erasePlain.result.erased} and ${eraseSealed.result.erased}, not ${perRefId} each`);
        if (sealPlain.result.resealed !== kept - perRefId || rotate.result.resealed !== sealPlain.result.resealed)
          throw new Error(`resealed ${sealPlain.result.resealed} then ${rotate.result.resealed}`);
        if (prune.result !== kept - 2 * perRefId) throw new Error(`pruned ${prune.result} bodies, not ${kept - 2 * perRefId}`);
        figures.erasePlain.push(erasePlain.ms);
        figures.sealPlain.push(sealPlain.ms);
        figures.rotate.push(rotate.ms);
        figures.eraseSealed.push(eraseSealed.ms);
        figures.prune.push(prune.ms);
      } finally {
        for (const made of opened) await made.close();
        const keys = await redis.keys(`${prefix}*`);
        for (let i = 0; i < keys.length; i += 1_000) await redis.del(...keys.slice(i, i + 1_000));
      }
    }
  } finally {
    redis.disconnect();
  }
  const ms = (key, label, list) => reportMedian({ name: `admin/redis/${key}`, label: label.padEnd(36), list, unit: 'ms' });
  console.log(
    `inbox admin (Redis at ${new globalThis.URL(URL).host}): ${fmt(jobs)} completed events, ${fmt(kept)} with a ~1.5 KB body, median of ${rounds} rounds:`,
  );
  ms('erase-plain', 'erase one refId, plain bodies', figures.erasePlain);
  ms('reseal-plain', 'reseal plain -> k1', figures.sealPlain);
  ms('reseal-rotate', 'reseal k1 -> k2 (key rotation)', figures.rotate);
  ms('erase-sealed', 'erase one refId, sealed bodies', figures.eraseSealed);
  ms('prune', 'prune the kept bodies, 100 a script', figures.prune);
  ms('slowlog-longest', `longest command over ${fmt(threshold / 1000)} ms (0: none; SLOWLOG)`, figures.longest);
  return figures;
}
