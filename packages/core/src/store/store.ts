import { VerikitError } from '../errors.js';

/** A claim on a delivery id, held by one owner; hand it back to `complete`, `release` or `extend`. */
export interface Lease {
  /** The delivery id (`svix-id`). */
  readonly id: string;
  /** Who holds it: unique to this claim, so a stale holder's call can be told from the current one's. */
  readonly owner: string;
}

/** What a claim found: free (now yours, with the lease), leased by someone else, or already handled. */
export type ClaimResult =
  | { readonly status: 'claimed'; readonly lease: Lease }
  | { readonly status: 'in-progress' }
  | { readonly status: 'done' };

/**
 * What an owner's call did: `ok`, or `stale` when the lease is no longer the caller's (it ran out and
 * another owner claimed the id, or the id was completed): the call changed nothing.
 */
export type LeaseOutcome = 'ok' | 'stale';

/** Options of {@link IdempotencyStore.claim} and {@link IdempotencyStore.extend}. */
export interface ClaimOptions {
  /** How long the lease holds from now, in ms, before it counts as free again (the holder may have died). */
  leaseMs: number;
}

/**
 * Remembers which webhook deliveries were handled, across retries and server instances.
 * Implementations: `MemoryIdempotencyStore` (one process), `@verikit/postgres`, `@verikit/redis`.
 * Every implementation must pass the contract suite in `@verikit/testing`. Lease expiry is measured
 * on the store's own clock, one that cannot step back, never on the caller's wall clock.
 */
export interface IdempotencyStore {
  /** Atomically: `done` if completed (within retention), `in-progress` if another live lease holds it, else a new lease. */
  claim(id: string, options: ClaimOptions): Promise<ClaimResult>;
  /** Marks the id handled (kept at least the retention), if the lease is still the caller's; else `stale`, changing nothing. */
  complete(lease: Lease): Promise<LeaseOutcome>;
  /** Drops the caller's lease after a failure so a redelivery may claim it; `stale` (changing nothing) when it is not theirs. */
  release(lease: Lease): Promise<LeaseOutcome>;
  /** Moves the caller's lease expiry to `leaseMs` from now while work still runs; `stale` when it is not theirs. */
  extend(lease: Lease, options: ClaimOptions): Promise<LeaseOutcome>;
}

/** Default retention of a completed id: 7 days, beyond Svix's ~27.6 h of retries and manual replays. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * A bounded store is full of live leases and ids handled within the retention, none of which it may
 * forget: it refuses the new claim (the webhook route answers 503, the sender retries later).
 */
export class StoreFullError extends VerikitError {
  override name = 'StoreFullError';
  /** The bound that was reached. */
  readonly maxEntries: number;

  constructor(maxEntries: number) {
    super(
      'store_full',
      `the idempotency store is full (maxEntries ${maxEntries} ids, none expired): raise maxEntries or use a shared store`,
    );
    this.maxEntries = maxEntries;
  }
}

/** A lease the caller no longer holds: reported through `onError` when completing, releasing or extending it changed nothing. */
export class LeaseLostError extends VerikitError {
  override name = 'LeaseLostError';
  /** The delivery id. */
  readonly id: string;

  constructor(id: string, action: 'complete' | 'release' | 'extend' | 'fail') {
    super('lease_lost', `the lease on ${JSON.stringify(id)} was lost, so ${action} changed nothing`);
    this.id = id;
  }
}
