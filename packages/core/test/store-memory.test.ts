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
});
