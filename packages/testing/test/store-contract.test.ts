import type { ClaimResult, IdempotencyStore, Lease, LeaseOutcome } from '@verikit/core';
import { MemoryIdempotencyStore } from '@verikit/core';
import { describe, expect, it } from 'vitest';
import { FakeIdempotencyStore, idempotencyStoreContract } from '../src/index.js';

describe('MemoryIdempotencyStore keeps the store contract', () => {
  for (const c of idempotencyStoreContract({
    createStore: ({ retentionMs }) => new MemoryIdempotencyStore({ retentionMs }),
    createBoundedStore: (options) => new MemoryIdempotencyStore(options),
  }))
    it(c.name, c.run);
});

describe('FakeIdempotencyStore keeps it too, recording every call', () => {
  for (const c of idempotencyStoreContract({ createStore: ({ retentionMs }) => new FakeIdempotencyStore({ retentionMs }) }))
    it(c.name, c.run);

  it('records answers and fails on demand', async () => {
    const store = new FakeIdempotencyStore();
    store.failNext('claim');
    await expect(store.claim('a', { leaseMs: 1000 })).rejects.toThrow(/injected claim failure/);
    const result = await store.claim('a', { leaseMs: 1000 });
    expect(result.status).toBe('claimed');
    await store.complete((result as { lease: Lease }).lease);
    expect(store.calls.map((c) => [c.method, c.result ?? 'threw'])).toEqual([
      ['claim', 'threw'],
      ['claim', 'claimed'],
      ['complete', 'ok'],
    ]);
  });
});

describe('the contract catches broken stores', () => {
  // The store contract v1 had no owners: release and complete acted for anyone. A map store like that
  // (optionally non-atomic: its claim checks, yields, then sets) fails the owner rules.
  class OwnerlessStore implements IdempotencyStore {
    private readonly state = new Map<string, { done: boolean; until: number }>();
    private n = 0;
    constructor(
      private readonly atomic: boolean,
      private readonly wallClock = false,
    ) {}
    private now() {
      return this.wallClock ? Date.now() : performance.now();
    }
    async claim(id: string, o: { leaseMs: number }): Promise<ClaimResult> {
      const current = this.state.get(id);
      if (!this.atomic) await new Promise((resolve) => setImmediate(resolve));
      if (current?.done) return { status: 'done' };
      if (current && current.until > this.now()) return { status: 'in-progress' };
      this.state.set(id, { done: false, until: this.now() + o.leaseMs });
      return { status: 'claimed', lease: { id, owner: String(++this.n) } };
    }
    async complete(lease: Lease): Promise<LeaseOutcome> {
      this.state.set(lease.id, { done: true, until: Number.POSITIVE_INFINITY });
      return 'ok';
    }
    async release(lease: Lease): Promise<LeaseOutcome> {
      this.state.delete(lease.id);
      return 'ok';
    }
    async extend(lease: Lease, o: { leaseMs: number }): Promise<LeaseOutcome> {
      this.state.set(lease.id, { done: false, until: this.now() + o.leaseMs });
      return 'ok';
    }
  }

  it.each([
    ['a non-atomic claim', () => new OwnerlessStore(false), 'of 50 concurrent claims exactly one wins'],
    ['a release that drops completions', () => new OwnerlessStore(true), 'release does not undo a completion'],
    [
      'an ownerless release',
      () => new OwnerlessStore(true),
      "only the owner acts: a stale lease cannot release, complete or extend the next owner's",
    ],
    [
      "leases on the caller's wall clock",
      () => new OwnerlessStore(true, true),
      "leases run on the store's clock: the caller's wall clock stepping back or forward changes nothing",
    ],
  ])('%s fails its case', async (_name, make, caseName) => {
    const broken = idempotencyStoreContract({ createStore: make }).find((c) => c.name === caseName);
    expect(broken).toBeDefined();
    await expect(broken!.run()).rejects.toThrow(/expected/);
  });

  it('a store that takes claims past its bound fails the bound case', async () => {
    const forgetful = idempotencyStoreContract({
      createStore: () => new MemoryIdempotencyStore(),
      createBoundedStore: () => new MemoryIdempotencyStore({ maxEntries: 1_000 }),
    }).find((c) => c.name.startsWith('at its bound'))!;
    await expect(forgetful.run()).rejects.toThrow(/a claim past the bound/);
  });
});
