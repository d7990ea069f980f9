import type { LeaseOutcome } from '../store/store.js';
import {
  checkLedgerKey,
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
} from './ledger.js';

/** `ctx.sql` of the memory ledger: `defer(fn)` runs `fn` only once the change is recorded, so an effect and its change happen together. */
export interface MemoryLedgerTransaction {
  /** Runs `fn` when the change commits; never when `onChange` throws. */
  defer(fn: () => void): void;
}

/** Options of {@link createMemoryLedger}. */
export interface MemoryLedgerOptions {
  /** The clock (default `Date.now`), for tests. */
  now?: () => number;
}

interface Row extends LedgerEntry {
  lock: { token: string; until: number } | null;
}

const keyOf = (key: LedgerKey): string => `${key.kind}\u0000${key.refId}`;
const copy = ({ lock: _lock, ...entry }: Row): LedgerEntry => ({ ...entry });

/**
 * A ledger in this process's memory: for tests and single-process tools. Gone on restart, so
 * nothing it records survives one; use `@verikit/postgres` or `@verikit/redis` in production.
 */
export function createMemoryLedger(options: MemoryLedgerOptions = {}): LedgerEngine<MemoryLedgerTransaction> & LedgerAdmin {
  const now = options.now ?? Date.now;
  const rows = new Map<string, Row>();
  let nextRead = 0;
  let lastWebhookAt: number | null = null;

  const lockRow = (row: Row, leaseMs: number): LedgerLock => {
    const at = now();
    const token = crypto.randomUUID();
    row.lock = { token, until: at + leaseMs };
    return { key: { kind: row.kind, refId: row.refId }, token, entry: copy(row), lockedAt: new Date(at) };
  };
  const held = (lock: LedgerLock): Row | undefined => {
    const row = rows.get(keyOf(lock.key));
    return row?.lock?.token === lock.token ? row : undefined;
  };

  return {
    async track(key: LedgerKey, { nextCheckAt }: { nextCheckAt: Date }): Promise<TrackOutcome> {
      const { kind, refId } = checkLedgerKey(key);
      if (rows.has(keyOf(key))) return 'already-tracked';
      rows.set(keyOf(key), {
        kind,
        refId,
        status: null,
        final: false,
        fingerprint: null,
        version: 0,
        observedAt: null,
        source: null,
        trackedAt: new Date(now()),
        nextCheckAt,
        failures: 0,
        lock: null,
      });
      return 'tracked';
    },
    async forget(key: LedgerKey): Promise<boolean> {
      const row = rows.get(keyOf(checkLedgerKey(key)));
      if (row === undefined || row.version > 0) return false;
      return rows.delete(keyOf(key));
    },
    async get(key: LedgerKey): Promise<LedgerEntry | undefined> {
      const row = rows.get(keyOf(checkLedgerKey(key)));
      return row && copy(row);
    },
    async lock(key: LedgerKey, { leaseMs }: { leaseMs: number }): Promise<LedgerLock | 'busy' | 'untracked'> {
      const row = rows.get(keyOf(checkLedgerKey(key)));
      if (row === undefined) return 'untracked';
      if (row.lock !== null && row.lock.until > now()) return 'busy';
      return lockRow(row, leaseMs);
    },
    async record(
      lock: LedgerLock,
      observation: Observation & { source: ObservationSource },
      next: (changed: boolean) => Date | null,
      work: (change: LedgerChange, tx: MemoryLedgerTransaction) => Promise<void>,
    ): Promise<RecordOutcome> {
      const row = held(lock);
      if (row === undefined) return 'stale';
      const changed = row.fingerprint !== observation.fingerprint;
      if (changed) {
        const deferred: Array<() => void> = [];
        const change: LedgerChange = {
          kind: row.kind,
          refId: row.refId,
          previous: row.status,
          current: observation.status,
          final: observation.final,
          version: row.version + 1,
          source: observation.source,
        };
        await work(change, { defer: (fn) => deferred.push(fn) });
        // The lock may have run out while `work` ran; a real engine's commit would then be refused.
        if (held(lock) === undefined) return 'stale';
        row.version = change.version;
        row.status = observation.status;
        row.final = observation.final;
        row.fingerprint = observation.fingerprint;
        for (const fn of deferred) fn();
      }
      row.observedAt = lock.lockedAt;
      row.source = observation.source;
      row.failures = 0;
      row.nextCheckAt = next(changed);
      row.lock = null;
      if (observation.source === 'webhook') lastWebhookAt = now();
      return changed ? 'changed' : 'unchanged';
    },
    async release(lock: LedgerLock, { nextCheckAt, failures }: { nextCheckAt: Date | null; failures: number }): Promise<LeaseOutcome> {
      const row = held(lock);
      if (row === undefined) return 'stale';
      row.nextCheckAt = nextCheckAt;
      row.failures = failures;
      row.lock = null;
      return 'ok';
    },
    async claimDue({ limit, leaseMs }: { limit: number; leaseMs: number }): Promise<LedgerLock[]> {
      const at = now();
      const due = [...rows.values()]
        .filter((row) => row.nextCheckAt !== null && row.nextCheckAt.getTime() <= at && (row.lock === null || row.lock.until <= at))
        .sort((a, b) => (a.nextCheckAt as Date).getTime() - (b.nextCheckAt as Date).getTime())
        .slice(0, limit);
      return due.map((row) => lockRow(row, leaseMs));
    },
    async reserveRead({ intervalMs }: { intervalMs: number }): Promise<number> {
      const at = now();
      const slot = Math.max(at, nextRead);
      nextRead = slot + intervalMs;
      return slot - at;
    },
    async pauseReads(ms: number): Promise<void> {
      nextRead = Math.max(nextRead, now() + ms);
    },
    async list(options: LedgerListOptions = {}): Promise<LedgerEntry[]> {
      const never = Number.POSITIVE_INFINITY;
      return [...rows.values()]
        .filter((row) => (!options.pending || !row.final) && (options.kind === undefined || row.kind === options.kind))
        .sort((a, b) => (a.nextCheckAt?.getTime() ?? never) - (b.nextCheckAt?.getTime() ?? never))
        .slice(0, options.limit ?? 100)
        .map(copy);
    },
    async stats(): Promise<LedgerStats> {
      const pendingByKind: LedgerStats['pendingByKind'] = {
        kyb: { pending: 0, oldestTrackedAt: null },
        kyc: { pending: 0, oldestTrackedAt: null },
      };
      for (const row of rows.values()) {
        if (row.final) continue;
        const ofKind = pendingByKind[row.kind];
        ofKind.pending++;
        if (ofKind.oldestTrackedAt === null || row.trackedAt < ofKind.oldestTrackedAt) ofKind.oldestTrackedAt = row.trackedAt;
      }
      const pending = pendingByKind.kyb.pending + pendingByKind.kyc.pending;
      return { pending, pendingByKind, final: rows.size - pending, lastWebhookAt: lastWebhookAt === null ? null : new Date(lastWebhookAt) };
    },
    async erase(key: LedgerKey): Promise<boolean> {
      return rows.delete(keyOf(checkLedgerKey(key)));
    },
    async checkSoon(key: LedgerKey): Promise<boolean> {
      const row = rows.get(keyOf(checkLedgerKey(key)));
      if (row === undefined) return false;
      row.nextCheckAt = new Date(now());
      return true;
    },
  };
}
