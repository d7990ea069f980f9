import { createInboxWorker, type InboxEvent } from '@verikit/core';
import { Job } from 'bullmq';
import { afterAll, expect, it } from 'vitest';
import { rawScan, removeKeys } from '../../../test-support/redis-raw-scan.js';
import { createRedisInbox, createRedisLedger, type RedisClient, type RedisInbox, type RedisInboxOptions } from '../src/index.js';

const run = `${process.pid}-${Date.now().toString(36)}`;
let queues = 0;
const key32 = () => crypto.getRandomValues(new Uint8Array(32));
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
const delivery = (id: string, refId: string, extra = '') => ({
  id,
  timestamp: Math.floor(Date.now() / 1000),
  body: JSON.stringify({ type: 'kyb.case.status_changed', data: { refId, person: { name: `Zoë Canary-Ångström${extra}` } } }),
});

/**
 * What the InboxAdmin suite cannot see from outside: how the Redis inbox keeps BullMQ's own layout
 * (the job hash's `data`, the completed and failed sets), the atomicity of its Lua against a
 * completion racing the prune, queues written by older versions, and what erasure scrubs beyond
 * the body. Call inside a describe block; `redis()` is called once the block's own beforeAll has run.
 */
export function inboxAdminRedisCases(redis: () => RedisClient): void {
  const opened: Array<{ close(): Promise<void> }> = [];
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const thing of opened.reverse()) await thing.close();
    await removeKeys(redis(), prefixes);
  });

  /** A fresh queue (a hash tag of its own), and more inboxes over it. */
  const fresh = () => {
    const prefix = `{verikit-admin-redis-${run}-${++queues}}`;
    prefixes.push(prefix);
    const inboxOn = (options: Partial<RedisInboxOptions> = {}): RedisInbox => {
      const inbox = createRedisInbox({ redis: redis(), prefix, persistence: 'ignore', logger: false, pruneIntervalMs: 0, ...options });
      opened.push(inbox);
      return inbox;
    };
    const inbox = inboxOn();
    const { queue } = inbox;
    const data = async (id: string) => redis().hget(queue.toKey(id), 'data');
    /** Accepts and leases `id`, answering the leased event. */
    const leased = async (target: RedisInbox, id: string, refId: string): Promise<InboxEvent> => {
      await target.accept(delivery(id, refId));
      const [event] = await target.lease(`owner-${id}`, 1, 60_000);
      expect(event?.id).toBe(id);
      return event as InboxEvent;
    };
    return { prefix, inbox, inboxOn, queue, data, leased };
  };

  it("keeps BullMQ's layout: a removed body leaves the job hash's data as {id, timestamp}; erased and purged jobs are in BullMQ's completed set, which trims them after retentionMs", async () => {
    const { inbox, inboxOn, queue, data, leased } = fresh();
    const done = await leased(inbox, 'msg_layout_done', 'biz-layout');
    expect(await inbox.complete(done, async () => {})).toBe('ok');
    const dead = await leased(inbox, 'msg_layout_dead', 'biz-other');
    expect(await inbox.fail(dead, { error: 'gave up', retryInMs: null })).toBe('ok');
    await inbox.accept(delivery('msg_layout_pending', 'biz-layout'));
    const ids = ['msg_layout_done', 'msg_layout_pending', 'msg_layout_dead'];
    const timestamps = new Map<string, number>();
    for (const id of ids) timestamps.set(id, JSON.parse((await data(id)) as string).timestamp);

    expect(await inbox.erase({ kind: 'kyb', refId: 'biz-layout' })).toEqual({ erased: 2 });
    expect(await inbox.purgeDead({ before: new Date(Date.now() + 60_000) })).toBe(1);
    for (const id of ids) {
      expect(JSON.parse((await data(id)) as string)).toEqual({ id, timestamp: timestamps.get(id) });
      expect(await queue.getJobState(id)).toBe('completed');
    }
    expect(await queue.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed')).toEqual({
      completed: 3,
      failed: 0,
      wait: 0,
      active: 0,
      delayed: 0,
    });
    // BullMQ's removeOnComplete (age: retentionMs) trims by the completed set's scores when a job completes.
    const trimming = inboxOn({ retentionMs: 60_000 });
    for (const id of ['msg_layout_pending', 'msg_layout_dead']) await redis().zadd(queue.toKey('completed'), Date.now() - 120_000, id);
    const next = await leased(trimming, 'msg_layout_next', 'biz-next');
    expect(await trimming.complete(next, async () => {})).toBe('ok');
    expect(await data('msg_layout_pending')).toBeNull();
    expect(await data('msg_layout_dead')).toBeNull();
    expect(JSON.parse((await data('msg_layout_done')) as string)).toEqual({
      id: 'msg_layout_done',
      timestamp: timestamps.get('msg_layout_done'),
    });
  });

  it('a prune racing a completion keeps the job in the body index (its lock is held): its body is removed by the next prune, never left behind', async () => {
    const { inbox, data, leased } = fresh();
    const racing = createRedisInbox({ redis: redis(), prefix: inbox.queue.opts.prefix as string, persistence: 'ignore', logger: false });
    opened.push(racing);
    const zero = createRedisInbox({
      redis: redis(),
      prefix: inbox.queue.opts.prefix as string,
      payloadRetentionMs: 0,
      pruneIntervalMs: 0,
      persistence: 'ignore',
      logger: false,
    });
    opened.push(zero);
    const event = await leased(racing, 'msg_race', 'biz-race');
    // The prune runs between the body-index entry the completion sends first and BullMQ's completion.
    const real = Job.prototype.moveToCompleted;
    const pruned: number[] = [];
    Job.prototype.moveToCompleted = async function (this: Job, ...args: Parameters<Job['moveToCompleted']>) {
      pruned.push(await zero.prune());
      return real.apply(this, args);
    };
    try {
      expect(await racing.complete(event, async () => {})).toBe('ok');
    } finally {
      Job.prototype.moveToCompleted = real;
    }
    expect(pruned).toEqual([0]);
    expect(JSON.parse((await data('msg_race')) as string).body).toEqual(expect.any(String));
    expect(await zero.prune()).toBe(1);
    expect(JSON.parse((await data('msg_race')) as string).body).toBeUndefined();
  });

  it('a completed job whose body was removed and that is queued again by hand (a retry in Bull Board) is completed at once, never run', async () => {
    const { inbox, inboxOn, queue, leased } = fresh();
    const event = await leased(inbox, 'msg_retried', 'biz-retried');
    expect(await inbox.complete(event, async () => {})).toBe('ok');
    expect(await inbox.erase({ kind: 'kyb', refId: 'biz-retried' })).toEqual({ erased: 1 });
    await (await queue.getJob('msg_retried'))?.retry('completed');
    expect(await queue.getJobState('msg_retried')).toBe('waiting');
    const runs: string[] = [];
    const worker = createInboxWorker({
      inbox: inboxOn(),
      pollIntervalMs: 25,
      logger: false,
      onEvent: async (ctx) => void runs.push(ctx.id),
    });
    worker.start();
    try {
      await until(async () => (await queue.getJobState('msg_retried')) === 'completed', 'the retried job completed');
    } finally {
      await worker.stop({ timeoutMs: 5_000 });
    }
    expect(runs).toEqual([]);
  });

  it('a job a stopped worker was still waiting for goes back to the queue at once, for a running worker, not after its lease runs out', async () => {
    const { inbox, inboxOn } = fresh();
    const runs: string[] = [];
    const workerOn = (target: RedisInbox) =>
      createInboxWorker({
        inbox: target,
        pollIntervalMs: 25,
        leaseMs: 120_000,
        logger: false,
        onEvent: async (ctx) => void runs.push(ctx.id),
      });
    // Stopped once it waits for work: its inbox stays open, and its blocking fetch (BullMQ's marker wait) is still pending.
    const waiting = new Promise<void>((resolve) => {
      const wait = inbox.waitForWork;
      inbox.waitForWork = (...args) => {
        resolve();
        return wait(...args);
      };
    });
    const stopped = workerOn(inbox);
    stopped.start();
    await waiting;
    await stopped.stop({ timeoutMs: 5_000 });
    await inbox.accept(delivery('msg_after_stop', 'biz-after-stop'));
    const running = workerOn(inboxOn());
    running.start();
    try {
      await until(async () => runs.length === 1, 'the running worker to run it', 30_000);
    } finally {
      await running.stop({ timeoutMs: 5_000 });
    }
    expect(runs).toEqual(['msg_after_stop']);
  });

  it('a queue written by an older version: completed bodies it never indexed are found by prune, erase and reseal; its dead letters are listed', async () => {
    const { inbox, inboxOn, queue, data, leased } = fresh();
    for (const [id, refId] of [
      ['msg_old_1', 'biz-old-1'],
      ['msg_old_2', 'biz-old-2'],
      ['msg_old_3', 'biz-old-3'],
    ] as const)
      expect(await inbox.complete(await leased(inbox, id, refId), async () => {})).toBe('ok');
    const dead = await leased(inbox, 'msg_old_dead', 'biz-old-dead');
    expect(await inbox.fail(dead, { error: 'gave up', retryInMs: null })).toBe('ok');
    // As versions before the indexes left a queue.
    await redis().del(queue.toKey('verikit:bodies'), queue.toKey('verikit:dead'), queue.toKey('verikit:backfilled'));
    const upgraded = inboxOn({ payloadRetentionMs: 60_000, encryption: { keys: [{ id: 'k1', key: key32() }] } });

    expect((await upgraded.deadLetters()).map((letter) => letter.id)).toEqual(['msg_old_dead']);
    expect(await upgraded.erase({ kind: 'kyb', refId: 'biz-old-1' })).toEqual({ erased: 1 });
    expect(await upgraded.reseal()).toEqual({ resealed: 2 + 1 }); // two done bodies and the dead letter's
    expect(JSON.parse((await data('msg_old_2')) as string).body).toMatch(/^vk1\.k1\./);
    await redis().zadd(queue.toKey('verikit:bodies'), Date.now() - 120_000, 'msg_old_2');
    expect(await upgraded.prune()).toBe(1);
    expect(JSON.parse((await data('msg_old_2')) as string).body).toBeUndefined();
    expect(JSON.parse((await data('msg_old_3')) as string).body).toMatch(/^vk1\.k1\./);
  });

  it('the dead-letter index follows BullMQ when they differ: an entry that is no dead letter is never listed, a dead letter it lacks is', async () => {
    const { inbox, queue, leased } = fresh();
    for (const id of ['msg_dl_a', 'msg_dl_b'])
      expect(await inbox.fail(await leased(inbox, id, 'biz-dl'), { error: 'x', retryInMs: null })).toBe('ok');
    // One dead letter missing from the index (as a dead-lettering whose ZADD was lost would leave it): sizes differ, rebuilt.
    await redis().zrem(queue.toKey('verikit:dead'), 'msg_dl_b');
    expect((await inbox.deadLetters()).map((letter) => letter.id).sort()).toEqual(['msg_dl_a', 'msg_dl_b']);
    // Same sizes, one wrong entry: never listed, and dropped from the index as it is passed.
    await redis().zrem(queue.toKey('verikit:dead'), 'msg_dl_b');
    await redis().zadd(queue.toKey('verikit:dead'), 1, 'msg_dl_phantom');
    expect((await inbox.deadLetters()).map((letter) => letter.id)).toEqual(['msg_dl_a']);
    expect((await inbox.deadLetters()).map((letter) => letter.id).sort()).toEqual(['msg_dl_a', 'msg_dl_b']);
  });

  it("erase also removes a dead letter's errors that named the verification (the job's failedReason and stacktrace, BullMQ's event stream), and the ledger row", async () => {
    const { prefix, inbox } = fresh();
    const ledgerPrefix = `verikit-admin-redis-ledger:${run}:${queues}:${prefix}:`;
    prefixes.push(ledgerPrefix);
    const ledger = createRedisLedger({ redis: redis(), prefix: ledgerPrefix, persistence: 'ignore', logger: false });
    const subject = { kind: 'kyb' as const, refId: 'biz-named-in-errors' };
    await ledger.track(subject, { nextCheckAt: new Date(Date.now() + 60_000) });
    await inbox.accept(delivery('msg_named', subject.refId));
    const worker = createInboxWorker({
      inbox,
      pollIntervalMs: 25,
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
      logger: false,
      onEvent: async (ctx) => {
        throw new Error(`the service refused ${ctx.subject?.refId}`);
      },
    });
    worker.start();
    try {
      await until(async () => (await inbox.deadLetters()).length === 1, 'the dead letter');
    } finally {
      await worker.stop({ timeoutMs: 5_000 });
    }
    const before = await rawScan(redis(), [prefix, ledgerPrefix]);
    // What the scan reads: hashes (jobs, ledger rows), sorted sets, BullMQ's event stream and its strings, each with its own command.
    expect([...before.types.values()]).toEqual(expect.arrayContaining(['hash', 'zset', 'stream', 'string']));
    const lines = before.text.split('\n').filter((line) => line.includes(`the service refused ${subject.refId}`));
    expect(lines.some((line) => line.startsWith('failedReason='))).toBe(true);
    expect(lines.some((line) => line.startsWith('stacktrace='))).toBe(true);
    expect(lines.some((line) => / event failed /.test(line))).toBe(true);

    expect(await inbox.erase(subject)).toEqual({ erased: 1 });
    expect(await ledger.erase(subject)).toBe(true);
    const after = await rawScan(redis(), [prefix, ledgerPrefix]);
    expect(after.text).not.toContain(subject.refId);
    expect(after.text).not.toContain('Canary');
    expect(await inbox.get('msg_named')).toMatchObject({ state: 'done', payload: 'removed', lastError: null });
  });
}
