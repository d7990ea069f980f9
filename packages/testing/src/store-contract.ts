import type { ClaimResult, IdempotencyStore, Lease } from '@verikit/core';

/** One check of the contract; run it with any test runner (`it(c.name, c.run)`, `test(c.name, c.run)`). */
export interface StoreContractCase {
  name: string;
  run: () => Promise<void>;
}

/** Options of {@link idempotencyStoreContract}. */
export interface StoreContractOptions {
  /** Makes a store with the given retention. Called once per case; the same backend may be shared. */
  createStore: (options: { retentionMs: number }) => IdempotencyStore | Promise<IdempotencyStore>;
  /** For a store with a bound: makes one that holds at most `maxEntries` ids (adds the bound case). */
  createBoundedStore?: (options: { retentionMs: number; maxEntries: number }) => IdempotencyStore | Promise<IdempotencyStore>;
  /**
   * The store's clock is this process's wall clock (an embedded database such as PGlite, whose
   * `now()` is the host's). A wall-clock step then moves its leases, so the case that steps the
   * caller's wall clock is left out; the rule that a step never turns a lease into done still runs.
   */
  sharesWallClock?: boolean;
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

/** The lease of a claim that must have succeeded. */
function leaseOf(result: ClaimResult, what: string): Lease {
  if (result.status !== 'claimed') throw new StoreContractError(`${what}: expected "claimed", got ${JSON.stringify(result.status)}`);
  if (typeof result.lease?.owner !== 'string' || result.lease.owner === '')
    throw new StoreContractError(`${what}: a lease must carry an owner token`);
  return result.lease;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LONG = { leaseMs: 30_000 };
const DAY = 24 * 60 * 60 * 1000;
const HOURS_2 = 2 * 60 * 60 * 1000;

/** Runs `body` with `Date.now` shifted by `offsetMs`, as a wall clock stepped by NTP or a VM resume would be. */
async function withWallClockShifted<T>(offsetMs: number, body: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => real() + offsetMs;
  try {
    return await body();
  } finally {
    Date.now = real;
  }
}

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
  const withStore =
    (make: () => IdempotencyStore | Promise<IdempotencyStore>, body: (store: IdempotencyStore) => Promise<void>) =>
    async (): Promise<void> => {
      const store = await make();
      try {
        await body(store);
      } finally {
        await options.disposeStore?.(store);
      }
    };
  const status = async (store: IdempotencyStore, id: string, claim = LONG) => (await store.claim(id, claim)).status;
  const CLOCK_CASE: [string, number, (store: IdempotencyStore) => Promise<void>] = [
    "leases run on the store's clock: the caller's wall clock stepping back or forward changes nothing",
    DAY,
    async (store) => {
      const id = freshId('clock');
      const lease = await withWallClockShifted(-HOURS_2, async () =>
        leaseOf(await store.claim(id, LONG), 'claim with the wall clock 2 h back'),
      );
      expectEqual(await status(store, id), 'in-progress', 'claim with the wall clock restored');
      await withWallClockShifted(HOURS_2, async () =>
        expectEqual(await status(store, id), 'in-progress', 'claim with the wall clock 2 h ahead'),
      );
      await withWallClockShifted(-HOURS_2, async () =>
        expectEqual(await store.complete(lease), 'ok', 'complete with the wall clock 2 h back'),
      );
      await withWallClockShifted(2 * DAY, async () =>
        expectEqual(await status(store, id), 'done', 'claim with the wall clock 2 days ahead'),
      );
    },
  ];
  const cases: Array<[string, number, (store: IdempotencyStore) => Promise<void>]> = [
    [
      'a new id is claimed with a lease; a second claim during the lease is in-progress',
      DAY,
      async (store) => {
        const id = freshId('lease');
        const lease = leaseOf(await store.claim(id, LONG), 'first claim');
        expectEqual(lease.id, id, 'the lease names its id');
        expectEqual(await status(store, id), 'in-progress', 'claim during the lease');
      },
    ],
    [
      'a completed id is done for every later claim',
      DAY,
      async (store) => {
        const id = freshId('done');
        expectEqual(await store.complete(leaseOf(await store.claim(id, LONG), 'first claim')), 'ok', 'complete by the owner');
        expectEqual(await status(store, id), 'done', 'claim after complete');
        expectEqual(await status(store, id, { leaseMs: 1 }), 'done', 'claim again after complete');
      },
    ],
    [
      'a released id can be claimed again, under a new owner',
      DAY,
      async (store) => {
        const id = freshId('release');
        const first = leaseOf(await store.claim(id, LONG), 'first claim');
        expectEqual(await store.release(first), 'ok', 'release by the owner');
        const second = leaseOf(await store.claim(id, LONG), 'claim after release');
        if (second.owner === first.owner) throw new StoreContractError('each claim must get its own owner token');
      },
    ],
    [
      'release does not undo a completion',
      DAY,
      async (store) => {
        const id = freshId('release-done');
        const lease = leaseOf(await store.claim(id, LONG), 'first claim');
        await store.complete(lease);
        expectEqual(await store.release(lease), 'stale', 'release after complete');
        expectEqual(await status(store, id), 'done', 'claim after complete then release');
      },
    ],
    [
      'an expired lease counts as free',
      DAY,
      async (store) => {
        const id = freshId('expiry');
        leaseOf(await store.claim(id, { leaseMs: 50 }), 'first claim');
        await sleep(150);
        leaseOf(await store.claim(id, LONG), 'claim after the lease ran out');
      },
    ],
    [
      "only the owner acts: a stale lease cannot release, complete or extend the next owner's",
      DAY,
      async (store) => {
        const id = freshId('owner');
        const stale = leaseOf(await store.claim(id, { leaseMs: 50 }), 'first claim');
        await sleep(150);
        const current = leaseOf(await store.claim(id, LONG), 'claim after the first lease ran out');
        expectEqual(await store.release(stale), 'stale', 'release by the stale owner');
        expectEqual(await store.extend(stale, LONG), 'stale', 'extend by the stale owner');
        expectEqual(await store.complete(stale), 'stale', 'complete by the stale owner');
        expectEqual(await status(store, id), 'in-progress', 'claim while the current owner holds it');
        expectEqual(await store.complete(current), 'ok', 'complete by the current owner');
        expectEqual(await status(store, id), 'done', 'claim after the current owner completed');
      },
    ],
    [
      'an owner whose lease ran out, unclaimed by anyone since, may still complete',
      DAY,
      async (store) => {
        const id = freshId('late-complete');
        const lease = leaseOf(await store.claim(id, { leaseMs: 50 }), 'first claim');
        await sleep(150);
        expectEqual(await store.complete(lease), 'ok', 'complete after the lease ran out');
        expectEqual(await status(store, id), 'done', 'claim after the late completion');
      },
    ],
    [
      'extend keeps a lease alive past its first expiry, for its owner only',
      DAY,
      async (store) => {
        const id = freshId('extend');
        const lease = leaseOf(await store.claim(id, { leaseMs: 200 }), 'first claim');
        await sleep(50);
        expectEqual(await store.extend(lease, LONG), 'ok', 'extend by the owner');
        await sleep(300);
        expectEqual(await status(store, id), 'in-progress', 'claim after the first expiry, extended');
        await store.complete(lease);
        expectEqual(await store.extend(lease, LONG), 'stale', 'extend after complete');
      },
    ],
    [
      'a completion is kept for the retention, then forgotten',
      300,
      async (store) => {
        const id = freshId('retention');
        await store.complete(leaseOf(await store.claim(id, LONG), 'first claim'));
        expectEqual(await status(store, id), 'done', 'claim within retention');
        await sleep(600);
        leaseOf(await store.claim(id, LONG), 'claim after retention');
      },
    ],
    [
      'of 50 concurrent claims exactly one wins',
      DAY,
      async (store) => {
        const id = freshId('race');
        const results = (await Promise.all(Array.from({ length: 50 }, () => store.claim(id, LONG)))).map((r) => r.status);
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
        const leases: Lease[] = [];
        for (const id of ids)
          leases.push(leaseOf(await store.claim(id, LONG), `claim of ${JSON.stringify(id.slice(run.length + 1, run.length + 20))}`));
        await store.complete(leases[0] as Lease);
        for (const id of ids.slice(1)) expectEqual(await status(store, id), 'in-progress', 'a neighbour stays leased');
      },
    ],
  ];
  cases.push([
    'a wall clock stepping back never turns a lease into done',
    DAY,
    async (store) => {
      const id = freshId('clock-step');
      const notDone = async (when: string) => {
        if ((await status(store, id)) === 'done') throw new StoreContractError(`claim ${when}: expected a lease, got "done"`);
      };
      await withWallClockShifted(-HOURS_2, async () => {
        leaseOf(await store.claim(id, LONG), 'claim with the wall clock 2 h back');
        await notDone('again with the wall clock 2 h back');
      });
      await notDone('with the wall clock restored');
    },
  ]);
  if (options.sharesWallClock !== true) cases.push(CLOCK_CASE);
  const all = cases.map(([name, retentionMs, body]) => ({ name, run: withStore(() => options.createStore({ retentionMs }), body) }));
  const bounded = options.createBoundedStore;
  if (bounded !== undefined) {
    all.push({
      name: 'at its bound a store refuses new claims, and forgets no handled id or live lease',
      run: withStore(
        () => bounded({ retentionMs: DAY, maxEntries: 20 }),
        async (store) => {
          const ids = Array.from({ length: 20 }, (_, i) => freshId(`bound-${i}`));
          for (const [i, id] of ids.entries()) {
            const lease = leaseOf(await store.claim(id, LONG), `claim ${i + 1} of 20`);
            if (i % 2 === 0) await store.complete(lease);
          }
          const refused = await store.claim(freshId('bound-over'), LONG).then(
            (result) => result.status,
            () => 'refused',
          );
          expectEqual(refused, 'refused', 'a claim past the bound');
          for (const [i, id] of ids.entries())
            expectEqual(await status(store, id), i % 2 === 0 ? 'done' : 'in-progress', `id ${i + 1} at the bound`);
        },
      ),
    });
  }
  return all;
}
