import { ConfigurationError } from '../errors.js';
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
    private readonly serial: number,
    public expiresAt: number,
  ) {}

  /** Made when read (callers log it; this store never compares it), so a claim allocates no string. */
  get owner(): string {
    return `memory:${this.serial}`;
  }
}

const IN_PROGRESS: ClaimResult = Object.freeze({ status: 'in-progress' });
const DONE: ClaimResult = Object.freeze({ status: 'done' });
// A full sweep at the bound walks every id; while still full, it is not repeated more often than this.
const FULL_SWEEP_INTERVAL_MS = 1_000;
const SWEEP_INTERVAL_MS = 1_000;

/**
 * An in-process idempotency store: atomic by construction (one event loop), bounded, with expiry on
 * a monotonic clock. Right for one server instance and for tests; several instances need a shared
 * store (`@verikit/postgres`, `@verikit/redis`).
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private owners = 0;
  private lastFullSweep = Number.NEGATIVE_INFINITY;
  private nextSweep = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.now = options.clock ?? (() => performance.now());
    if (!(this.retentionMs > 0)) throw new ConfigurationError('retentionMs', 'retentionMs must be positive');
    if (!(this.maxEntries >= 1) || !Number.isInteger(this.maxEntries))
      throw new ConfigurationError('maxEntries', 'maxEntries must be a positive integer');
  }

  /** Number of ids currently remembered (leased or done, expired ones not yet swept included). */
  get size(): number {
    return this.entries.size;
  }

  async claim(id: string, options: ClaimOptions): Promise<ClaimResult> {
    const now = this.now();
    if (now >= this.nextSweep) this.sweepExpired(now);
    const entry = this.entries.get(id);
    if (entry !== undefined && entry.expiresAt > now) return entry.done ? DONE : IN_PROGRESS;
    if (entry === undefined && this.entries.size >= this.maxEntries && !this.sweepAll(now)) throw new StoreFullError(this.maxEntries);
    const lease = new Entry(id, ++this.owners, now + options.leaseMs);
    // A reused (expired) id moves to the end, so the map stays in roughly expiry order for sweepExpired.
    if (entry !== undefined) this.entries.delete(id);
    this.entries.set(id, lease);
    return { status: 'claimed', lease };
  }

  async complete(lease: Lease): Promise<LeaseOutcome> {
    const entry = this.entries.get(lease.id);
    const expiresAt = this.now() + this.retentionMs;
    if (entry === undefined) {
      // The lease ran out and was swept, and nobody claimed the id since: the work is done, so say so.
      const done = new Entry(lease.id, ++this.owners, expiresAt);
      done.done = true;
      this.entries.set(lease.id, done);
      return 'ok';
    }
    if (entry !== lease) return 'stale';
    entry.done = true;
    entry.expiresAt = expiresAt;
    return 'ok';
  }

  async release(lease: Lease): Promise<LeaseOutcome> {
    const entry = this.entries.get(lease.id);
    if (entry !== lease || entry.done) return 'stale';
    this.entries.delete(lease.id);
    return 'ok';
  }

  async extend(lease: Lease, options: ClaimOptions): Promise<LeaseOutcome> {
    const entry = this.entries.get(lease.id);
    if (entry !== lease || entry.done) return 'stale';
    entry.expiresAt = this.now() + options.leaseMs;
    return 'ok';
  }

  /**
   * Drops expired ids from the front (the oldest claims) until a live one, at most once per
   * `SWEEP_INTERVAL_MS`: a sweep on every claim walked the holes its own deletions left in the Map.
   */
  private sweepExpired(now: number): void {
    this.nextSweep = now + SWEEP_INTERVAL_MS;
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) return;
      this.entries.delete(id);
    }
  }

  /** At the bound: drops every expired id; whether there is room now. Never drops a live lease or a done id inside retention. */
  private sweepAll(now: number): boolean {
    if (now - this.lastFullSweep >= FULL_SWEEP_INTERVAL_MS) {
      this.lastFullSweep = now;
      for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
    }
    return this.entries.size < this.maxEntries;
  }
}
