import {
  checkLedgerKey,
  InvalidArgumentError,
  type LeaseOutcome,
  type LedgerAdmin,
  type LedgerChange,
  type LedgerEngine,
  type LedgerEntry,
  type LedgerKey,
  type LedgerListOptions,
  type LedgerLock,
  type LedgerStats,
  type Observation,
  type ObservationSource,
  type RecordOutcome,
  type TrackOutcome,
} from '@verikit/core';
import { isCluster } from './cluster.js';
import { hashTagOf, keyOfMember, ledgerBase, ledgerKeys, memberOf } from './ledger-keys.js';
import {
  CHECK_SOON,
  CLAIM_DUE,
  ERASE,
  FORGET,
  LIST,
  LOCK,
  PAUSE_READS,
  RECORD,
  RELEASE,
  RESERVE_READ,
  STATS,
  TRACK,
} from './ledger-scripts.js';
import { checkPrefix, type RedisBaseOptions, redisTimeouts, resolveBaseOptions } from './options.js';
import type { PersistenceReport } from './persistence.js';
import { redactingErrors } from './redact.js';
import { defineScript } from './scripts.js';
import { crossSlotError, RecordedTransaction, type RedisTransaction } from './transaction.js';

/** Options of {@link createRedisLedger}. */
export interface RedisLedgerOptions extends Omit<RedisBaseOptions, 'retentionMs'> {
  /**
   * Prefix of every key the ledger writes (default `verikit:ledger:`). All of them share one Redis
   * Cluster hash tag: the prefix's own `{...}` when it has one, else `{<its first segment>}` added
   * after it (`verikit:ledger:{verikit}:row:kyb:biz-42`). On a Cluster, the keys `onChange` writes
   * through `ctx.sql` must hold the same tag (`{verikit}` by default, as the inbox's).
   */
  prefix?: string;
}

/** A {@link LedgerEngine} on Redis, shared by every instance, with the operator's {@link LedgerAdmin}. `ctx.sql` is a {@link RedisTransaction}. */
export interface RedisLedger extends LedgerEngine<RedisTransaction>, LedgerAdmin {
  /** Reads the server's persistence settings now: logs or refuses per the `persistence` option. Call it at startup. */
  checkPersistence(): Promise<PersistenceReport>;
}

/** Busy rows one claim moves aside at most besides the ones it locks, so a claim's script stays short. */
const MAX_SKIPPED = 1_000;
const SOURCES: readonly ObservationSource[] = ['webhook', 'reconcile'];

const positiveMs = (value: number, what: string): string => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(`${what} must be a positive number of ms`);
  }
  return String(Math.ceil(value));
};
const wholeMs = (value: number, what: string): string => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new InvalidArgumentError(`${what} must be 0 or more ms`);
  return String(Math.ceil(value));
};
const count = (value: number, what: string): number => {
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError(`${what} must be a whole number from 1`);
  return value;
};
/** A time as the scripts keep it: ms, or `''` for never. */
const msOf = (date: Date | null, what: string): string => {
  if (date === null) return '';
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new InvalidArgumentError(`${what} must be a valid Date or null`);
  return String(date.getTime());
};
const checkObservation = (observation: Observation & { source: ObservationSource }): void => {
  const { status, final, fingerprint, source } = observation ?? ({} as typeof observation);
  if (typeof status !== 'string' || typeof final !== 'boolean' || typeof fingerprint !== 'string' || !SOURCES.includes(source)) {
    throw new InvalidArgumentError(
      'an observation needs status and fingerprint (strings), final (boolean) and source ("webhook" or "reconcile")',
    );
  }
};

/** A hash as Redis answers it (`[field, value, ...]`) as an object. */
const fieldsOf = (flat: unknown): Record<string, string> => {
  const fields: Record<string, string> = {};
  const list = flat as string[];
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i] as string] = list[i + 1] as string;
  return fields;
};
const dateOf = (ms: string | undefined): Date | null => (ms === undefined || ms === '' ? null : new Date(Number(ms)));

function entryOf({ kind, refId }: LedgerKey, fields: Record<string, string>): LedgerEntry {
  return {
    kind,
    refId,
    status: fields.status ?? null,
    final: fields.final === '1',
    fingerprint: fields.fingerprint ?? null,
    version: Number(fields.version ?? 0),
    observedAt: dateOf(fields.observed_at),
    source: (fields.source as ObservationSource | undefined) ?? null,
    trackedAt: new Date(Number(fields.tracked_at)),
    nextCheckAt: dateOf(fields.next_check_at),
    failures: Number(fields.failures ?? 0),
  };
}

