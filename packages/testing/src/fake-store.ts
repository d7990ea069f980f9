import {
  type ClaimOptions,
  type ClaimResult,
  type IdempotencyStore,
  MemoryIdempotencyStore,
  type MemoryIdempotencyStoreOptions,
} from '@verikit/core';

/** One call a {@link FakeIdempotencyStore} received. */
export interface StoreCall {
  method: 'claim' | 'complete' | 'release';
  id: string;
  /** The claim's answer, when it answered. */
  result?: ClaimResult;
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
    return this.run('claim', id, () => this.inner.claim(id, options));
  }

  complete(id: string): Promise<void> {
    return this.run('complete', id, () => this.inner.complete(id));
  }

  release(id: string): Promise<void> {
    return this.run('release', id, () => this.inner.release(id));
  }

  private async run<T>(method: Method, id: string, call: () => Promise<T>): Promise<T> {
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
    this.calls.push(method === 'claim' ? { method, id, result: result as ClaimResult } : { method, id });
    return result;
  }
}
