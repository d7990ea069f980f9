import { createInboxWorker, createWebhookHandler, type InboxContext, type InboxWorker } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import { Job } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inboxStatsCases } from '../../../test-support/inbox-stats.js';
import { expectHungEventsBounded } from '../../../test-support/inbox-timeout.js';
import { createRedisInbox, type RedisClient, type RedisInbox, type RedisTransaction } from '../src/index.js';
import { jobIdFor } from '../src/job-id.js';
import { BULLMQ_KEY_NAMES } from './bullmq-keys.js';
import { startRoute } from './route.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const run = `${process.pid}-${Date.now().toString(36)}`;
let queues = 0;

const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a run of {@link inboxSuite} keeps its queues: a single server, or a Cluster (every queue in its own slot). */
export interface InboxSuiteTarget {
  /** The client every inbox of the run shares, called once the describe block's own beforeAll has run. */
  redis(): RedisClient;
  /** Removes the keys of the run's queues (each prefix a hash tag, so on a Cluster each queue is on one node). */
  cleanup(prefixes: string[]): Promise<void>;
}

/**
 * The inbox's behaviour on BullMQ, the same on any Redis: accept, lease, complete, fail, retry,
 * dead letters and replays, expired leases, concurrent workers, waking, stop, stats. Call it inside a
 * describe block.
 */
