import { InvalidArgumentError, VerikitError } from '../errors.js';
import type { LeaseOutcome } from '../store/store.js';
import type { EventKind } from '../webhook/identify.js';

/** Longest refId the ledger keeps (the service sends it back in URLs and events). */
export const MAX_REF_ID_LENGTH = 256;

/** Which verification a ledger row is about: the product and your refId. */
export interface LedgerKey {
  kind: EventKind;
  refId: string;
}

/**
 * What led to an observation: a webhook about the verification, or the reconciler's own check
 * (a change it finds is one whose webhook never arrived). A row tracked at creation has no
 * observation (and `source: null`) until the first of these.
 */
export type ObservationSource = 'webhook' | 'reconcile';

/** One verification as the ledger knows it. */
export interface LedgerEntry extends LedgerKey {
  /** Last observed status; `null` until the first observation. */
  status: string | null;
  /** Whether that status is final (KYB `COMPLETED`/`REJECTED`; KYC by the client's classifier). */
  final: boolean;
  /** Fingerprint of the last observed result: a change is a new fingerprint. */
  fingerprint: string | null;
  /** Observed changes so far (0 until the first); each `onChange` gets the next. */
  version: number;
  /** When the fetch behind the last recorded observation started (the engine's clock), or `null`. */
  observedAt: Date | null;
  /** What led to the last observation, or `null` before the first. */
  source: ObservationSource | null;
  /** When the ledger first knew of it (tracked before its create call, or by `track`). */
  trackedAt: Date;
  /** When the reconciler checks it next; `null`: never again (final and past the reopen window). */
  nextCheckAt: Date | null;
  /** Failed checks in a row (fetch errors), for backoff; 0 after a good one. */
  failures: number;
}

/** What a fetch of the authoritative result reads as. */
export interface Observation {
  status: string;
  final: boolean;
  fingerprint: string;
}

/** A change about to be recorded: what `onChange` is told (besides the typed result and `sql`). */
export interface LedgerChange extends LedgerKey {
  /** Status before this change (`null` for the first observation). */
  previous: string | null;
  /** Status now. */
  current: string;
  /** Whether `current` is final. */
  final: boolean;
  /** This change's version: the row's version after it, strictly increasing per refId from 1. */
  version: number;
  /** What observed it. */
  source: ObservationSource;
}

/**
 * Whether a change stands for a webhook that never arrived: one the reconciler found, unless it is
 * the first sight of a verification that has not moved since it was created (no webhook is sent for that).
 */
export function missedWebhook(change: Pick<LedgerChange, 'kind' | 'source' | 'version' | 'final' | 'current'>): boolean {
  if (change.source !== 'reconcile') return false;
  const firstSight = change.version === 1 && !change.final && (change.kind === 'kyc' || change.current === 'NOT_STARTED');
  return !firstSight;
}

/** A refId's lock, held while its result is fetched; hand it back to `record` or `release`. */
export interface LedgerLock {
  readonly key: LedgerKey;
  /** Unique to this lock: a call with an expired lock another took is refused (`stale`). */
  readonly token: string;
  /** The row as it was when the lock was taken. */
  readonly entry: LedgerEntry;
  /** When the lock was taken, on the engine's clock: the fetch that follows starts after it. */
  readonly lockedAt: Date;
}

/** What `record` did: a change recorded (and its work committed), the same result seen again, or nothing (`stale`: the lock was lost). */
export type RecordOutcome = 'changed' | 'unchanged' | 'stale';

/** What `track` found: a new row, or one already there (tracking is idempotent). */
export type TrackOutcome = 'tracked' | 'already-tracked';

/** Pending verifications of one kind: how many, and since when the oldest has waited for a final status. */
export interface LedgerPendingOfKind {
  /** Rows of this kind not final yet. */
  pending: number;
  /** When the oldest of them was tracked (engine clock), or `null` when none is pending. */
  oldestTrackedAt: Date | null;
}

/** Counts for dashboards and the "webhooks are silent" warning. */
export interface LedgerStats {
  /** Rows not final yet. */
  pending: number;
  /** `pending`, by kind, with the oldest of each. */
  pendingByKind: Record<EventKind, LedgerPendingOfKind>;
  /** Rows whose last status is final. */
  final: number;
  /** When a webhook last led to an observation (changed or not), or `null`. */
  lastWebhookAt: Date | null;
}

/** Options of {@link LedgerEngine.list}. */
export interface LedgerListOptions {
  /** Only rows not final yet. */
  pending?: boolean;
  kind?: EventKind;
  /** At most this many (default 100). */
  limit?: number;
}

/**
 * Where verikit keeps its verification ledger: a row per `(kind, refId)`, a lock per row for the
 * fetch that observes it, and the read budget shared by every instance. Implementations:
 * `createMemoryLedger` (one process), `createPostgresLedger` (`@verikit/postgres`),
 * `createRedisLedger` (`@verikit/redis`); each passes `ledgerContract` from `@verikit/testing`.
 * Times are the engine's clock. `Tx` is what `onChange` gets as `ctx.sql`.
 */
