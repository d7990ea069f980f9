import {
  type ClaimOptions,
  type ClaimResult,
  type IdempotencyStore,
  type Lease,
  type LeaseOutcome,
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from '@verikit/core';

/** One call a {@link FakeIdempotencyStore} received. */
export interface StoreCall {
  method: 'claim' | 'complete' | 'release' | 'extend';
  id: string;
  /** The store's answer (a claim's status, or an owner's call's `ok`/`stale`), when it answered. */
  result?: ClaimResult['status'] | LeaseOutcome;
  /** The injected failure, when it failed. */
  error?: Error;
}

type Method = StoreCall['method'];

/**
 * An in-memory store that records every call and fails on demand, to test how your webhook
 * route behaves when the store does not.
 * @example
 * const store = new FakeIdempotencyStore();
 * store.failNext('claim'); // the next claim throws -> the handler answers 503
 * store.failRate = 0.1;    // or: 10% of all calls throw
 */
export class FakeIdempotencyStore implements IdempotencyStore {
  /** Every call, in order. */
  readonly calls: StoreCall[] = [];
  /** Fraction (0..1) of calls that fail at random. */
  failRate = 0;
  private readonly inner: MemoryIdempotencyStore;
  private readonly random: () => number;
  private readonly queued: Array<{ method: Method | undefined; error: Error }> = [];

  constructor(options: MemoryIdempotencyStoreOptions & { random?: () => number } = {}) {
    this.inner = new MemoryIdempotencyStore(options);
    this.random = options.random ?? Math.random;
  }

  /** Makes the next `times` calls of `method` (any method when omitted) throw `error`. */
  failNext(method?: Method, options: { times?: number; error?: Error } = {}): void {
    for (let i = 0; i < (options.times ?? 1); i++)
      this.queued.push({ method, error: options.error ?? new Error(`injected ${method ?? 'store'} failure`) });
  }

  /** The calls of one method. */
  callsOf(method: Method): StoreCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  claim(id: string, options: ClaimOptions): Promise<ClaimResult> {
    return this.run(
      'claim',
      id,
      () => this.inner.claim(id, options),
      (result) => result.status,
    );
  }

  complete(lease: Lease): Promise<LeaseOutcome> {
    return this.run(
      'complete',
      lease.id,
      () => this.inner.complete(lease),
      (outcome) => outcome,
    );
  }

  release(lease: Lease): Promise<LeaseOutcome> {
    return this.run(
      'release',
      lease.id,
      () => this.inner.release(lease),
      (outcome) => outcome,
    );
  }

  extend(lease: Lease, options: ClaimOptions): Promise<LeaseOutcome> {
    return this.run(
      'extend',
      lease.id,
      () => this.inner.extend(lease, options),
      (outcome) => outcome,
    );
  }

  private async run<T>(method: Method, id: string, call: () => Promise<T>, summary: (result: T) => StoreCall['result']): Promise<T> {
    const index = this.queued.findIndex((q) => q.method === undefined || q.method === method);
    const injected =
      index >= 0
        ? this.queued.splice(index, 1)[0]?.error
        : this.random() < this.failRate
          ? new Error(`random ${method} failure`)
          : undefined;
    if (injected !== undefined) {
      this.calls.push({ method, id, error: injected });
      throw injected;
    }
    const result = await call();
    this.calls.push({ method, id, result: summary(result) });
    return result;
  }
}
