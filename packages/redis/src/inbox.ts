import {
  type AcceptResult,
  createPayloadSealer,
  type DeadLetter,
  type DeadLetterQuery,
  type EncryptionOptions,
  type InboxAdmin,
  type InboxDelivery,
  type InboxEngine,
  type InboxEvent,
  type InboxStats,
  type LeaseOutcome,
  openUnsealed,
  PayloadSealError,
} from '@verikit/core';
import { Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import { closeBull } from './bull-close.js';
import { answerWhen, LOST, NOT_A_JOB } from './bull-errors.js';
import { isCluster, queueHashTag } from './cluster.js';
import { createInboxAdmin, type EventData, type RedisRetentionOptions, resolveRetention } from './inbox-admin.js';
import { jobIdFor, legacyJobIdFor } from './job-id.js';
import { checkPrefix, type RedisBaseOptions, type RedisClient, redisTimeouts, resolveBaseOptions } from './options.js';
import type { PersistenceReport } from './persistence.js';
import { redactingErrors, withoutCommandArgs } from './redact.js';
import { defineScript } from './scripts.js';
import { COMMIT, commitScript, RecordedTransaction, type RedisTransaction } from './transaction.js';

/** Options of {@link createRedisInbox}. */
export interface RedisInboxOptions extends RedisBaseOptions, RedisRetentionOptions {
  /** The BullMQ queue's name (default `verikit-inbox`). */
  queueName?: string;
  /** BullMQ's key prefix (default `{verikit}`): the hash tag keeps the whole queue in one Redis Cluster slot, as BullMQ asks. */
  prefix?: string;
  /**
   * Seals every stored body with AES-256-GCM (`keys[0]` seals, any key opens, so keys rotate; see
   * `reseal`), bound to its event id. Without it bodies are stored as received, and a sealed one found is unreadable.
   */
  encryption?: EncryptionOptions;
}

/**
 * An inbox on BullMQ: `accept` for the webhook route, the rest for `createInboxWorker`, and the
 * operator's {@link InboxAdmin}. `ctx.sql` is a {@link RedisTransaction}.
 */
export interface RedisInbox extends InboxEngine<RedisTransaction>, InboxAdmin {
  /** The BullMQ queue itself, for a dashboard (Bull Board) or metrics; add nothing to it yourself. */
  readonly queue: Queue;
  /** Reads the server's persistence settings now: logs or refuses per the `persistence` option. Call it at startup. */
  checkPersistence(): Promise<PersistenceReport>;
  /** Dead letters, oldest received first, a page at a time (`since`, `after`: the last id of the page before). */
  deadLetters(options?: DeadLetterQuery): Promise<DeadLetter[]>;
  /**
   * Removes the bodies of events done for `payloadRetentionMs` and purges dead letters received more
   * than `deadLetterRetentionMs` ago, in batches; answers how many bodies went. An inbox that leases
   * (the worker's) runs it every `pruneIntervalMs`.
   */
  prune(): Promise<number>;
  /**
   * Closes the queue and the worker's connections (your `redis` client stays open). Stop the
   * worker first (`worker.stop()`); an event this inbox had fetched but not started is retried
   * elsewhere once its lease runs out.
   */
  close(): Promise<void>;
}

/** A failed attempt as BullMQ's backoff strategy receives it: the worker decided the delay already. */
class AttemptFailed extends Error {
  override name = 'AttemptFailed';
  constructor(
    message: string,
    readonly retryInMs: number,
  ) {
    super(message);
  }
}

// BullMQ's own attempt limit never ends an event: the worker's `retry.maxAttempts` does, by failing
// the job with an UnrecoverableError, which moves it to BullMQ's failed set: the dead letters.
const UNLIMITED_ATTEMPTS = 2 ** 31 - 1;
// A job whose lease ran out is moved back to wait however often that happens, as a Postgres lease would be.
const UNLIMITED_STALLS = 2 ** 31 - 1;

/**
 * The inbox's counts in one atomic read: pending jobs are those waiting (or paused), active, prioritized
 * or delayed (the delayed set holds only retries waiting out their backoff: the route adds no delay),
 * dead letters the failed set; and the oldest pending job's timestamp, read from each pending job's
 * hash (the order of BullMQ's lists is not the order of acceptance: a retried job rejoins the queue).
 * KEYS: the queue's {@link STATS_KEYS}. ARGV[1]: the prefix of a job's key.
 */
const STATS_KEYS = ['wait', 'paused', 'active', 'prioritized', 'delayed', 'failed'];
const STATS = `
local pending, oldest = 0, -1
local function consider(id)
  pending = pending + 1
  local ts = tonumber(redis.call('HGET', ARGV[1] .. id, 'timestamp'))
  if ts and (oldest < 0 or ts < oldest) then oldest = ts end
end
for i = 1, 3 do
  for _, id in ipairs(redis.call('LRANGE', KEYS[i], 0, -1)) do
    -- "0:..." entries are markers older BullMQ versions put in the wait list, no jobs.
    if string.sub(id, 1, 2) ~= '0:' then consider(id) end
  end
end
for i = 4, 5 do
  for _, id in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do consider(id) end
end
return { pending, redis.call('ZCARD', KEYS[5]), redis.call('ZCARD', KEYS[6]), oldest }
`;

const heldOrStale = (action: () => Promise<unknown>): Promise<LeaseOutcome> =>
  action().then(() => 'ok' as const, answerWhen(LOST, 'stale' as const));

/** A connection of the worker's own, as BullMQ's workers need them: commands wait for a reconnection instead of failing. */
function workerConnection(redis: RedisClient): RedisClient {
  if (isCluster(redis)) {
    return redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, maxRetriesPerRequest: null } });
  }
  return redis.duplicate({ maxRetriesPerRequest: null });
}