/**
 * The verification ledger on Redis: a hash per `(kind, refId)`, a sorted set of the rows due, and
 * the read budget shared by every instance. Every change is one atomic Lua script on the server's
 * clock (`TIME`): a lock, a claim, and a record that applies the row's change together with the
 * writes `onChange` queued on `ctx.sql`, only while the caller still holds the lock.
 *
 * All keys share one hash tag, so they live in one Redis Cluster slot on any layout: the price of
 * updating a row, the due index and the budget atomically. The ledger's load is small (a few
 * commands per verification check, the reads bounded by the budget), well within one node.
 * @example
 * const ledger = createRedisLedger({ redis: new Redis(process.env.REDIS_URL) });
 * await ledger.checkPersistence(); // warns when a Redis restart could lose rows
 */
export function createRedisLedger(options: RedisLedgerOptions): RedisLedger {
  const { redis, persistence, timeoutMs } = resolveBaseOptions(options, 'createRedisLedger');
  const keys = ledgerKeys(ledgerBase(checkPrefix(options.prefix ?? 'verikit:ledger:', 'prefix')));
  const { base } = keys;
  // On a Cluster, ctx.sql writes outside the ledger's slot are refused before anything is applied.
  const hashTag = isCluster(redis) ? `{${hashTagOf(base)}}` : undefined;
  const scripts = {
    track: defineScript(redis, TRACK, 1),
    forget: defineScript(redis, FORGET, 1),
    erase: defineScript(redis, ERASE, 1),
    checkSoon: defineScript(redis, CHECK_SOON, 1),
    lock: defineScript(redis, LOCK, 1),
    claimDue: defineScript(redis, CLAIM_DUE, 1),
    record: defineScript(redis, RECORD, 1),
    release: defineScript(redis, RELEASE, 1),
    reserveRead: defineScript(redis, RESERVE_READ, 1),
    pauseReads: defineScript(redis, PAUSE_READS, 1),
    list: defineScript(redis, LIST, keys.indexes.length),
    stats: defineScript(redis, STATS, 1 + keys.indexes.length),
  };
  const bounded = redisTimeouts(timeoutMs);

  const lockOf = (key: LedgerKey, token: string, at: unknown, fields: unknown): LedgerLock => ({
    key,
    token,
    entry: entryOf(key, fieldsOf(fields)),
    lockedAt: new Date(Number(at)),
  });

  return redactingErrors<RedisLedger>({
    checkPersistence: () => bounded(persistence.check(), 'a persistence check'),

    async track(key: LedgerKey, { nextCheckAt }: { nextCheckAt: Date }): Promise<TrackOutcome> {
      const member = memberOf(checkLedgerKey(key));
      if (!(nextCheckAt instanceof Date)) throw new InvalidArgumentError('track needs nextCheckAt, a Date');
      const due = msOf(nextCheckAt, 'nextCheckAt');
      const reply = await bounded(
        persistence.before(() => scripts.track([keys.row(member)], [base, member, due])),
        'a ledger track',
      );
      return reply === 1 ? 'tracked' : 'already-tracked';
    },

    async forget(key: LedgerKey): Promise<boolean> {
      const member = memberOf(checkLedgerKey(key));
      return (await bounded(scripts.forget([keys.row(member)], [base, member]), 'a ledger forget')) === 1;
    },

    async erase(key: LedgerKey): Promise<boolean> {
      const member = memberOf(checkLedgerKey(key));
      return (await bounded(scripts.erase([keys.row(member)], [base, member]), 'a ledger erase')) === 1;
    },

    async checkSoon(key: LedgerKey): Promise<boolean> {
      const member = memberOf(checkLedgerKey(key));
      return (await bounded(scripts.checkSoon([keys.row(member)], [base, member]), 'a ledger check-soon')) === 1;
    },

    async get(key: LedgerKey): Promise<LedgerEntry | undefined> {
      const checked = checkLedgerKey(key);
      const fields = await bounded(redis.hgetall(keys.row(memberOf(checked))), 'a ledger read');
      return Object.keys(fields).length === 0 ? undefined : entryOf(checked, fields);
    },

    async lock(key: LedgerKey, { leaseMs }: { leaseMs: number }): Promise<LedgerLock | 'busy' | 'untracked'> {
      const checked = checkLedgerKey(key);
      const lease = positiveMs(leaseMs, 'leaseMs');
      const token = crypto.randomUUID();
      const reply = await bounded(
        persistence.before(() => scripts.lock([keys.row(memberOf(checked))], [token, lease])),
        'a ledger lock',
      );
      if (reply === 'busy' || reply === 'untracked') return reply;
      const [at, fields] = reply as [number, string[]];
      return lockOf(checked, token, at, fields);
    },

    async record(
      held: LedgerLock,
      observation: Observation & { source: ObservationSource },
      next: (changed: boolean) => Date | null,
      work: (change: LedgerChange, tx: RedisTransaction) => Promise<void>,
    ): Promise<RecordOutcome> {
      const key = checkLedgerKey(held?.key);
      checkObservation(observation);
      const member = memberOf(key);
      const row = keys.row(member);
      const [holder, version, previous, fingerprint] = await bounded(
        redis.hmget(row, 'lock_token', 'version', 'status', 'fingerprint'),
        'a ledger read',
      );
      if (holder !== held.token) return 'stale';
      const changed = fingerprint !== observation.fingerprint;
      const tx = new RecordedTransaction();
      const change: LedgerChange = {
        ...key,
        previous: previous ?? null,
        current: observation.status,
        final: observation.final,
        version: Number(version) + 1,
        source: observation.source,
      };
      // A throw leaves the row, its lock and Redis as they were.
      if (changed) await work(change, tx);
      const nextCheckAt = msOf(next(changed), 'nextCheckAt');
      const args = [
        base,
        member,
        held.token,
        changed ? '1' : '0',
        String(change.version),
        observation.status,
        observation.final ? '1' : '0',
        observation.fingerprint,
        String(held.lockedAt.getTime()),
        observation.source,
        nextCheckAt,
        JSON.stringify(tx.commands),
        hashTag === undefined ? '0' : '1',
      ];
      const reply = await bounded(scripts.record([row], args), 'a ledger record');
      // On a Cluster a write outside the ledger's slot is refused before anything is applied, not after the writes before it.
      const refused = hashTag === undefined ? undefined : crossSlotError(reply, tx, hashTag);
      if (refused !== undefined) throw refused;
      return reply as RecordOutcome;
    },

    async release(held: LedgerLock, { nextCheckAt, failures }: { nextCheckAt: Date | null; failures: number }): Promise<LeaseOutcome> {
      const member = memberOf(checkLedgerKey(held?.key));
      if (!Number.isInteger(failures) || failures < 0) throw new InvalidArgumentError('failures must be a whole number from 0');
      const args = [base, member, held.token, msOf(nextCheckAt, 'nextCheckAt'), String(failures)];
      return (await bounded(scripts.release([keys.row(member)], args), 'a ledger release')) === 1 ? 'ok' : 'stale';
    },

    async claimDue({ limit, leaseMs }: { limit: number; leaseMs: number }): Promise<LedgerLock[]> {
      const args = [base, String(count(limit, 'limit')), positiveMs(leaseMs, 'leaseMs'), crypto.randomUUID(), String(limit + MAX_SKIPPED)];
      const [at, claimed] = (await bounded(
        persistence.before(() => scripts.claimDue([keys.due], args)),
        'a ledger claim',
      )) as [number, Array<[string, string, string[]]>];
      return claimed.map(([member, token, fields]) => lockOf(keyOfMember(member), token, at, fields));
    },

    async reserveRead({ intervalMs }: { intervalMs: number }): Promise<number> {
      return Number(await bounded(scripts.reserveRead([keys.state], [wholeMs(intervalMs, 'intervalMs')]), 'a read reservation'));
    },

    async pauseReads(ms: number): Promise<void> {
      await bounded(scripts.pauseReads([keys.state], [wholeMs(ms, 'ms')]), 'a read pause');
    },

    async list({ pending = false, kind, limit = 100 }: LedgerListOptions = {}): Promise<LedgerEntry[]> {
      if (kind !== undefined && kind !== 'kyb' && kind !== 'kyc') throw new InvalidArgumentError('kind must be "kyb", "kyc" or left out');
      const args = [base, String(count(limit, 'limit')), pending ? '1' : '0', kind ?? ''];
      const rows = (await bounded(scripts.list(keys.indexes, args), 'a ledger list')) as Array<[string, string[]]>;
      return rows.map(([member, fields]) => entryOf(keyOfMember(member), fieldsOf(fields)));
    },

    async stats(): Promise<LedgerStats> {
      const [kybPending, kybOldest, kycPending, kycOldest, final, lastWebhookAt] = (await bounded(
        scripts.stats([keys.state, ...keys.indexes], [base]),
        'ledger stats',
      )) as [number, number, number, number, number, string];
      const oldest = (at: number) => (at < 0 ? null : new Date(at));
      return {
        pending: kybPending + kycPending,
        pendingByKind: {
          kyb: { pending: kybPending, oldestTrackedAt: oldest(kybOldest) },
          kyc: { pending: kycPending, oldestTrackedAt: oldest(kycOldest) },
        },
        final,
        lastWebhookAt: dateOf(lastWebhookAt),
      };
    },
  });
}
