import { checkHealth, type InboxEngine } from '@verikit/core';
import { expect, it } from 'vitest';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const delivery = (id: string) => ({
  id,
  timestamp: Math.floor(Date.now() / 1000),
  body: JSON.stringify({ type: 'kyb.case.status_changed' }),
});

/** Leases the one due event, failing the test when there is none. */
async function leaseOne(inbox: InboxEngine, owner: string) {
  const [event] = await inbox.lease(owner, 1, 30_000);
  if (event === undefined) throw new Error('nothing to lease');
  return event;
}

/**
 * `stats()` and the health check on it, the same on every inbox engine: call inside a describe
 * block, with `fresh` making an empty inbox of the engine under test (its own schema or key prefix).
 */
export function inboxStatsCases(fresh: () => Promise<InboxEngine>): void {
  it('stats of an empty inbox: nothing pending, retrying or dead, and no oldest', async () => {
    const inbox = await fresh();
    expect(await inbox.stats()).toEqual({ pending: 0, retrying: 0, dead: 0, oldestPendingAt: null, oldestPendingAgeMs: null });
  });

  it('stats count due, leased and retrying events as pending, retries waiting out backoff as retrying, dead letters as dead; done ones not at all', async () => {
    const inbox = await fresh();
    for (const id of ['msg_stats_a', 'msg_stats_b', 'msg_stats_c', 'msg_stats_d']) {
      await inbox.accept(delivery(id));
      // Accepted a few ms apart, so the first is the oldest on any clock.
      await sleep(5);
    }
    expect(await inbox.stats()).toMatchObject({ pending: 4, retrying: 0, dead: 0 });

    const first = await leaseOne(inbox, 'owner-1');
    expect(first.id).toBe('msg_stats_a');
    await inbox.fail(first, { error: 'try later', retryInMs: 60_000 });
    const dead = await leaseOne(inbox, 'owner-1');
    await inbox.fail(dead, { error: 'gave up', retryInMs: null });
    const done = await leaseOne(inbox, 'owner-1');
    await inbox.complete(done, async () => {});
    const leased = await leaseOne(inbox, 'owner-1');

    const stats = await inbox.stats();
    // The oldest pending one is the retry (accepted first), not the one at the head of the queue.
    expect(stats).toMatchObject({ pending: 2, retrying: 1, dead: 1, oldestPendingAt: first.receivedAt });
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    await inbox.fail(leased, { error: 'gave up', retryInMs: null });
    expect(await inbox.stats()).toMatchObject({ pending: 1, retrying: 1, dead: 2 });

    expect(await inbox.replay(dead.id)).toBe(true);
    expect(await inbox.stats()).toMatchObject({ pending: 2, retrying: 1, dead: 1, oldestPendingAt: first.receivedAt });
  });

  it("the oldest pending event's age grows on the engine's clock", async () => {
    const inbox = await fresh();
    await inbox.accept(delivery('msg_stats_aging'));
    const before = await inbox.stats();
    await sleep(200);
    const after = await inbox.stats();
    expect(after.oldestPendingAt).toEqual(before.oldestPendingAt);
    expect(after.oldestPendingAgeMs).toBeGreaterThanOrEqual((before.oldestPendingAgeMs ?? 0) + 150);
  });

  it('health: ok within thresholds; degraded (still answering) over maxDead or maxOldestPendingMs, naming each problem', async () => {
    const inbox = await fresh();
    await inbox.accept(delivery('msg_health_a'));
    const thresholds = { inbox, maxDead: 0, maxOldestPendingMs: 60_000 };
    expect(await checkHealth(thresholds)).toMatchObject({
      status: 'ok',
      checks: { inbox: { status: 'ok', stats: { pending: 1, dead: 0 } } },
    });

    await inbox.accept(delivery('msg_health_b'));
    const first = await leaseOne(inbox, 'owner-h');
    await inbox.fail(first, { error: 'gave up', retryInMs: null });
    expect(await checkHealth(thresholds)).toMatchObject({
      status: 'degraded',
      checks: { inbox: { status: 'degraded', problems: ['too_many_dead_letters'], stats: { dead: 1 } } },
    });

    await sleep(20);
    expect(await checkHealth({ inbox, maxDead: 1, maxOldestPendingMs: 10 })).toMatchObject({
      status: 'degraded',
      checks: { inbox: { status: 'degraded', problems: ['oldest_pending_too_old'] } },
    });
  });
}
