import { ConfigurationError } from '../errors.js';
import { type ClaimOptions, type ClaimResult, DEFAULT_RETENTION_MS, type IdempotencyStore } from './store.js';

/** Options of {@link MemoryIdempotencyStore}. */
export interface MemoryIdempotencyStoreOptions {
  /** How long a completed id is remembered (default 7 days). */
  retentionMs?: number;
  /** Most ids kept; past it, expired entries go first, then the oldest completed ones (default 100 000). */
  maxEntries?: number;
  /** Clock in ms (default `Date.now`); for tests. */
  now?: () => number;
}

// One number per id, not an object: the sign says leased (negative) or done (positive), the
// magnitude is the expiry in ms since the store was made. Kept that small, V8 stores it inline
// rather than as a heap number: at 100 000 ids this keeps the garbage collector off the hot path.
type Entry = number;
const leased = (expiresAt: number): Entry => -expiresAt;
const isDone = (entry: Entry): boolean => entry > 0;
const expiryOf = (entry: Entry): number => Math.abs(entry);

/**
 * An in-process idempotency store: atomic by construction (one event loop), bounded, with TTLs.
 * Right for a single server instance and for tests; several instances need a shared store.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, Entry>();
  private readonly retentionMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly epoch: number;

  constructor(options: MemoryIdempotencyStoreOptions = {}) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.maxEntries = options.maxEntries ?? 100_000;
    const clock = options.now ?? Date.now;
    this.epoch = clock() - 1;
    this.now = () => clock() - this.epoch;
    if (!(this.retentionMs > 0)) throw new ConfigurationError('retentionMs', 'retentionMs must be positive');
    if (!(this.maxEntries >= 1) || !Number.isInteger(this.maxEntries))
      throw new ConfigurationError('maxEntries', 'maxEntries must be a positive integer');
  }

  /** Number of ids currently remembered (leased or done). */
  get size(): number {
    return this.entries.size;
  }

  async claim(id: string, options: ClaimOptions): Promise<ClaimResult> {
    const now = this.now();
    const entry = this.entries.get(id);
    if (entry !== undefined && expiryOf(entry) > now) return isDone(entry) ? 'done' : 'in-progress';
    this.put(id, leased(now + options.leaseMs));
    return 'claimed';
  }

  async complete(id: string): Promise<void> {
    this.put(id, this.now() + this.retentionMs);
  }

  async release(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (entry !== undefined && !isDone(entry)) this.entries.delete(id);
  }

  private put(id: string, entry: Entry): void {
    // Updated in place (Map order stays first-claim order, which eviction reads oldest first):
    // deleting and re-inserting on every completion left a hole per delivery for the Map to rehash.
    // A grown size tells a new id, so there is no separate lookup first.
    const before = this.entries.size;
    this.entries.set(id, entry);
    if (this.entries.size > before && this.entries.size > this.maxEntries) this.evict();
  }

  /**
   * Frees down to 90% of the bound, oldest first, so the walk is paid once per many inserts and
   * stops as soon as enough is free: expired entries and completed ids go; live leases stay
   * unless only they are left over the bound.
   */
  private evict(): void {
    const target = Math.floor(this.maxEntries * 0.9);
    const now = this.now();
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= target) return;
      if (isDone(entry) || expiryOf(entry) <= now) this.entries.delete(id);
    }
    for (const id of this.entries.keys()) {
      if (this.entries.size <= target) return;
      this.entries.delete(id);
    }
  }
}
