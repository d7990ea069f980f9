import type { LedgerKey, LedgerLock, Observation, ObservationSource } from '@verikit/core';
import { ledgerContract } from '@verikit/testing';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisLedger, RedisTimeoutError, type RedisTransaction } from '../src/index.js';
import { ledgerBase } from '../src/ledger-keys.js';
import { requireRedisServerBinary, startDedicatedRedis } from './dedicated-redis.js';

// Each run writes under its own prefix, so parallel or repeated runs never collide.
const run = `verikit-test:${process.pid}:${Date.now().toString(36)}:`;
const serverAvailable = await requireService('Redis', REDIS_URL);
const PERSONAL = 'Jane Q. Citizen, born 1970-01-01, passport X1234567';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const past = () => new Date(Date.now() - 60_000);
const later = () => new Date(Date.now() + 3_600_000);
const seen = (status: string, source: ObservationSource = 'reconcile'): Observation & { source: ObservationSource } => ({
  status,
  final: status === 'COMPLETED',
  fingerprint: `fp-${status}`,
  source,
});
const nothing = async () => {};
/** The hash tag Redis Cluster reads in a key: the text between its first `{` and the next `}`. */
const tagOf = (key: string) => /^[^{]*\{([^}]*)\}/.exec(key)?.[1];

describe.runIf(serverAvailable)('the Redis ledger on the real server', () => {
  let redis: Redis;
  let tests = 0;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${run}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  /** A ledger under a prefix of this test's own, with a second instance on another connection (another process, as Redis sees it). */
  function fresh() {
    const prefix = `${run}${++tests}:`;
    const ledger = createRedisLedger({ redis, prefix, persistence: 'ignore', logger: false });
    const otherRedis = redis.duplicate();
    const other = createRedisLedger({ redis: otherRedis, prefix, persistence: 'ignore', logger: false });
    const keys = () => redis.keys(`${prefix}*`);
    return { prefix, ledger, other, keys, close: () => otherRedis.disconnect() };
  }

  describe('the ledger contract', () => {
    // Effects in the ledger's slot, as a Cluster needs them.
    const effects = `${run}effects:{verikit-test}`;
    for (const c of ledgerContract<RedisTransaction>({
      createLedger: () => createRedisLedger({ redis, prefix: `${run}${++tests}:`, persistence: 'ignore', logger: false }),
      effects: {
        write: (tx, tag) => tx.call('HINCRBY', effects, tag, 1),
        count: async (tag) => Number((await redis.hget(effects, tag)) ?? 0),
      },
    })) {
      it(c.name, c.run);
    }
  });

  it("keeps every key under one hash tag: the prefix's first segment ({verikit} for the default), or the prefix's own tag", async () => {
    expect(ledgerBase('verikit:ledger:')).toBe('verikit:ledger:{verikit}:');
    const { ledger, keys, prefix, close } = fresh();
    await ledger.track({ kind: 'kyb', refId: 'biz-42' }, { nextCheckAt: past() });
    const lock = expectLockOf(await ledger.lock({ kind: 'kyb', refId: 'biz-42' }, { leaseMs: 5_000 }));
    await ledger.record(lock, seen('IN_REVIEW', 'webhook'), later, nothing);
    await ledger.reserveRead({ intervalMs: 10 });
    const written = await keys();
    expect(written.sort()).toEqual(
      ['due', 'idx:kyb:pending', 'row:kyb:biz-42', 'state'].map((name) => `${prefix}{verikit-test}:${name}`).sort(),
    );

    const tagged = createRedisLedger({ redis, prefix: `${prefix}own{tag-${tests}}:`, persistence: 'ignore' });
    await tagged.track({ kind: 'kyc', refId: 'user-1' }, { nextCheckAt: past() });
    const own = await redis.keys(`${prefix}own*`);
    expect(new Set(own.map(tagOf))).toEqual(new Set([`tag-${tests}`]));
    expect(own).toContain(`${prefix}own{tag-${tests}}:row:kyc:user-1`);
    close();
  });

  it('refIds with ":", braces, "%", unicode and 256 characters each get a row of their own, in the same slot, read back exactly', async () => {
    const { ledger, keys, close } = fresh();
    const refIds = [
      'a',
      'a:b',
      'a:b:c',
      '{verikit}',
      'x}y{z',
      '{',
      '}',
      '%',
      '%0041',
      'A',
      'row:kyb:a',
      '../due',
      'state',
      'café',
      'cafe\u0301',
      '\uFFFD',
      '🙂'.repeat(128),
      'z'.repeat(256),
      ' ',
      '\n',
    ];
    const tracked: LedgerKey[] = refIds.flatMap((refId) => [
      { kind: 'kyb' as const, refId },
      { kind: 'kyc' as const, refId },
    ]);
    for (const key of tracked) expect(await ledger.track(key, { nextCheckAt: later() })).toBe('tracked');
    for (const key of tracked) expect(await ledger.track(key, { nextCheckAt: later() })).toBe('already-tracked');
    const rows = (await keys()).filter((key) => key.includes('}:row:'));
    expect(rows).toHaveLength(tracked.length);
    expect(new Set((await keys()).map(tagOf))).toEqual(new Set(['verikit-test']));
    for (const key of tracked) expect(await ledger.get(key)).toMatchObject(key);
    const listed = await ledger.list({ limit: 1_000 });
    expect(listed.map(({ kind, refId }) => ({ kind, refId })).sort(byKey)).toEqual([...tracked].sort(byKey));
    // One row's observation touches no other.
    const lock = expectLockOf(await ledger.lock({ kind: 'kyb', refId: 'a:b' }, { leaseMs: 5_000 }));
    expect(await ledger.record(lock, seen('COMPLETED'), () => null, nothing)).toBe('changed');
    const changed = (await ledger.list({ limit: 1_000 })).filter((entry) => entry.version > 0);
    expect(changed.map(({ kind, refId }) => ({ kind, refId }))).toEqual([{ kind: 'kyb', refId: 'a:b' }]);
    expect(await ledger.stats()).toMatchObject({ pending: tracked.length - 1, final: 1, lastWebhookAt: null });
    close();
  });

  it('refuses bad input with a typed error and writes nothing', async () => {
    const { ledger, keys, close } = fresh();
    await expect(ledger.track({ kind: 'kyb', refId: '' }, { nextCheckAt: later() })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(ledger.track({ kind: 'kyb', refId: 'z'.repeat(257) }, { nextCheckAt: later() })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(ledger.track({ kind: 'kyz' as 'kyb', refId: 'a' }, { nextCheckAt: later() })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(ledger.track({ kind: 'kyb', refId: 'a' }, { nextCheckAt: new Date(Number.NaN) })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    await expect(ledger.lock({ kind: 'kyb', refId: 'a' }, { leaseMs: 0 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(ledger.claimDue({ limit: 0, leaseMs: 1_000 })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(ledger.list({ limit: 1.5 })).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await keys()).toEqual([]);
    expect(() => createRedisLedger({ redis, prefix: '' })).toThrow(/prefix/);
    expect(() => createRedisLedger({ redis, prefix: 'a{}b:' })).toThrow(/hash tag/);
    expect(() => createRedisLedger({ redis, prefix: 'a{b:' })).toThrow(/hash tag/);
    expect(() => createRedisLedger({ redis, timeoutMs: 0 })).toThrow(/timeoutMs/);
    close();
  });

  it('ten concurrent locks of one row from two instances: one lock, nine busy; untracked rows say so', async () => {
    const { ledger, other, close } = fresh();
    const key: LedgerKey = { kind: 'kyc', refId: 'user-1' };
    expect(await ledger.lock(key, { leaseMs: 5_000 })).toBe('untracked');
    await ledger.track(key, { nextCheckAt: later() });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : ledger).lock(key, { leaseMs: 5_000 })));
    expect(answers.filter((answer) => answer === 'busy')).toHaveLength(9);
    const [lock] = answers.filter((answer) => typeof answer !== 'string') as LedgerLock[];
    expect(lock?.entry).toMatchObject({ kind: 'kyc', refId: 'user-1', version: 0, status: null });
    // lockedAt is the server's clock.
    const [seconds] = await redis.time();
    expect(Math.abs((lock?.lockedAt.getTime() ?? 0) - Number(seconds) * 1000)).toBeLessThan(5_000);
    close();
  });

  it('a record changes the row (version, status, final, observed at the lock, next check), applies ctx.sql with it, and frees the lock', async () => {
    const { ledger, other, prefix, close } = fresh();
    const key: LedgerKey = { kind: 'kyb', refId: 'biz-1' };
    await ledger.track(key, { nextCheckAt: past() });
    const first = expectLockOf(await ledger.lock(key, { leaseMs: 5_000 }));
    const changes: unknown[] = [];
    const effects = `${prefix}{verikit-test}:effects`;
    const outcome = await ledger.record(
      first,
      seen('IN_REVIEW', 'webhook'),
      (changed) => (changed ? later() : past()),
      async (change, tx) => {
        changes.push(change);
        tx.call('HSET', effects, `${change.refId}:${change.version}`, change.current);
      },
    );
    expect(outcome).toBe('changed');
    expect(changes).toEqual([{ ...key, previous: null, current: 'IN_REVIEW', final: false, version: 1, source: 'webhook' }]);
    expect(await redis.hgetall(effects)).toEqual({ 'biz-1:1': 'IN_REVIEW' });
    expect(await ledger.get(key)).toMatchObject({
      status: 'IN_REVIEW',
      final: false,
      fingerprint: 'fp-IN_REVIEW',
      version: 1,
      observedAt: first.lockedAt,
      source: 'webhook',
      failures: 0,
    });
    expect((await ledger.stats()).lastWebhookAt).toBeInstanceOf(Date);
    // Freed: the other instance takes it at once; the same result again runs nothing.
    const second = expectLockOf(await other.lock(key, { leaseMs: 5_000 }));
    expect(
      await other.record(
        second,
        seen('IN_REVIEW'),
        () => null,
        async () => void changes.push('ran'),
      ),
    ).toBe('unchanged');
    expect(changes).toHaveLength(1);
    expect(await ledger.get(key)).toMatchObject({ version: 1, source: 'reconcile', nextCheckAt: null });
    const third = expectLockOf(await ledger.lock(key, { leaseMs: 5_000 }));
    expect(
      await ledger.record(
        third,
        seen('COMPLETED'),
        () => null,
        async (change) => void changes.push(change.previous),
      ),
    ).toBe('changed');
    expect(changes[1]).toBe('IN_REVIEW');
    expect(await ledger.get(key)).toMatchObject({ status: 'COMPLETED', final: true, version: 2 });
    expect(await ledger.stats()).toMatchObject({ pending: 0, final: 1 });
    expect(await ledger.list({ pending: true })).toEqual([]);
    close();
  });

  it('a throw from onChange records nothing and applies none of its writes: the error is rethrown, the row and its lock stay', async () => {
    const { ledger, other, prefix, close } = fresh();
    const key: LedgerKey = { kind: 'kyc', refId: 'user-throw' };
    await ledger.track(key, { nextCheckAt: past() });
    const lock = expectLockOf(await ledger.lock(key, { leaseMs: 5_000 }));
    const before = await ledger.get(key);
    const effects = `${prefix}{verikit-test}:effects`;
    const boom = new Error('downstream refused');
    await expect(
      ledger.record(lock, seen('APPROVED'), later, async (_change, tx) => {
        tx.call('SET', effects, PERSONAL);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(await redis.exists(effects)).toBe(0);
    expect(await ledger.get(key)).toEqual(before);
    expect(await other.lock(key, { leaseMs: 5_000 })).toBe('busy');
    // The holder can still record, once: the next attempt applies its writes.
    expect(await ledger.record(lock, seen('APPROVED'), later, async (_change, tx) => tx.call('SET', effects, 'once'))).toBe('changed');
    expect(await redis.get(effects)).toBe('once');
    close();
  });

  it('a lock that ran out and was taken by another: its record is stale, runs no work, applies neither the row nor the writes', async () => {
    const { ledger, other, prefix, close } = fresh();
    const key: LedgerKey = { kind: 'kyb', refId: 'biz-stale' };
    await ledger.track(key, { nextCheckAt: past() });
    const effects = `${prefix}{verikit-test}:effects`;
    const ran: string[] = [];
    const slow = expectLockOf(await ledger.lock(key, { leaseMs: 100 }));
    await sleep(150);
    const fast = expectLockOf(await other.lock(key, { leaseMs: 5_000 }));
    const write = (who: string) => async (_change: unknown, tx: { call(command: string, ...args: string[]): void }) => {
      ran.push(who);
      tx.call('HSET', effects, who, '1');
    };
    expect(await ledger.record(slow, seen('APPROVED'), later, write('slow'))).toBe('stale');
    expect(await ledger.release(slow, { nextCheckAt: past(), failures: 1 })).toBe('stale');
    expect(ran).toEqual([]);
    expect(await other.record(fast, seen('APPROVED'), later, write('fast'))).toBe('changed');

    // Taken while the slow one's onChange ran: its commit is refused, its writes with it.
    const raced: LedgerKey = { kind: 'kyc', refId: 'user-stale' };
    await ledger.track(raced, { nextCheckAt: past() });
    const late = expectLockOf(await ledger.lock(raced, { leaseMs: 100 }));
    let taker: LedgerLock | undefined;
    const outcome = await ledger.record(late, seen('DECLINED'), later, async (_change, tx) => {
      tx.call('HSET', effects, 'late', '1');
      await sleep(150);
      taker = expectLockOf(await other.lock(raced, { leaseMs: 5_000 }));
    });
    expect(outcome).toBe('stale');
    expect(await ledger.get(raced)).toMatchObject({ version: 0, status: null, source: null });
    expect(await redis.hgetall(effects)).toEqual({ fast: '1' });
    if (taker === undefined) throw new Error('expected the row taken');
    expect(await other.record(taker, seen('DECLINED'), later, async () => {})).toBe('changed');
    expect(await ledger.get(raced)).toMatchObject({ version: 1, status: 'DECLINED' });
    close();
  });

  it('a lock that ran out but that nobody took still records', async () => {
    const { ledger, close } = fresh();
    const key: LedgerKey = { kind: 'kyb', refId: 'biz-late' };
    await ledger.track(key, { nextCheckAt: later() });
    const lock = expectLockOf(await ledger.lock(key, { leaseMs: 50 }));
    await sleep(100);
    expect(
      await ledger.record(
        lock,
        seen('COMPLETED'),
        () => null,
        async () => {},
      ),
    ).toBe('changed');
    expect(await ledger.get(key)).toMatchObject({ version: 1, status: 'COMPLETED', final: true });
    close();
  });

  it('three instances claiming 50 due rows at once never hand out one row twice; claimed rows are not due again until their lease runs out', async () => {
    const { ledger, other, prefix, close } = fresh();
    const thirdRedis = redis.duplicate();
    const third = createRedisLedger({ redis: thirdRedis, prefix, persistence: 'ignore' });
    const refIds = Array.from({ length: 50 }, (_, i) => `biz-${i}`);
    for (const refId of refIds) await ledger.track({ kind: 'kyb', refId }, { nextCheckAt: past() });
    await ledger.track({ kind: 'kyb', refId: 'not-due' }, { nextCheckAt: later() });
    const claims = await Promise.all([ledger, other, third].map((l) => l.claimDue({ limit: 20, leaseMs: 300 })));
    const claimed = claims.flat().map((lock) => lock.key.refId);
    expect(claimed).toHaveLength(50);
    expect(new Set(claimed)).toEqual(new Set(refIds));
    expect(new Set(claims.flat().map((lock) => lock.token)).size).toBe(50);
    expect(await third.claimDue({ limit: 50, leaseMs: 300 })).toEqual([]);
    expect(await ledger.lock({ kind: 'kyb', refId: 'biz-0' }, { leaseMs: 300 })).toBe('busy');
    // Their holders "died": each is due again once its lease ran out, and is claimed once.
    await sleep(400);
    const again = await Promise.all([ledger, other, third].map((l) => l.claimDue({ limit: 50, leaseMs: 5_000 })));
    expect(
      again
        .flat()
        .map((lock) => lock.key.refId)
        .sort(),
    ).toEqual([...refIds].sort());
    thirdRedis.disconnect();
    close();
  });

  it('claimDue takes the oldest due first, passes over rows a webhook holds, and a record or release sets when a row is due next', async () => {
    const { ledger, other, close } = fresh();
    const start = Date.now() - 600_000;
    for (let i = 0; i < 6; i++) await ledger.track({ kind: 'kyc', refId: `u${i}` }, { nextCheckAt: new Date(start + i * 1_000) });
    // The three oldest are held by webhook observations.
    const held = await Promise.all(
      [0, 1, 2].map(async (i) => expectLockOf(await other.lock({ kind: 'kyc', refId: `u${i}` }, { leaseMs: 5_000 }))),
    );
    expect((await ledger.claimDue({ limit: 2, leaseMs: 5_000 })).map((lock) => lock.key.refId)).toEqual(['u3', 'u4']);
    const [u5] = await ledger.claimDue({ limit: 5, leaseMs: 5_000 });
    expect(u5?.entry).toMatchObject({ refId: 'u5', version: 0, nextCheckAt: new Date(start + 5_000) });
    // Recorded due now, released due now, recorded due later: two of the three are claimable.
    const [h0, h1, h2] = held as [LedgerLock, LedgerLock, LedgerLock];
    expect(await other.record(h0, seen('PENDING', 'webhook'), past, async () => {})).toBe('changed');
    expect(await other.release(h1, { nextCheckAt: past(), failures: 2 })).toBe('ok');
    expect(await other.record(h2, seen('PENDING', 'webhook'), later, async () => {})).toBe('changed');
    expect(await ledger.get({ kind: 'kyc', refId: 'u1' })).toMatchObject({ failures: 2, version: 0 });
    const due = await ledger.claimDue({ limit: 10, leaseMs: 5_000 });
    expect(due.map((lock) => lock.key.refId).sort()).toEqual(['u0', 'u1']);
    // A row with no next check is never due.
    const u0 = due.find((lock) => lock.key.refId === 'u0') as LedgerLock;
    expect(await ledger.release(u0, { nextCheckAt: null, failures: 0 })).toBe('ok');
    expect(await ledger.get({ kind: 'kyc', refId: 'u0' })).toMatchObject({ nextCheckAt: null });
    expect(await ledger.list({ limit: 10 }).then((rows) => rows.at(-1)?.refId)).toBe('u0');
    close();
  });

  it('list: soonest due first, never last; filtered by kind and pending; stats count pending and final; forget drops only unobserved rows', async () => {
    const { ledger, close } = fresh();
    const at = Date.now() + 60_000;
    await ledger.track({ kind: 'kyb', refId: 'b-late' }, { nextCheckAt: new Date(at + 3_000) });
    await ledger.track({ kind: 'kyc', refId: 'c-soon' }, { nextCheckAt: new Date(at + 1_000) });
    await ledger.track({ kind: 'kyb', refId: 'b-soon' }, { nextCheckAt: new Date(at + 2_000) });
    await ledger.track({ kind: 'kyc', refId: 'c-final' }, { nextCheckAt: new Date(at) });
    const lock = expectLockOf(await ledger.lock({ kind: 'kyc', refId: 'c-final' }, { leaseMs: 5_000 }));
    await ledger.record(
      lock,
      seen('COMPLETED'),
      () => null,
      async () => {},
    );
    const names = (rows: Array<{ refId: string }>) => rows.map((row) => row.refId);
    expect(names(await ledger.list())).toEqual(['c-soon', 'b-soon', 'b-late', 'c-final']);
    expect(names(await ledger.list({ limit: 2 }))).toEqual(['c-soon', 'b-soon']);
    expect(names(await ledger.list({ pending: true }))).toEqual(['c-soon', 'b-soon', 'b-late']);
    expect(names(await ledger.list({ kind: 'kyc' }))).toEqual(['c-soon', 'c-final']);
    expect(names(await ledger.list({ kind: 'kyc', pending: true }))).toEqual(['c-soon']);
    expect(await ledger.stats()).toEqual({
      pending: 3,
      pendingByKind: { kyb: { pending: 2, oldestTrackedAt: expect.any(Date) }, kyc: { pending: 1, oldestTrackedAt: expect.any(Date) } },
      final: 1,
      lastWebhookAt: null,
    });
    expect(await ledger.forget({ kind: 'kyc', refId: 'c-final' })).toBe(false);
    expect(await ledger.forget({ kind: 'kyc', refId: 'absent' })).toBe(false);
    expect(await ledger.forget({ kind: 'kyb', refId: 'b-soon' })).toBe(true);
    expect(await ledger.get({ kind: 'kyb', refId: 'b-soon' })).toBeUndefined();
    expect(names(await ledger.list())).toEqual(['c-soon', 'b-late', 'c-final']);
    expect(await ledger.stats()).toMatchObject({ pending: 2, final: 1 });
    close();
  });

  it('erase removes the row and every index entry naming it (due, per-kind) in one script; the other rows keep theirs (the contract checks the rest)', async () => {
    const { ledger, keys, prefix, close } = fresh();
    const erased: LedgerKey = { kind: 'kyb', refId: 'biz-erased' };
    const kept: LedgerKey = { kind: 'kyb', refId: 'biz-kept' };
    for (const key of [erased, kept]) await ledger.track(key, { nextCheckAt: past() });
    const lock = expectLockOf(await ledger.lock(erased, { leaseMs: 5_000 }));
    expect(await ledger.record(lock, seen('COMPLETED', 'webhook'), later, nothing)).toBe('changed');
    /** The keys naming `refId`, in their name or among their members and values. */
    const naming = async (refId: string) => {
      const found: string[] = [];
      for (const key of await keys()) {
        const type = await redis.type(key);
        const values =
          type === 'zset' ? await redis.zrange(key, '0', '-1') : type === 'hash' ? Object.values(await redis.hgetall(key)) : [];
        if (key.includes(refId) || values.some((value) => value.includes(refId))) found.push(key.slice(prefix.length));
      }
      return found.sort();
    };
    expect(await naming('biz-erased')).toEqual(['{verikit-test}:due', '{verikit-test}:idx:kyb:final', '{verikit-test}:row:kyb:biz-erased']);
    const others = await naming('biz-kept');

    expect(await ledger.erase(erased)).toBe(true);
    expect(await naming('biz-erased')).toEqual([]);
    expect(await naming('biz-kept')).toEqual(others);
    expect(await ledger.claimDue({ limit: 10, leaseMs: 5_000 })).toEqual([expect.objectContaining({ key: kept })]);
    close();
  });

  it('checkSoon moves a final row only in the due index: it stays in the final index, listed by its new due time', async () => {
    const { ledger, close } = fresh();
    const pending: LedgerKey = { kind: 'kyc', refId: 'user-soon' };
    const final: LedgerKey = { kind: 'kyb', refId: 'biz-final' };
    for (const key of [pending, final]) await ledger.track(key, { nextCheckAt: later() });
    const lock = expectLockOf(await ledger.lock(final, { leaseMs: 5_000 }));
    expect(await ledger.record(lock, seen('COMPLETED'), () => null, nothing)).toBe('changed');
    expect((await ledger.list()).map((row) => row.refId)).toEqual(['user-soon', 'biz-final']); // never due: last
    expect(await ledger.checkSoon(final)).toBe(true);
    expect((await ledger.list()).map((row) => row.refId)).toEqual(['biz-final', 'user-soon']);
    expect(await ledger.stats()).toMatchObject({ pending: 1, final: 1 });
    expect((await ledger.list({ pending: true })).map((row) => row.refId)).toEqual(['user-soon']);
    close();
  });

  it('the read budget is shared by every instance: reservations spaced by intervalMs, a pause holds them all back', async () => {
    const { ledger, other, close } = fresh();
    const minute = 60_000;
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) waits.push(await (i % 2 ? other : ledger).reserveRead({ intervalMs: minute }));
    // Each from the server's clock: slot k is k minutes after the first, less the few ms between the calls.
    waits.forEach((wait, k) => {
      expect(wait).toBeLessThanOrEqual(k * minute);
      expect(wait).toBeGreaterThan(k * minute - 5_000);
    });
    await other.pauseReads(10 * minute);
    expect(await ledger.reserveRead({ intervalMs: minute })).toBeGreaterThan(10 * minute - 5_000);
    close();
  });

  it('an error carries the command name only: no queued write, no Lua, no arguments in its message or in a log line', async () => {
    const { ledger, other, prefix, close } = fresh();
    const key: LedgerKey = { kind: 'kyc', refId: 'user-personal' };
    await ledger.track(key, { nextCheckAt: past() });
    const string = `${prefix}{verikit-test}:a-string`;
    await redis.set(string, 'x');
    const lock = expectLockOf(await ledger.lock(key, { leaseMs: 5_000 }));
    const error = await ledger
      .record(lock, seen('APPROVED'), later, async (_change, tx) => tx.call('HSET', string, 'name', PERSONAL))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ message: expect.stringMatching(/^WRONGTYPE/), command: { name: expect.stringMatching(/^eval(sha)?$/) } });
    expect((error as { command: object }).command).not.toHaveProperty('args');
    const lines: string[] = [];
    pino({}, { write: (line: string) => void lines.push(line) }).error({ err: error }, 'the ledger record failed');
    const logged = lines.join('') + String((error as Error).stack);
    expect(logged).not.toContain(PERSONAL);
    expect(logged).not.toMatch(/redis\.call|KEYS\[1\]|local function|"args"/);
    // Nothing recorded: the row is as it was, and still held by the lock.
    expect(await ledger.get(key)).toMatchObject({ version: 0, status: null });
    expect(await other.lock(key, { leaseMs: 5_000 })).toBe('busy');
    close();
  });

  it('a Redis that is down: every call rejects with RedisTimeoutError (code timeout) after timeoutMs, never hangs', async () => {
    // With no limit on retries, ioredis would hold each call until Redis is back: only timeoutMs answers it.
    const down = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: null, retryStrategy: () => 200 });
    down.on('error', () => {});
    const ledger = createRedisLedger({ redis: down, prefix: `${run}down:`, timeoutMs: 200, logger: false });
    const key: LedgerKey = { kind: 'kyb', refId: 'biz-down' };
    const lock: LedgerLock = {
      key,
      token: 't',
      lockedAt: new Date(),
      entry: {
        ...key,
        status: null,
        final: false,
        fingerprint: null,
        version: 0,
        observedAt: null,
        source: null,
        trackedAt: new Date(),
        nextCheckAt: null,
        failures: 0,
      },
    };
    const calls: Record<string, () => Promise<unknown>> = {
      track: () => ledger.track(key, { nextCheckAt: later() }),
      forget: () => ledger.forget(key),
      get: () => ledger.get(key),
      lock: () => ledger.lock(key, { leaseMs: 1_000 }),
      record: () => ledger.record(lock, seen('APPROVED'), later, async () => {}),
      release: () => ledger.release(lock, { nextCheckAt: later(), failures: 1 }),
      claimDue: () => ledger.claimDue({ limit: 5, leaseMs: 1_000 }),
      reserveRead: () => ledger.reserveRead({ intervalMs: 1_000 }),
      pauseReads: () => ledger.pauseReads(1_000),
      list: () => ledger.list(),
      stats: () => ledger.stats(),
      checkPersistence: () => ledger.checkPersistence(),
    };
    const outcomes = await Promise.all(
      Object.entries(calls).map(([name, call]) =>
        call().then(
          () => [name, 'answered'],
          (error: unknown) => [name, error instanceof RedisTimeoutError ? (error as RedisTimeoutError).code : String(error)],
        ),
      ),
    );
    expect(Object.fromEntries(outcomes)).toEqual(Object.fromEntries(Object.keys(calls).map((name) => [name, 'timeout'])));
    down.disconnect();
  });
});

describe.runIf(serverAvailable && requireRedisServerBinary())('the Redis ledger on a Redis that stops answering mid-record', () => {
  it('the commit of a record is bounded by timeoutMs too; once Redis answers it applies, once (the lock token guards it)', async () => {
    const server = await startDedicatedRedis();
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    try {
      const ledger = createRedisLedger({ redis, timeoutMs: 300, persistence: 'ignore', logger: false });
      const key: LedgerKey = { kind: 'kyb', refId: 'biz-paused' };
      await ledger.track(key, { nextCheckAt: past() });
      const lock = expectLockOf(await ledger.lock(key, { leaseMs: 10_000 }));
      // The row is read before onChange runs; Redis stops answering while it runs (every client paused).
      const recording = ledger.record(lock, seen('APPROVED'), later, async (_change, tx) => {
        tx.call('INCR', '{verikit}:effect');
        await server.admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
      });
      await expect(recording).rejects.toMatchObject({
        name: 'RedisTimeoutError',
        code: 'timeout',
        message: expect.stringMatching(/a ledger record/),
      });
      // The call went on: the server applies it when the pause ends; a retry with the same lock is then stale.
      await expect.poll(() => redis.get('{verikit}:effect'), { timeout: 10_000 }).toBe('1');
      expect(await ledger.get(key)).toMatchObject({ version: 1, status: 'APPROVED' });
      expect(await ledger.record(lock, seen('APPROVED'), later, async (_change, tx) => tx.call('INCR', '{verikit}:effect'))).toBe('stale');
      expect(await redis.get('{verikit}:effect')).toBe('1');
    } finally {
      redis.disconnect();
      await server.stop();
    }
  });
});

const expectLockOf = (lock: LedgerLock | 'busy' | 'untracked'): LedgerLock => {
  if (typeof lock === 'string') throw new Error(`expected a lock, got ${lock}`);
  return lock;
};
const byKey = (a: LedgerKey, b: LedgerKey) => (a.kind + a.refId < b.kind + b.refId ? -1 : a.kind + a.refId > b.kind + b.refId ? 1 : 0);