export interface LedgerEngine<Tx = unknown> {
  /** Adds a row (due at `nextCheckAt`) unless there is one; an existing row is left as it is. */
  track(key: LedgerKey, options: { nextCheckAt: Date }): Promise<TrackOutcome>;
  /** Removes a row that was never observed (its create call was refused); `false` when absent or observed. */
  forget(key: LedgerKey): Promise<boolean>;
  /** The row, or `undefined`. */
  get(key: LedgerKey): Promise<LedgerEntry | undefined>;
  /** Takes the row's lock for `leaseMs`: the lock, `busy` while another live lock holds it, `untracked` when there is no row. */
  lock(key: LedgerKey, options: { leaseMs: number }): Promise<LedgerLock | 'busy' | 'untracked'>;
  /**
   * With the lock still held: compares `observation` with the row. Unchanged: stores the
   * observation's time and source and `nextCheckAt`, runs nothing. Changed: bumps the version, stores
   * it, and runs `work(change, tx)` in the same transaction (or guarded script) that records it; a
   * throw from `work` records nothing. Either way the lock is released. `stale` (nothing changed,
   * nothing run) when the lock is no longer the caller's. `nextCheckAt` may depend on the outcome.
   */
  record(
    lock: LedgerLock,
    observation: Observation & { source: ObservationSource },
    next: (changed: boolean) => Date | null,
    work: (change: LedgerChange, tx: Tx) => Promise<void>,
  ): Promise<RecordOutcome>;
  /** Releases the lock without an observation (the fetch failed): due again at `nextCheckAt`, `failures` stored. */
  release(lock: LedgerLock, options: { nextCheckAt: Date | null; failures: number }): Promise<LeaseOutcome>;
  /** Locks up to `limit` rows due now (oldest due first) whose lock is free, for `leaseMs` each. */
  claimDue(options: { limit: number; leaseMs: number }): Promise<LedgerLock[]>;
  /**
   * Reserves the next read of the budget shared by every instance: reads are spaced at least
   * `intervalMs` apart; answers how long to wait (ms, from now) before making it.
   */
  reserveRead(options: { intervalMs: number }): Promise<number>;
  /** Holds every read back for `ms` from now (the service answered 429). */
  pauseReads(ms: number): Promise<void>;
  /** Rows, soonest due first. */
  list(options?: LedgerListOptions): Promise<LedgerEntry[]>;
  /** Counts. */
  stats(): Promise<LedgerStats>;
  /** Closes what the engine opened itself. */
  close?(): Promise<void>;
}

/**
 * What an operator does with a ledger beyond observing: erase a verification's row, or have the
 * reconcilers check one at once. The PostgreSQL, Redis and memory ledgers implement it.
 */
export interface LedgerAdmin {
  /** Removes the row (status, fingerprint, times): what the ledger knew of the verification; false when there was none. */
  erase(key: LedgerKey): Promise<boolean>;
  /**
   * Makes the row due now, so a running reconciler checks it next, within the read budget and with
   * your `onChange`; false when the ledger does not track it.
   */
  checkSoon(key: LedgerKey): Promise<boolean>;
}

/** The ledger's answer to a refId it does not track (observe or check one that was never tracked). */
export class UntrackedVerificationError extends VerikitError {
  override name = 'UntrackedVerificationError';
  constructor(key: LedgerKey) {
    super(
      'untracked',
      `${key.kind} ${JSON.stringify(key.refId)} is not in the ledger: track it first (ledger.track) or create it with a client that has the ledger`,
    );
  }
}

/** Checks a ledger key: kind `kyb` or `kyc`, refId a non-empty string of at most 256 characters. */
export function checkLedgerKey(key: unknown): LedgerKey {
  if (key === null || typeof key !== 'object') throw new InvalidArgumentError('ledger key must be an object { kind, refId }');
  const { kind, refId } = key as Record<string, unknown>;
  if (kind !== 'kyb' && kind !== 'kyc') throw new InvalidArgumentError(`ledger kind must be "kyb" or "kyc", not ${JSON.stringify(kind)}`);
  if (typeof refId !== 'string' || refId.length === 0) throw new InvalidArgumentError('ledger refId must be a non-empty string');
  if (refId.length > MAX_REF_ID_LENGTH) throw new InvalidArgumentError(`ledger refId is longer than ${MAX_REF_ID_LENGTH} characters`);
  // A lone surrogate is no text a database or Redis can keep: each turns it into U+FFFD, so two refIds would share a row.
  if (/\p{Cs}/u.test(refId)) throw new InvalidArgumentError('ledger refId must be well-formed Unicode text (it holds a lone surrogate)');
  return { kind, refId };
}
