import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createWebhookHandler,
  type Lease,
  LeaseLostError,
  MemoryIdempotencyStore,
  StoreFullError,
  type WebhookContext,
} from '../src/index.node.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const EVENT = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';
const delivery = (id: string) => ({ method: 'POST', headers: svixHeaders(EVENT, { id }), body: EVENT });
const claimed = (result: Awaited<ReturnType<MemoryIdempotencyStore['claim']>>): Lease => {
  if (result.status !== 'claimed') throw new Error(`expected a claim, got ${result.status}`);
  return result.lease;
};

afterEach(() => vi.restoreAllMocks());

describe('MemoryIdempotencyStore on contract v2', () => {
  it('a stale owner cannot release the lease of the next one (A expired, B claimed, A fails: C still waits)', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    const a = claimed(await store.claim('msg', { leaseMs: 1000 }));
    now = 1500; // A's lease ran out while its work went on
    const b = claimed(await store.claim('msg', { leaseMs: 1000 }));
    expect(await store.release(a)).toBe('stale');
    expect(await store.complete(a)).toBe('stale');
    expect(await store.extend(a, { leaseMs: 1000 })).toBe('stale');
    expect((await store.claim('msg', { leaseMs: 1000 })).status).toBe('in-progress');
    expect(await store.complete(b)).toBe('ok');
    expect((await store.claim('msg', { leaseMs: 1000 })).status).toBe('done');
  });

  it('three handlers over one store: a stale release frees nothing, so the event never runs a third time', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ clock: () => now });
    const running: string[] = [];
    const finished: string[] = [];
    const lost: unknown[] = [];
    const handler = (name: string, work: (ctx: WebhookContext) => Promise<void>) =>
      createWebhookHandler({
        secret: SECRET,
        store,
        deadlineMs: 20,
        leaseMs: 1000,
        onError: (error) => lost.push(error),
        onEvent: async (ctx) => {
          running.push(name);
          await work(ctx);
          finished.push(name);
        },
      });
    let failA!: (error: Error) => void;
    const a = handler('A', () => new Promise((_resolve, reject) => (failA = reject)));
    const b = handler('B', () => new Promise((resolve) => setTimeout(resolve, 100)));
    const c = handler('C', async () => {});
    expect((await a(delivery('msg_abc'))).status).toBe(503); // slow: answered, lease kept
    now = 5_000; // A's lease runs out (a pause longer than the lease, say) before it could be extended
    const bAnswer = b(delivery('msg_abc'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    failA(new Error('A gives up'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await c(delivery('msg_abc'))).status).toBe(409); // B still holds it: A's release changed nothing
    expect((await bAnswer).status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await c(delivery('msg_abc'))).status).toBe(204);
    expect(running).toEqual(['A', 'B']);
    expect(finished).toEqual(['B']);
    expect(lost.some((e) => e instanceof LeaseLostError)).toBe(true);
  });

  it('a handler keeps a slow onEvent leased past its deadline, so another instance gets 409, not a second run', async () => {
    const store = new MemoryIdempotencyStore();
    let runs = 0;
    const make = () =>
      createWebhookHandler({
        secret: SECRET,
        store,
        deadlineMs: 30,
        leaseMs: 90,
        onEvent: async () => {
          runs++;
          await new Promise((resolve) => setTimeout(resolve, 400));
        },
      });
    const [first, second] = [make(), make()];
    expect((await first(delivery('msg_slow'))).status).toBe(503);
    for (const wait of [100, 100, 100]) {
      await new Promise((resolve) => setTimeout(resolve, wait)); // each past the 90 ms lease, had it not been extended
      expect((await second(delivery('msg_slow'))).status).toBe(409);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await second(delivery('msg_slow'))).status).toBe(204);
    expect(runs).toBe(1);
  });

  it('a wall clock stepping back does not turn a fresh lease into done (expiry is on a monotonic clock)', async () => {
    const store = new MemoryIdempotencyStore();
    const wall = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(wall - 2 * 60 * 60 * 1000);
    const lease = claimed(await store.claim('msg_step', { leaseMs: 60_000 }));
    expect((await store.claim('msg_step', { leaseMs: 60_000 })).status).toBe('in-progress');
    vi.spyOn(Date, 'now').mockReturnValue(wall + 3 * 60 * 60 * 1000);
    expect((await store.claim('msg_step', { leaseMs: 60_000 })).status).toBe('in-progress');
    expect(await store.complete(lease)).toBe('ok');
    expect((await store.claim('msg_step', { leaseMs: 60_000 })).status).toBe('done');
  });

  it('at its bound it refuses new claims rather than forget a handled id or a live lease', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ maxEntries: 10, retentionMs: 10_000, clock: () => now });
    for (let i = 0; i < 8; i++) await store.complete(claimed(await store.claim(`done-${i}`, { leaseMs: 1000 })));
    const live = [claimed(await store.claim('live-1', { leaseMs: 60_000 })), claimed(await store.claim('live-2', { leaseMs: 60_000 }))];
    await expect(store.claim('new', { leaseMs: 1000 })).rejects.toBeInstanceOf(StoreFullError);
    for (let i = 0; i < 8; i++) expect((await store.claim(`done-${i}`, { leaseMs: 1000 })).status).toBe('done');
    expect((await store.claim('live-1', { leaseMs: 1000 })).status).toBe('in-progress');
    now = 20_000; // the handled ids are past their retention now; the leases were extended
    for (const lease of live) expect(await store.extend(lease, { leaseMs: 60_000 })).toBe('ok');
    expect(claimed(await store.claim('new', { leaseMs: 1000 })).id).toBe('new');
    expect((await store.claim('live-2', { leaseMs: 1000 })).status).toBe('in-progress');
  });

  it('a full store answers 503 and says why through onError', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 1 });
    const errors: Array<{ error: unknown; stage: string }> = [];
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      onEvent: () => {},
      onError: (error, { stage }) => errors.push({ error, stage }),
    });
    expect((await handle(delivery('msg_1'))).status).toBe(204);
    const refused = await handle(delivery('msg_2'));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toBe('store_unavailable');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ stage: 'claim', error: { code: 'store_full', maxEntries: 1 } });
    expect((await handle(delivery('msg_1'))).status).toBe(204);
  });

  it('keeps a lease that outlives many retentions, and a handled id to the end of its retention and no longer', async () => {
    let now = 0;
    const store = new MemoryIdempotencyStore({ retentionMs: 100, clock: () => now });
    const slow = claimed(await store.claim('slow', { leaseMs: 1_000 }));
    now = 90;
    const quick = claimed(await store.claim('quick', { leaseMs: 50 }));
    now = 95;
    expect(await store.complete(quick)).toBe('ok'); // handled at 95: done until 195
    for (now = 100; now <= 400; now += 5) {
      await store.claim(`other-${now}`, { leaseMs: 10 }); // other ids come and go meanwhile
      expect((await store.claim('slow', { leaseMs: 10 })).status).toBe('in-progress');
      const again = await store.claim('quick', { leaseMs: 10 });
      expect(again.status).toBe(now < 195 ? 'done' : 'claimed');
      if (again.status === 'claimed') expect(await store.release(again.lease)).toBe('ok');
    }
    expect(await store.complete(slow)).toBe('ok'); // completed at 405, four retentions after its claim
    now = 504;
    expect((await store.claim('slow', { leaseMs: 10 })).status).toBe('done');
    now = 505;
    expect((await store.claim('slow', { leaseMs: 10 })).status).toBe('claimed');
  });

  it('answers every claim as a store that forgets nothing early would (model-based, random clocks and owners)', async () => {
    type Op =
      | { kind: 'advance'; ms: number }
      | { kind: 'claim'; id: number; leaseMs: number }
      | { kind: 'complete' | 'release'; lease: number }
      | { kind: 'extend'; lease: number; leaseMs: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('claim' as const), id: fc.integer({ min: 0, max: 2 }), leaseMs: fc.integer({ min: 1, max: 300 }) }),
      fc.record({ kind: fc.constantFrom('complete' as const, 'release' as const), lease: fc.nat() }),
      fc.record({ kind: fc.constant('extend' as const), lease: fc.nat(), leaseMs: fc.integer({ min: 1, max: 300 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 200 }), fc.array(op, { maxLength: 120 }), async (retentionMs, ops) => {
        let now = 0;
        const store = new MemoryIdempotencyStore({ retentionMs, clock: () => now });
        // The model: per id, the last claim's lease and until when it holds (as a lease, or as handled).
        const model = new Map<string, { lease: Lease; done: boolean; until: number }>();
        const leases: Lease[] = [];
        const live = (id: string) => {
          const entry = model.get(id);
          return entry !== undefined && entry.until > now ? entry : undefined;
        };
        for (const step of ops) {
          if (step.kind === 'advance') {
            now += step.ms;
            continue;
          }
          if (step.kind === 'claim') {
            const id = `msg_${step.id}`;
            const held = live(id);
            const result = await store.claim(id, { leaseMs: step.leaseMs });
            expect(result.status).toBe(held === undefined ? 'claimed' : held.done ? 'done' : 'in-progress');
            if (result.status === 'claimed') {
              leases.push(result.lease);
              model.set(id, { lease: result.lease, done: false, until: now + step.leaseMs });
            }
            continue;
          }
          const lease = leases[step.lease % Math.max(1, leases.length)];
          if (lease === undefined) continue;
          const entry = model.get(lease.id);
          const mine = entry !== undefined && entry.lease === lease && !entry.done;
          // Past its time an entry may already be forgotten: then the owner's call may find the id free.
          const forgettable = entry === undefined || entry.until <= now;
          if (step.kind === 'complete') {
            const outcome = await store.complete(lease);
            if (mine || entry === undefined) expect(outcome).toBe('ok');
            // Completing twice changes nothing either way: 'ok' (the id stays handled) or 'stale'.
            else if (!forgettable && entry.lease !== lease) expect(outcome).toBe('stale');
            if (outcome === 'ok') model.set(lease.id, { lease, done: true, until: now + retentionMs });
          } else if (step.kind === 'release') {
            const outcome = await store.release(lease);
            if (mine && !forgettable) expect(outcome).toBe('ok');
            else if (!mine) expect(outcome).toBe('stale');
            if (outcome === 'ok') model.delete(lease.id);
            else if (mine) model.delete(lease.id); // an expired lease, already forgotten by the store
          } else if (step.kind === 'extend') {
            const outcome = await store.extend(lease, { leaseMs: step.leaseMs });
            if (mine && !forgettable) expect(outcome).toBe('ok');
            else if (!mine) expect(outcome).toBe('stale');
            if (outcome === 'ok' && entry !== undefined) entry.until = now + step.leaseMs;
            else if (mine) model.delete(lease.id);
          }
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
