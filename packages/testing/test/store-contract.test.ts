import { type IdempotencyStore, MemoryIdempotencyStore } from '@verikit/core';
import { describe, expect, it } from 'vitest';
import { idempotencyStoreContract } from '../src/index.js';

describe('MemoryIdempotencyStore keeps the store contract', () => {
  for (const c of idempotencyStoreContract({ createStore: ({ retentionMs }) => new MemoryIdempotencyStore({ retentionMs }) }))
    it(c.name, c.run);
});

describe('the contract catches broken stores', () => {
  // A naive map store: its release forgets completions too, and with `atomic: false` its claim
  // checks, yields, then sets, so concurrent claims all see the id free.
  class NaiveStore implements IdempotencyStore {
    private readonly state = new Map<string, 'leased' | 'done'>();
    constructor(private readonly atomic: boolean) {}
    async claim(id: string): Promise<'claimed' | 'in-progress' | 'done'> {
      const current = this.state.get(id);
      if (!this.atomic) await new Promise((resolve) => setImmediate(resolve));
      if (current === 'done') return 'done';
      if (current === 'leased') return 'in-progress';
      this.state.set(id, 'leased');
      return 'claimed';
    }
    async complete(id: string) {
      this.state.set(id, 'done');
    }
    async release(id: string) {
      this.state.delete(id);
    }
  }

  it.each([
    ['a non-atomic claim', () => new NaiveStore(false), 'of 50 concurrent claims exactly one wins'],
    ['a release that drops completions', () => new NaiveStore(true), 'release does not undo a completion'],
  ])('%s fails its case', async (_name, make, caseName) => {
    const broken = idempotencyStoreContract({ createStore: make }).find((c) => c.name === caseName)!;
    await expect(broken.run()).rejects.toThrow(/expected/);
  });
});

describe('MemoryIdempotencyStore bounds its memory', () => {
  it('never holds more than maxEntries, dropping expired and oldest completed ids first', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ maxEntries: 100, retentionMs: 1000, now: () => now });
    for (let i = 0; i < 1000; i++) {
      await store.claim(`id-${i}`, { leaseMs: 10 });
      await store.complete(`id-${i}`);
      expect(store.size).toBeLessThanOrEqual(100);
    }
    expect(await store.claim('id-999', { leaseMs: 10 })).toBe('done');
    now = 5000;
    expect(await store.claim('id-999', { leaseMs: 10 })).toBe('claimed');
  });

  it('evicts completed ids before live leases', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 100 });
    for (let i = 0; i < 50; i++) await store.claim(`lease-${i}`, { leaseMs: 60_000 });
    for (let i = 0; i < 60; i++) {
      await store.claim(`done-${i}`, { leaseMs: 60_000 });
      await store.complete(`done-${i}`);
    }
    expect(store.size).toBeLessThanOrEqual(100);
    for (let i = 0; i < 50; i++) expect(await store.claim(`lease-${i}`, { leaseMs: 60_000 })).toBe('in-progress');
  });
});