/**
 * The spec's "store and enqueue once" on Redis, with BullMQ as the queue: `accept` adds a job keyed
 * by the `svix-id` (a repeat changes nothing while the job is kept: done ones for
 * `retentionMs`, dead-lettered ones until replayed or removed). `createInboxWorker` drains it over a
 * BullMQ `Worker` fetching jobs by hand: leases are BullMQ's job locks, retries its delayed set,
 * dead letters its failed set. Writes `onEvent` makes through `ctx.sql` are applied exactly once.
 * @example
 * const inbox = createRedisInbox({ redis: new Redis(process.env.REDIS_URL) });
 * app.use('/verikit', verikitRouter({ webhook: { secret, inbox } }));
 * createInboxWorker({ inbox, client, onEvent: async (ctx) => { ctx.sql.call('SET', `seen:${ctx.id}`, '1') } }).start();
 */
export function createRedisInbox(options: RedisInboxOptions): RedisInbox {
  const { redis, retentionMs, logger, persistence, timeoutMs } = resolveBaseOptions(options, 'createRedisInbox');
  // One interval sweeps the deadlines of this instance's calls: a timer per call cost the accept route about a microsecond.
  const bounded = redisTimeouts(timeoutMs);
  const retention = resolveRetention(options);
  const sealer = createPayloadSealer(options.encryption);
  const open = async (stored: string, id: string): Promise<string> =>
    sealer === undefined ? openUnsealed(stored) : sealer.open(stored, id);
  const queueName = checkPrefix(options.queueName ?? 'verikit-inbox', 'queueName');
  const prefix = checkPrefix(options.prefix ?? '{verikit}', 'prefix');
  const hashTag = queueHashTag(redis, prefix, queueName);
  const onBullError = (error: unknown) =>
    logger.warn({ err: withoutCommandArgs(error) }, 'inbox on Redis: connection error (BullMQ reconnects)');
  const queue = new Queue<EventData>(queueName, {
    connection: redis,
    prefix,
    defaultJobOptions: {
      attempts: UNLIMITED_ATTEMPTS,
      backoff: { type: 'verikit' },
      removeOnComplete: { age: Math.ceil(retentionMs / 1000) },
      removeOnFail: false,
    },
  });
  queue.on('error', onBullError);

  const statsScript = defineScript(redis, STATS, 6);
  let worker: Worker<EventData> | undefined;
  let workerRedis: RedisClient | undefined;
  let commit: ReturnType<typeof defineScript> | undefined;
  /** Jobs fetched and locked by this inbox, by their lock token, until completed or failed. */
  const held = new Map<string, Job<EventData>>();
  /** Jobs a blocking wait fetched, handed out by the next lease. */
  const fetched: InboxEvent[] = [];
  let waiting: Promise<void> | undefined;
  let waits = 0;
  let closing = false;
  let markClosed!: () => void;
  /** Settles when close() is called. */
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const workerId = crypto.randomUUID();

  const bullWorker = (leaseMs: number): Worker<EventData> => {
    if (worker !== undefined) return worker;
    startPruning();
    workerRedis = workerConnection(redis);
    commit = defineScript(workerRedis, COMMIT, 2);
    worker = new Worker<EventData>(queueName, null, {
      connection: workerRedis,
      prefix,
      lockDuration: leaseMs,
      stalledInterval: leaseMs,
      maxStalledCount: UNLIMITED_STALLS,
      drainDelay: 1,
      settings: { backoffStrategy: (_attempts, _type, error) => (error instanceof AttemptFailed ? error.retryInMs : 0) },
    });
    worker.on('error', onBullError);
    // Jobs whose lease ran out (a worker died) go back to wait: BullMQ's stalled check, run by hand here.
    worker.startStalledCheckTimer().catch(onBullError);
    return worker;
  };

  /**
   * The event of a job just fetched and locked with `token`, its body opened (or `unreadable`), or
   * undefined for a job whose body was removed: verikit never queues one again, but a completed job
   * retried by hand (Bull Board's retry, say) would be; it is completed at once, never run (running
   * it would fetch and store the erased data again).
   */
  const take = async (job: Job<EventData>, token: string): Promise<InboxEvent | undefined> => {
    const { id, timestamp, body } = job.data;
    if (body === undefined) {
      await job.moveToCompleted(null, token, false).catch(answerWhen(LOST, undefined));
      return undefined;
    }
    held.set(token, job);
    // BullMQ stamps a job with the clock of the instance that accepted it, not Redis's TIME (the
    // ledger's clock): the two agree as far as the machines' clocks do (NTP).
    const event: InboxEvent = {
      id,
      timestamp,
      body,
      owner: token,
      attempt: job.attemptsStarted,
      receivedAt: new Date(Number(job.timestamp)),
    };
    try {
      event.body = await open(body, id);
    } catch (error) {
      if (!(error instanceof PayloadSealError)) throw error;
      // The worker fails this attempt with the error and never runs it; the stored value stays as it is.
      event.body = '';
      event.unreadable = error;
    }
    return event;
  };

  const keysOf = (job: Job<EventData>) => {
    const key = queue.toKey(job.id as string);
    return { lock: `${key}:lock`, applied: `${key}:verikit-applied` };
  };

  /** The job of delivery `id` where versions up to 0.1 stored it (its own id, unless BullMQ refused that), if it is still kept. */
  const legacyJob = async (id: string): Promise<Job<EventData> | undefined> => {
    const legacy = legacyJobIdFor(id);
    if (legacy === undefined) return undefined;
    // Under an id such as `meta` or `wait`, they wrote into (or could not write beside) the queue's own key.
    const job = (await queue.getJob(legacy).catch(answerWhen(NOT_A_JOB, undefined))) as Job<EventData> | undefined;
    return job?.data?.id === id ? job : undefined;
  };
  /** The job of delivery `id`: under its job id, else where versions up to 0.1 stored it. */
  const jobOf = async (id: string): Promise<Job<EventData> | undefined> =>
    ((await queue.getJob(jobIdFor(id))) as Job<EventData> | undefined) ?? legacyJob(id);

  const admin = createInboxAdmin({ queue, redis, retention, sealer, open, jobOf });
  let pruning: ReturnType<typeof setInterval> | undefined;
  let pruneRound: Promise<unknown> | undefined;
  /** The background prune, on the inbox that leases (a route-only instance has nothing of its own to prune). */
  const startPruning = () => {
    if (pruning !== undefined || retention.pruneIntervalMs === 0) return;
    pruning = setInterval(() => {
      pruneRound ??= admin
        .prune()
        .catch((error: unknown) =>
          logger.warn({ err: withoutCommandArgs(error) }, 'inbox on Redis: pruning payloads failed; the next round tries again'),
        )
        .finally(() => {
          pruneRound = undefined;
        });
    }, retention.pruneIntervalMs);
    pruning.unref?.();
  };

  return redactingErrors<RedisInbox>({
    queue,
    checkPersistence: persistence.check,
    ...admin,

    async accept(delivery: InboxDelivery): Promise<AcceptResult> {
      const body = sealer === undefined ? delivery.body : await sealer.seal(delivery.body, delivery.id);
      // Written in this order, the body last: the pruning scripts cut it off there (inbox-scripts.ts).
      const data: EventData = { id: delivery.id, timestamp: delivery.timestamp, body };
      const jobId = jobIdFor(delivery.id);
      const add = () => queue.add('event', data, { jobId });
      // A repeat of a delivery accepted by versions up to 0.1, under another job id: still a repeat. Svix's
      // ids, the only ones kept as they are, had no other id then: they go straight to the add, without
      // a lookup's hop or a second reading of the id on the hot path.
      const adding = persistence.before(() =>
        jobId === delivery.id || legacyJobIdFor(delivery.id) === undefined
          ? add()
          : legacyJob(delivery.id).then((legacy) => (legacy === undefined ? add() : legacy)),
      );
      await bounded(adding, 'the accept');
      // BullMQ's add does not say whether the id was new: a repeat is answered the same, and changes nothing.
      return 'accepted';
    },

    async lease(owner: string, limit: number, leaseMs: number): Promise<InboxEvent[]> {
      if (closing) return [];
      const bull = bullWorker(leaseMs);
      const leasing = (async () => {
        const events = fetched.splice(0, limit);
        while (events.length < limit) {
          const token = `${owner}:${events.length}`;
          const job = await bull.getNextJob(token, { block: false });
          if (job === undefined) break;
          const event = await take(job, token);
          if (event !== undefined) events.push(event);
        }
        return events;
      })();
      // A lease waits for a Redis that is down, as BullMQ's workers do, but not past close(): the worker's stop() would
      // wait its whole timeout. A job fetched later is never run here, and goes back to wait when its lock runs out.
      return Promise.race([leasing, closed.then((): InboxEvent[] => [])]);
    },

    async extend(event: InboxEvent, leaseMs: number): Promise<LeaseOutcome> {
      const job = held.get(event.owner);
      if (job === undefined) return 'stale';
      return (await job.extendLock(event.owner, leaseMs)) === 1 ? 'ok' : 'stale';
    },

    async complete(event: InboxEvent, work: (tx: RedisTransaction) => Promise<void>): Promise<LeaseOutcome> {
      const job = held.get(event.owner);
      if (job === undefined || workerRedis === undefined || commit === undefined) return 'stale';
      const keys = keysOf(job);
      // Only a job leased before can have had its writes applied by a worker that died before completing it.
      const applied = event.attempt > 1 && (await workerRedis.exists(keys.applied)) === 1;
      if (!applied) {
        const tx = new RecordedTransaction();
        await work(tx);
        if (tx.commands.length > 0 && (await commitScript(commit, keys, event.owner, retentionMs, tx, hashTag)) === 'stale') {
          held.delete(event.owner);
          return 'stale';
        }
      }
      // Held until BullMQ has it: a completion that fails (a lost connection) is then recorded by fail() and retried at once.
      // Like BullMQ's own workers, the completion also fetches the next job (locked with the same token), for the next lease.
      let next: unknown;
      const outcome = await heldOrStale(async () => {
        // The body index has the job before BullMQ calls it done: sent first, on the connection the completion goes by.
        [, next] = await Promise.all([
          workerRedis?.zadd(queue.toKey('verikit:bodies'), Date.now(), job.id as string),
          job.moveToCompleted(null, event.owner, !closing),
        ]);
      });
      held.delete(event.owner);
      const [data, id] = Array.isArray(next) ? next : [];
      if (data && worker !== undefined) {
        const nextJob = Job.fromJSON<EventData>(worker, data, id);
        nextJob.token = event.owner;
        // Not taken now, it is not lost: its lock runs out and BullMQ's stalled check queues it again.
        const taken = await take(nextJob, event.owner).catch(onBullError);
        if (taken) fetched.push(taken);
      }
      return outcome;
    },

    async fail(event: InboxEvent, failure: { error: string; retryInMs: number | null }): Promise<LeaseOutcome> {
      const job = held.get(event.owner);
      if (job === undefined) return 'stale';
      held.delete(event.owner);
      // An UnrecoverableError is moved to the failed set at once, whatever attempts BullMQ has left.
      if (failure.retryInMs !== null)
        return heldOrStale(() => job.moveToFailed(new AttemptFailed(failure.error, failure.retryInMs as number), event.owner, false));
      // A dead letter joins the index operators page through by receipt, sent just ahead of the move, as for a completion.
      return heldOrStale(() =>
        Promise.all([
          workerRedis?.zadd(queue.toKey('verikit:dead'), job.timestamp, job.id as string),
          job.moveToFailed(new UnrecoverableError(failure.error), event.owner, false),
        ]),
      );
    },

    async waitForWork(signal: AbortSignal, maxWaitMs: number): Promise<void> {
      if (signal.aborted || fetched.length > 0 || worker === undefined) return;
      const bull = worker;
      // One blocking fetch at a time (BullMQ's marker wait); what it brings is handed out by the next lease.
      if (waiting === undefined) {
        const token = `${workerId}:wait:${++waits}`;
        waiting = bull
          .getNextJob(token, { block: true })
          .then(async (job) => {
            if (job === undefined) return;
            // The worker that waited has stopped meanwhile: back to wait at once, for a running worker, rather than when its lock runs out.
            if (signal.aborted) return void (await job.moveToWait(token).catch(onBullError));
            const event = await take(job, token);
            if (event !== undefined) fetched.push(event);
          })
          .finally(() => {
            waiting = undefined;
          });
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        waiting,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, maxWaitMs);
          onAbort = () => resolve();
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]).finally(() => {
        clearTimeout(timer);
        if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
      });
    },

    async stats(): Promise<InboxStats> {
      const reading = statsScript(
        STATS_KEYS.map((state) => queue.toKey(state)),
        [queue.toKey('')],
      );
      const [pending, retrying, dead, oldest] = (await bounded(reading, 'reading stats')) as number[];
      const oldestAt = oldest === undefined || oldest < 0 ? null : oldest;
      return {
        pending: pending ?? 0,
        retrying: retrying ?? 0,
        dead: dead ?? 0,
        oldestPendingAt: oldestAt === null ? null : new Date(oldestAt),
        // A job's timestamp is the clock of the instance that accepted it (as receivedAt is): aged on this instance's clock.
        oldestPendingAgeMs: oldestAt === null ? null : Math.max(0, Date.now() - oldestAt),
      };
    },

    async close(): Promise<void> {
      closing = true;
      markClosed();
      clearInterval(pruning);
      await pruneRound;
      // Jobs fetched for a lease that never came go back to wait at once, rather than when their lock runs out.
      for (const event of fetched.splice(0))
        await held
          .get(event.owner)
          ?.moveToWait(event.owner)
          .catch(() => {});
      if (worker !== undefined) await closeBull(worker);
      workerRedis?.disconnect();
      // BullMQ reads the server's INFO as a queue opens (on a Cluster perhaps from a node still connecting) and its
      // close() does not wait for that read: were the app to quit its client meanwhile, the read's failure would be an
      // 'error' nobody hears, ending the process. Bounded, so a Redis that is down cannot hold close() up.
      await bounded(queue.waitUntilReady(), 'the queue opening').catch(() => {});
      await closeBull(queue);
    },
  });
}