export function inboxSuite(target: InboxSuiteTarget): void {
  let redis: RedisClient;
  const opened: Array<{ close(): Promise<void> } | InboxWorker> = [];
  const prefixes: string[] = [];
  beforeAll(() => {
    redis = target.redis();
  });
  afterAll(async () => {
    for (const thing of opened.reverse()) await ('stop' in thing ? thing.stop({ timeoutMs: 2_000 }) : thing.close());
    await target.cleanup(prefixes);
  });
  /** A fresh queue with its inbox, and an effects hash that onEvent counts into through ctx.sql. */
  function fresh() {
    const prefix = `{verikit-test-${run}-${++queues}}`;
    prefixes.push(prefix);
    const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false });
    opened.push(inbox);
    const effectsKey = `${prefix}:effects`;
    const effects = async () => {
      const all = await redis.hgetall(effectsKey);
      return Object.fromEntries(Object.entries(all).map(([id, n]) => [id, Number(n)]));
    };
    // Not keyed to be idempotent: only applying it with "done" keeps it once.
    const write = (ctx: InboxContext<RedisTransaction>) => ctx.sql.call('HINCRBY', effectsKey, ctx.id, 1);
    const handler = createWebhookHandler({ secret: SECRET, inbox, logger: false });
    const deliver = async (payload: unknown, id?: string) => {
      const signed = signWebhook({ secret: SECRET, payload, id });
      return { id: signed.id, status: (await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status };
    };
    type Options = Parameters<typeof createInboxWorker<RedisTransaction>>[0];
    const worker = (options: Partial<Options> & Pick<Options, 'onEvent'>) => {
      const w = createInboxWorker<RedisTransaction>({
        inbox,
        pollIntervalMs: 100,
        leaseMs: 2_000,
        retry: { baseDelayMs: 10, maxDelayMs: 50 },
        onError: () => {},
        logger: false,
        ...options,
      });
      opened.push(w);
      return w;
    };
    /** The webhook route of an Express app on a loopback port, with this inbox. */
    const route = async () => {
      const running = await startRoute({ secret: SECRET, inbox, logger: false });
      opened.push(running);
      return running;
    };
    /** A started worker whose onEvent fails (one attempt: a dead letter) until `heal()`, then writes its effect. */
    const deadLettering = () => {
      let healthy = false;
      const w = worker({
        retry: { maxAttempts: 1 },
        onEvent: async (ctx) => {
          if (!healthy) throw new Error('downstream down');
          write(ctx);
        },
      });
      w.start();
      const heal = () => {
        healthy = true;
      };
      return Object.assign(w, { heal });
    };
    return { prefix, inbox, effects, write, deliver, worker, route, deadLettering };
  }

  inboxStatsCases(async () => fresh().inbox);

  it('the webhook route adds a job keyed by svix-id once, answering 204 only once Redis has it', async () => {
    const { inbox, deliver } = fresh();
    const first = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'b1' } }, 'msg_once');
    const repeat = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'b1' } }, 'msg_once');
    expect([first.status, repeat.status]).toEqual([204, 204]);
    expect(await inbox.queue.getJobCounts('waiting', 'active', 'delayed')).toMatchObject({ waiting: 1, active: 0, delayed: 0 });
    const job = await inbox.queue.getJob('msg_once');
    expect(job?.data).toMatchObject({ id: 'msg_once', body: '{"type":"kyb.case.status_changed","data":{"refId":"b1"}}' });
  });

  it("a leased event carries when the route accepted it (receivedAt, the job's timestamp), leased directly or fetched by a completion", async () => {
    const { inbox, deliver } = fresh();
    const before = Date.now();
    const first = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'r1' } });
    const second = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'r2' } });
    const after = Date.now();
    const [leased] = await inbox.lease('owner-a', 1, 5_000);
    if (leased === undefined) throw new Error('expected an event');
    // The completion fetches the next job too; the next lease hands that one out.
    expect(await inbox.complete(leased, async () => {})).toBe('ok');
    const [fetched] = await inbox.lease('owner-b', 1, 5_000);
    if (fetched === undefined) throw new Error('expected the second event');
    expect(fetched.owner).toBe(leased.owner); // locked by the completion, with its token
    for (const [event, id] of [
      [leased, first.id],
      [fetched, second.id],
    ] as const) {
      const job = await inbox.queue.getJob(jobIdFor(id));
      expect(event.id).toBe(id);
      expect(event.receivedAt?.getTime()).toBe(job?.timestamp);
      expect(event.receivedAt?.getTime()).toBeGreaterThanOrEqual(before);
      expect(event.receivedAt?.getTime()).toBeLessThanOrEqual(after);
    }
  });

  it('ids BullMQ would refuse (integers, colons) are kept one-to-one and readable back', async () => {
    const { inbox, deliver, worker, write, effects } = fresh();
    const odd = ['12345', 'msg:with:colons', '~tilde', 'msg_plain'];
    for (const id of odd) expect((await deliver({ type: 'kyb.case.status_changed', data: { refId: id } }, id)).status).toBe(204);
    expect(new Set(odd.map(jobIdFor)).size).toBe(odd.length);
    expect(jobIdFor('msg_plain')).toBe('msg_plain');
    worker({ onEvent: write }).start();
    await until(async () => Object.keys(await effects()).length === odd.length, 'every odd id');
    expect(await effects()).toEqual(Object.fromEntries(odd.map((id) => [id, 1])));
    expect(await inbox.queue.getJobCounts('completed')).toEqual({ completed: odd.length });
  });

  it("a delivery whose svix-id is one of BullMQ's key names, or looks like an escaped id, runs once, and so does every later one", async () => {
    const { inbox, worker, write, effects, route } = fresh();
    const { deliver } = await route();
    const lookalikes = [
      '~bWV0YQ',
      jobIdFor('~bWV0YQ'),
      '~~bQBlAHQAYQA',
      '~',
      '~~',
      'msg_',
      'msg_ok',
      '~msg_ok',
      jobIdFor('msg_ok:'),
      '-1',
      '007',
    ];
    const ids = [...BULLMQ_KEY_NAMES, ...lookalikes];
    const answers: Record<string, number> = {};
    for (const id of ids) answers[id] = (await deliver({ type: 'kyb.case.status_changed', data: { refId: id } }, id)).status;
    expect(answers).toEqual(Object.fromEntries(ids.map((id) => [id, 204])));
    const later = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'later' } });
    expect(later.status).toBe(204);
    worker({ onEvent: write }).start();
    const all = [...ids, later.id];
    await until(async () => Object.keys(await effects()).length === all.length, 'every delivery', 15_000);
    expect(await effects()).toEqual(Object.fromEntries(all.map((id) => [id, 1])));
    expect(await inbox.queue.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed')).toEqual({
      completed: all.length,
      failed: 0,
      wait: 0,
      active: 0,
      delayed: 0,
    });
  });

  it('a delivery queued under the job id of versions up to 0.1 is still itself: a repeat adds nothing, and its dead letter replays', async () => {
    const { inbox, effects, route, deadLettering } = fresh();
    const { deliver } = await route();
    const payload = { type: 'kyb.case.status_changed', data: { refId: 'upgraded' } };
    // As those versions accepted it: the svix-id itself as the job id.
    await inbox.queue.add(
      'event',
      { id: 'evt_before', timestamp: Math.floor(Date.now() / 1000), body: JSON.stringify(payload) },
      { jobId: 'evt_before' },
    );
    const w = deadLettering();
    await until(async () => (await w.deadLetters()).length === 1, 'the dead letter');
    expect((await deliver(payload, 'evt_before')).status).toBe(204);
    expect(await inbox.queue.getJobCounts('wait', 'failed')).toEqual({ wait: 0, failed: 1 });
    w.heal();
    expect(await w.replay('evt_before')).toBe(true);
    await until(async () => (await effects()).evt_before === 1, 'the replayed effect');
    expect((await deliver(payload, 'evt_before')).status).toBe(204);
    await sleep(300);
    expect(await effects()).toEqual({ evt_before: 1 });
    expect(await inbox.queue.getJobCounts('wait', 'completed')).toEqual({ wait: 0, completed: 1 });
  });

  it('concurrent replays of one dead letter: one moves it (true), every other answers false, and it runs once', async () => {
    const { effects, route, deadLettering } = fresh();
    const { deliver } = await route();
    const w = deadLettering();
    const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'replayed' } });
    await until(async () => (await w.deadLetters()).length === 1, 'the dead letter');
    w.heal();
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () => w.replay(id)));
    expect(answers.filter((a) => a.status === 'rejected')).toEqual([]);
    const replayed = answers.map((a) => (a as PromiseFulfilledResult<boolean>).value);
    expect(replayed.filter((answer) => answer === true)).toHaveLength(1);
    expect(replayed.filter((answer) => answer === false)).toHaveLength(7);
    await until(async () => (await effects())[id] === 1, 'the replayed effect');
    await sleep(300);
    expect(await effects()).toEqual({ [id]: 1 });
  });

  it('a worker runs onEvent once per event, with ctx (subject, attempt, sql), and the writes land with "done"', async () => {
    const { inbox, deliver, worker, write, effects } = fresh();
    const seen: Array<{ id: string; attempt: number; subject: unknown }> = [];
    worker({
      onEvent: async (ctx) => {
        seen.push({ id: ctx.id, attempt: ctx.attempt, subject: ctx.subject });
        write(ctx);
      },
    }).start();
    const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'biz-9' } });
    await until(async () => (await effects())[id] === 1, 'the effect');
    expect(seen).toEqual([{ id, attempt: 1, subject: { kind: 'kyb', refId: 'biz-9' } }]);
    await until(async () => (await inbox.queue.getJobState(id)) === 'completed', 'the completed job');
    // Kept for the retention, so a repeat within it changes nothing.
    const ttl = await redis.pttl(`${inbox.queue.toKey(id)}:verikit-applied`);
    expect(ttl).toBeGreaterThan(6 * 24 * 3600 * 1000);
  });

  it('a failing onEvent applies none of its writes, is retried with backoff, dead-lettered after maxAttempts (the failed set), and replayed', async () => {
    const { deliver, worker, write, effects, inbox } = fresh();
    let healthy = false;
    const w = worker({
      retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
      onEvent: async (ctx) => {
        write(ctx);
        if (!healthy) throw new Error(`downstream refused attempt ${ctx.attempt}`);
      },
    });
    w.start();
    const { id } = await deliver({ type: 'kyc.session.status_changed', data: { refId: 'u1' } });
    await until(async () => (await inbox.deadLetters()).length === 1, 'the dead letter');
    const [dead] = await w.deadLetters();
    expect(dead).toMatchObject({ id, attempts: 3, lastError: 'Error: downstream refused attempt 3' });
    expect(await inbox.queue.getJobState(id)).toBe('failed');
    expect(await effects()).toEqual({});
    healthy = true;
    expect(await w.replay(id)).toBe(true);
    expect(await w.replay('msg_not_dead')).toBe(false);
    await until(async () => (await effects())[id] === 1, 'the replayed effect');
    expect(await inbox.deadLetters()).toEqual([]);
  });

  it('onEvents that never settle are bounded by eventTimeoutMs: signal aborted, writes not applied, retried, dead-lettered, slots freed', async () => {
    const { prefix, deliver, worker } = fresh();
    const attemptsKey = `${prefix}:attempts`;
    await expectHungEventsBounded<RedisTransaction>({
      deliver,
      worker,
      write: (ctx) => ctx.sql.call('HSET', attemptsKey, ctx.id, ctx.attempt),
      effects: async () => Object.fromEntries(Object.entries(await redis.hgetall(attemptsKey)).map(([id, n]) => [id, Number(n)])),
    });
  });

  it('writes applied just before a crash (no completion) are not applied again: the next attempt finds them and completes', async () => {
    const { deliver, worker, write, effects, inbox } = fresh();
    const runs: number[] = [];
    // The first completion is lost after the writes were applied, as when the process dies right there.
    const real = Job.prototype.moveToCompleted;
    let lose = true;
    Job.prototype.moveToCompleted = function (this: Job, ...args: Parameters<Job['moveToCompleted']>) {
      if (lose) {
        lose = false;
        return Promise.reject(new Error('connection lost before the completion'));
      }
      return real.apply(this, args);
    };
    try {
      worker({
        onEvent: async (ctx) => {
          runs.push(ctx.attempt);
          write(ctx);
        },
      }).start();
      const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'crash' } });
      await until(async () => (await inbox.queue.getJobState(id)) === 'completed', 'the completed job');
      expect(runs).toEqual([1]);
      expect(await effects()).toEqual({ [id]: 1 });
    } finally {
      Job.prototype.moveToCompleted = real;
    }
  });

  it('a worker whose lease ran out applies nothing: the event went back to the queue and its new owner applied it once', async () => {
    const { deliver, write, effects, inbox } = fresh();
    const other = createRedisInbox({ redis, prefix: inbox.queue.opts.prefix as string, persistence: 'ignore', logger: false });
    opened.push(other);
    const { id } = await deliver({ type: 'kyb.case.status_changed', data: { refId: 'late' } });
    const [slow] = await inbox.lease('slow', 1, 300);
    if (slow === undefined) throw new Error('expected an event');
    // BullMQ's stalled check (every leaseMs) moves the unlocked job back to wait.
    await other.lease('warm-up', 1, 300);
    let fast: Awaited<ReturnType<RedisInbox['lease']>>[number] | undefined;
    await until(async () => {
      [fast] = await other.lease('fast', 1, 300);
      return fast !== undefined;
    }, 'the stalled job back in the queue');
    if (fast === undefined) throw new Error('expected an event');
    expect(fast.attempt).toBe(2);
    const ctxOf = (owner: string) => ({ id, sql: undefined, attempt: 1, owner }) as never;
    expect(await other.complete(fast, async (tx) => write({ ...(ctxOf('fast') as object), sql: tx } as never))).toBe('ok');
    expect(await inbox.complete(slow, async (tx) => write({ ...(ctxOf('slow') as object), sql: tx } as never))).toBe('stale');
    expect(await inbox.extend(slow, 1_000)).toBe('stale');
    expect(await effects()).toEqual({ [id]: 1 });
  });

  it('two workers on two inbox instances drain 300 events concurrently, each effect exactly once', async () => {
    const { prefix, deliver, worker, write, effects } = fresh();
    const other = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false });
    opened.push(other);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await deliver({ type: 'kyb.case.status_changed', data: { refId: `b${i}` } })).id);
    worker({ concurrency: 5, onEvent: write }).start();
    worker({ inbox: other, concurrency: 5, onEvent: write }).start();
    await until(async () => Object.keys(await effects()).length >= 300, '300 effects', 30_000);
    await sleep(200);
    const done = await effects();
    expect(Object.keys(done).sort()).toEqual([...ids].sort());
    expect(Object.values(done).every((n) => n === 1)).toBe(true);
  });

  it('an idle worker on another instance is woken by a new job long before its polling interval, burst after burst', async () => {
    const { prefix, deliver, worker, write, effects } = fresh();
    const elsewhere = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false });
    opened.push(elsewhere);
    worker({ inbox: elsewhere, pollIntervalMs: 60_000, onEvent: write }).start();
    await sleep(200);
    let expected = 0;
    for (const burst of [1, 12, 1, 5]) {
      await Promise.all(
        Array.from({ length: burst }, (_, i) => deliver({ type: 'kyb.case.status_changed', data: { refId: `${burst}-${i}` } })),
      );
      expected += burst;
      await until(async () => Object.keys(await effects()).length === expected, `the woken worker (${expected} events)`, 10_000);
    }
  });

  it('stop() lets running work finish and takes nothing new', async () => {
    const { deliver, worker, write, effects } = fresh();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    const w = worker({
      concurrency: 1,
      onEvent: async (ctx) => {
        started.push(ctx.id);
        await gate;
        write(ctx);
      },
    });
    w.start();
    await deliver({ type: 'kyb.case.status_changed', data: { refId: 'slow' } });
    await until(async () => started.length === 1, 'the first event to start');
    let stoppedYet = false;
    const stopped = w.stop({ timeoutMs: 5_000 }).then(() => {
      stoppedYet = true;
    });
    await sleep(100);
    expect(stoppedYet).toBe(false);
    release();
    await stopped;
    expect(Object.keys(await effects())).toHaveLength(1);
    await deliver({ type: 'kyb.case.status_changed', data: { refId: 'after' } });
    await sleep(300);
    expect(started).toHaveLength(1);
  });
}
