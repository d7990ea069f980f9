import { positiveInteger, positiveNumber } from '../util/option-checks.js';
import {
  type ClaimOptions,
  type ClaimResult,
  DEFAULT_RETENTION_MS,
  type IdempotencyStore,
  type Lease,
  type LeaseOutcome,
  StoreFullError,
} from './store.js';

/** Options of {@link MemoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /** How long a completed id is remembered (default 7 days). */
  retentionMs?: number;
  /**
   * Most ids held at once (default 100 000). Nothing inside its lifetime is ever dropped: at the
   * bound, new claims are refused (the route answers 503) until ids expire. At the default 7-day
   * retention that is about 14 000 deliveries a day; size it to your volume.
   */
  maxEntries?: number;
  /**
   * Monotonic clock in ms (default `performance.now`), for tests. It must never step back, which
   * is why it is not the wall clock.
   */
  clock?: () => number;
}

/** One remembered id; it is also the lease its owner holds, so ownership here is identity. */
class Entry implements Lease {
  done = false;

  constructor(
    readonly id: string,
    serial: number,
    public expiresAt: number,
  ) {
    this.#serial = serial;
  }

  readonly #serial: number;

  /** Made when read (callers log it; this store never compares it), so a claim allocates no string. */
  get owner(): string {
    return `memory:${this.#serial}`;
  }
}

const IN_PROGRESS: ClaimResult = Object.freeze({ status: 'in-progress' });
const DONE: ClaimResult = Object.freeze({ status: 'done' });
// Sweeps walk the Map (and the holes its deletions leave), so each kind runs at most this often.
const SWEEP_INTERVAL_MS = 1_000;

/**
 * An in-process idempotency store: atomic by construction (one event loop), bounded, with expiry on
 * a monotonic clock. Right for one server instance and for tests; several instances need a shared
 * store (`@verikit/postgres`, `@verikit/redis`).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #retentionMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  #owners = 0;
  #nextSweep = Number.NEGATIVE_INFINITY;
  #nextFullSweep = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    // Finite: an id kept for good would fill the store to maxEntries and refuse every claim after.
    this.#retentionMs = positiveNumber('retentionMs', options.retentionMs, DEFAULT_RETENTION_MS, 'milliseconds');
    this.#maxEntries = positiveInteger('maxEntries', options.maxEntries, 100_000);
    this.#now = options.clock ?? (() => performance.now());
  }

  /** Number of ids currently remembered (leased or done, expired ones not yet swept included). */
  get size(): number {
    return this.#entries.size;
  }

  async claim(id: string, options: ClaimOptions): Promise<ClaimResult> {
    const now = this.#now();
    if (now >= this.#nextSweep) {
      this.#nextSweep = now + SWEEP_INTERVAL_MS;
      this.#sweep(now, false);
    }
    const entry = this.#entries.get(id);
    if (entry !== undefined && entry.expiresAt > now) return entry.done ? DONE : IN_PROGRESS;
    if (entry === undefined && this.#entries.size >= this.#maxEntries) {
      if (now >= this.#nextFullSweep) {
        this.#nextFullSweep = now + SWEEP_INTERVAL_MS;
        this.#sweep(now, true);
      }
      // Never a live lease or an id handled within the retention: refuse rather than forget.
      if (this.#entries.size >= this.#maxEntries) throw new StoreFullError(this.#maxEntries);
    }
    const lease = new Entry(id, ++this.#owners, now + options.leaseMs);
    // A reused (expired) id moves to the end, so the map stays in roughly expiry order for sweepExpired.
    if (entry !== undefined) this.#entries.delete(id);
    this.#entries.set(id, lease);
    return { status: 'claimed', lease };
  }

  async complete(lease: Lease): Promise<LeaseOutcome> {
    const entry = this.#entries.get(lease.id);
    const expiresAt = this.#now() + this.#retentionMs;
    if (entry === undefined) {
      // The lease ran out and was swept, and nobody claimed the id since: the work is done, so say so.
      const done = new Entry(lease.id, ++this.#owners, expiresAt);
      done.done = true;
      this.#entries.set(lease.id, done);
      return 'ok';
    }
    if (entry !== lease) return 'stale';
    entry.done = true;
    entry.expiresAt = expiresAt;
    return 'ok';
  }

  async release(lease: Lease): Promise<LeaseOutcome> {
    const entry = this.#entries.get(lease.id);
    if (entry !== lease || entry.done) return 'stale';
    this.#entries.delete(lease.id);
    return 'ok';
  }

  async extend(lease: Lease, options: ClaimOptions): Promise<LeaseOutcome> {
    const entry = this.#entries.get(lease.id);
    if (entry !== lease || entry.done) return 'stale';
    entry.expiresAt = this.#now() + options.leaseMs;
    return 'ok';
  }

  /**
   * Drops expired ids: from the front (the oldest claims) up to the first live one, or, at the bound,
   * through the whole map. A live lease or a handled id inside the retention is never dropped.
   */
  #sweep(now: number, wholeMap: boolean): void {
    for (const [id, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(id);
      else if (!wholeMap) return;
    }
  }
}
