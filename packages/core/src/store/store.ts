/** What a claim found: free (now yours), leased by someone else, or already handled. */
export type ClaimResult = 'claimed' | 'in-progress' | 'done';

/** Options of {@link IdempotencyStore.claim}. */
export interface ClaimOptions {
  /** How long the claim holds before it counts as free again (the holder may have died). */
  leaseMs: number;
}

/**
 * Remembers which webhook deliveries were handled, across retries and server instances.
 * Implementations: `MemoryIdempotencyStore` (one process), `@verikit/redis`, `@verikit/postgres`.
 * Every implementation must pass the contract suite in `@verikit/testing`.
 */
export interface IdempotencyStore {
  /** Atomically: `done` if completed, `in-progress` if leased and the lease is live, else lease it -> `claimed`. */
  claim(id: string, options: ClaimOptions): Promise<ClaimResult>;
  /** Marks `id` handled; kept at least the store's retention (default 7 days). */
  complete(id: string): Promise<void>;
  /** Drops a lease after a failure so a redelivery may claim it; a completed id stays completed. */
  release(id: string): Promise<void>;
}

/** Default retention of a completed id: 7 days, beyond Svix's ~27.6 h of retries and manual replays. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
