import type { IdempotencyStore } from '@verikit/core';

/** One check of the contract; run it with any test runner (`it(c.name, c.run)`, `test(c.name, c.run)`). */
export interface StoreContractCase {
  name: string;
  run: () => Promise<void>;
}

/** Options of {@link idempotencyStoreContract}. */
export interface StoreContractOptions {
  /** Makes a store with the given retention. Called once per case; the same backend may be shared. */
  createStore: (options: { retentionMs: number }) => IdempotencyStore | Promise<IdempotencyStore>;
  /** Called after each case with the store it made (close connections here). */
  disposeStore?: (store: IdempotencyStore) => void | Promise<void>;
}

/** Thrown when a store breaks the contract; the message says which rule. */
export class StoreContractError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreContractError';
  }
}

function expectEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new StoreContractError(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LONG = { leaseMs: 30_000 };
const DAY = 24 * 60 * 60 * 1000;

/**
 * The rules every `IdempotencyStore` must keep, as runner-neutral cases. Ids are unique per
 * call, so a shared Redis or Postgres can run it without cleanup.
 * @example
 * // vitest or jest
 * for (const c of idempotencyStoreContract({ createStore: () => new MemoryIdempotencyStore() })) it(c.name, c.run);
 * // node --test
 * for (const c of idempotencyStoreContract({ createStore })) test(c.name, c.run);
 */
export function idempotencyStoreContract(options: StoreContractOptions): StoreContractCase[] {
  const run = `contract-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  let counter = 0;
  const freshId = (label: string) => `${run}:${label}:${++counter}`;
  const withStore = (retentionMs: number, body: (store: IdempotencyStore) => Promise<void>) => async (): Promise<void> => {
    const store = await options.createStore({ retentionMs });
    try {
      await body(store);
    } finally {
      await options.disposeStore?.(store);
    }
  };
  const cases: Array<[string, number, (store: IdempotencyStore) => Promise<void>]> = [
    [
      'a new id is claimed; a second claim during the lease is in-progress',
      DAY,
      async (store) => {
        const id = freshId('lease');
        expectEqual(await store.claim(id, LONG), 'claimed', 'first claim');
        expectEqual(await store.claim(id, LONG), 'in-progress', 'claim during the lease');
      },
    ],
    [
      'a completed id is done for every later claim',
      DAY,
      async (store) => {
        const id = freshId('done');
        expectEqual(await store.claim(id, LONG), 'claimed', 'first claim');
        await store.complete(id);
        expectEqual(await store.claim(id, LONG), 'done', 'claim after complete');
        expectEqual(await store.claim(id, { leaseMs: 1 }), 'done', 'claim again after complete');
      },
    ],
    [
      'a released id can be claimed again',
      DAY,
      async (store) => {
        const id = freshId('release');
        await store.claim(id, LONG);
        await store.release(id);
        expectEqual(await store.claim(id, LONG), 'claimed', 'claim after release');
      },
    ],
    [
      'release does not undo a completion',
      DAY,
      async (store) => {
        const id = freshId('release-done');
        await store.claim(id, LONG);
        await store.complete(id);
        await store.release(id);
        expectEqual(await store.claim(id, LONG), 'done', 'claim after complete then release');
      },
    ],
    [
      'an expired lease counts as free',
      DAY,
      async (store) => {
        const id = freshId('expiry');
        expectEqual(await store.claim(id, { leaseMs: 50 }), 'claimed', 'first claim');
        await sleep(150);
        expectEqual(await store.claim(id, LONG), 'claimed', 'claim after the lease ran out');
      },
    ],
    [
      'a completion is kept for the retention, then forgotten',
      300,
      async (store) => {
        const id = freshId('retention');
        await store.claim(id, LONG);
        await store.complete(id);
        expectEqual(await store.claim(id, LONG), 'done', 'claim within retention');
        await sleep(600);
        expectEqual(await store.claim(id, LONG), 'claimed', 'claim after retention');
      },
    ],
    [
      'complete works on an id that was never claimed',
      DAY,
      async (store) => {
        const id = freshId('complete-unclaimed');
        await store.complete(id);
        expectEqual(await store.claim(id, LONG), 'done', 'claim after a bare complete');
      },
    ],
    [
      'of 50 concurrent claims exactly one wins',
      DAY,
      async (store) => {
        const id = freshId('race');
        const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(id, LONG)));
        expectEqual(results.filter((r) => r === 'claimed').length, 1, 'claimed count');
        expectEqual(results.filter((r) => r === 'in-progress').length, 49, 'in-progress count');
      },
    ],
    [
      'ids are independent, whatever characters they hold',
      DAY,
      async (store) => {
        const ids = ['msg_2Lx', 'msg_2Lx ', 'MSG_2LX', 'msg:*?[]', 'msg_Zoë_商店_🚀', 'x'.repeat(256), "msg'; DROP TABLE x; --"].map(
          (s) => `${run}:${s}`,
        );
        for (const id of ids)
          expectEqual(await store.claim(id, LONG), 'claimed', `claim of ${JSON.stringify(id.slice(run.length + 1, run.length + 20))}`);
        await store.complete(ids[0] as string);
        for (const id of ids.slice(1)) expectEqual(await store.claim(id, LONG), 'in-progress', 'a neighbour stays leased');
      },
    ],
  ];
  return cases.map(([name, retentionMs, body]) => ({ name, run: withStore(retentionMs, body) }));
}
