import {
  ConfigurationError,
  checkLedgerKey,
  type DeadLetter,
  type DeadLetterQuery,
  defaultIdentify,
  type EventSubject,
  type IdentifyEvent,
  type InboxAdmin,
  type InboxEraseResult,
  type InboxRecord,
  InvalidArgumentError,
  PayloadSealError,
  type PayloadSealer,
  type ResealResult,
} from '@verikit/core';
import type { Job, Queue } from 'bullmq';
import { answerWhen, NOT_FAILED } from './bull-errors.js';
import { BACKFILL, DEAD_PAGE, ERASE, INBOX_KEYS, PRUNE, PURGE_DEAD, READ_DATA, RESEAL, WITH_BODIES } from './inbox-scripts.js';
import { deliveryIdOf, jobIdFor, legacyJobIdFor } from './job-id.js';
import type { RedisClient } from './options.js';
import { defineScript } from './scripts.js';

/** What a job carries: the delivery as the route verified it; `body` is gone once payload retention or an erasure removed it. */
export interface EventData {
  id: string;
  timestamp: number;
  body?: string;
}

/** The inbox's options about what it keeps and for how long, checked at creation. */
export interface RedisRetentionOptions {
  /** How long a done event keeps its body, in ms (default 1 hour; 0: removed at the first prune once done). Its id stays for `retentionMs`. */
  payloadRetentionMs?: number;
  /** The longest a dead letter keeps its body, in ms from when it was received (default 30 days); past it, it is purged as `purgeDead` does. */
  deadLetterRetentionMs?: number;
  /** How often the worker's inbox prunes bodies past their retention, in ms (default 60 000; 0: never, call `prune()` yourself). */
  pruneIntervalMs?: number;
  /** Jobs one pruning script looks at (default 100), so no script holds Redis for long however big the bodies. */
  pruneBatchSize?: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Jobs read and written per round trip by erase and reseal. */
const BATCH = 100;
/** The most batches one prune() runs: a busy queue is caught up over several prunes. */
const MAX_PRUNE_ROUNDS = 100;

const wholeMs = (value: unknown, name: string, fallback: number, least: number): number => {
  const ms = value === undefined ? fallback : value;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < least)
    throw new ConfigurationError(name, `${name} must be a whole number of ms from ${least}`);
  return ms;
};

/** The retention options with their defaults; a wrong one is a ConfigurationError at creation. */
export function resolveRetention(options: RedisRetentionOptions): Required<RedisRetentionOptions> {
  return {
    payloadRetentionMs: wholeMs(options.payloadRetentionMs, 'payloadRetentionMs', HOUR_MS, 0),
    deadLetterRetentionMs: wholeMs(options.deadLetterRetentionMs, 'deadLetterRetentionMs', 30 * DAY_MS, 1),
    pruneIntervalMs: wholeMs(options.pruneIntervalMs, 'pruneIntervalMs', 60_000, 0),
    pruneBatchSize: wholeMs(options.pruneBatchSize, 'pruneBatchSize', 100, 1),
  };
}

/** What the operator side needs from the inbox. */
export interface InboxAdminDeps {
  queue: Queue<EventData>;
  redis: RedisClient;
  retention: Required<RedisRetentionOptions>;
  /** The configured sealer, or undefined without `encryption`. */
  sealer: PayloadSealer | undefined;
  /** Opens a stored body (sealed or plain) of the event `id`, or throws a PayloadSealError. */
  open(stored: string, id: string): Promise<string>;
  /** The job of a delivery id, where this version or an older one queued it. */
  jobOf(id: string): Promise<Job<EventData> | undefined>;
}

/** The inbox's operator side ({@link InboxAdmin}) and its payload pruning, over BullMQ's keys and verikit's indexes beside them. */
export function createInboxAdmin(deps: InboxAdminDeps): InboxAdmin & { prune(): Promise<number> } {
  const { queue, redis, retention, sealer, open, jobOf } = deps;
  const keys = INBOX_KEYS.map((name) => queue.toKey(name));
  const jobPrefix = queue.toKey('');
  const script = (lua: string) => {
    const run = defineScript(redis, lua, keys.length);
    return (...args: Array<string | number>) => run(keys, [jobPrefix, ...args.map(String)]);
  };
  const scripts = {
    prune: script(PRUNE),
    purgeDead: script(PURGE_DEAD),
    deadPage: script(DEAD_PAGE),
    backfill: script(BACKFILL),
    withBodies: script(WITH_BODIES),
    readData: script(READ_DATA),
    erase: script(ERASE),
    reseal: script(RESEAL),
  };

  /** Indexes the bodies of jobs completed before this version, once per queue, so nothing escapes retention, erasure or reseal. */
  const backfill = async () => {
    while ((await scripts.backfill(BATCH)) !== 1);
  };

  /**
   * Each job that may hold a body, a batch at a time, with its delivery as stored (jobs without a
   * body left out). The ids are read in one step, so a job moving between states meanwhile is still seen.
   */
  async function* storedBodies(): AsyncGenerator<Array<{ jobId: string; raw: string; data: EventData & { body: string } }>> {
    await backfill();
    const ids = [...new Set((await scripts.withBodies()) as string[])];
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH);
      const raws = (await scripts.readData(...batch)) as Array<string | null>;
      const found = [];
      for (const [n, raw] of raws.entries()) {
        if (raw === null) continue;
        const data = JSON.parse(raw) as EventData;
        if (typeof data.body === 'string') found.push({ jobId: batch[n] as string, raw, data: data as EventData & { body: string } });
      }
      yield found;
    }
  }

  /** Purges the dead letters received before `before` (ms), a batch per script; answers how many. */
  const purgeBefore = async (before: number, batch: number): Promise<number> => {
    let purged = 0;
    for (;;) {
      const [looked, n] = (await scripts.purgeDead(Date.now(), before, batch)) as number[];
      purged += n ?? 0;
      if ((looked ?? 0) < batch) return purged;
    }
  };

  const subjectOf = (text: string, identify: IdentifyEvent): EventSubject | null => {
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return null;
    }
    return identify(event);
  };

  return {
    async prune(): Promise<number> {
      await backfill();
      const { payloadRetentionMs, deadLetterRetentionMs, pruneBatchSize } = retention;
      let removed = 0;
      for (let round = 0; round < MAX_PRUNE_ROUNDS; round++) {
        const now = Date.now();
        const [looked, stripped] = (await scripts.prune(now, now - payloadRetentionMs, pruneBatchSize)) as number[];
        removed += stripped ?? 0;
        if ((looked ?? 0) < pruneBatchSize) break;
      }
      return removed + (await purgeBefore(Date.now() - deadLetterRetentionMs, pruneBatchSize));
    },

    async get(id: string, { withPayload = false } = {}): Promise<InboxRecord | undefined> {
      if (typeof id !== 'string' || id === '') throw new InvalidArgumentError('get needs an event id');
      const job = await jobOf(id);
      if (job === undefined) return undefined;
      const state = await job.getState();
      const done = state === 'completed' || state === 'failed';
      const kept = typeof job.data.body === 'string';
      return {
        id,
        state: state === 'completed' ? 'done' : state === 'failed' ? 'dead' : 'pending',
        attempts: job.attemptsStarted ?? 0,
        lastError: job.failedReason || null,
        receivedAt: new Date(job.timestamp),
        finishedAt: done && job.finishedOn !== undefined ? new Date(job.finishedOn) : null,
        payload: kept ? 'kept' : 'removed',
        ...(withPayload && kept ? { body: await open(job.data.body as string, job.data.id) } : {}),
      };
    },

    async deadLetters({ limit = 100, since, after }: DeadLetterQuery = {}): Promise<DeadLetter[]> {
      if (!Number.isInteger(limit) || limit < 1) throw new InvalidArgumentError('limit must be a whole number from 1');
      if (since !== undefined && (!(since instanceof Date) || Number.isNaN(since.getTime())))
        throw new InvalidArgumentError('since must be a valid Date');
      if (after !== undefined && (typeof after !== 'string' || after === '')) throw new InvalidArgumentError('after must be an event id');
      const page = await scripts.deadPage(
        limit,
        since?.getTime() ?? '',
        after === undefined ? '' : jobIdFor(after),
        after === undefined ? '' : (legacyJobIdFor(after) ?? ''),
      );
      if (page === 'unknown-after')
        throw new InvalidArgumentError('after names no event this inbox has: page on from the last id of the previous page');
      return (page as Array<[string, string, string, string | null]>).map(([jobId, received, attempts, lastError]) => ({
        id: deliveryIdOf(jobId),
        attempts: Number(attempts),
        lastError: lastError ?? null,
        receivedAt: new Date(Number(received)),
      }));
    },

    async replay(id: string): Promise<boolean> {
      const job = await jobOf(id);
      if (job === undefined) return false;
      // Atomic in BullMQ: of concurrent replays of one dead letter, one moves it and the others are told it is not failed.
      const replayed = await job
        .retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true })
        .then(() => true, answerWhen(NOT_FAILED, false));
      if (replayed) await redis.zrem(queue.toKey('verikit:dead'), job.id as string);
      return replayed;
    },

    async purgeDead({ before }: { before: Date }): Promise<number> {
      if (!(before instanceof Date) || Number.isNaN(before.getTime()))
        throw new InvalidArgumentError('purgeDead needs before, a valid Date');
      return purgeBefore(before.getTime(), BATCH);
    },

    async erase(subject: EventSubject, { identify = defaultIdentify }: { identify?: IdentifyEvent } = {}): Promise<InboxEraseResult> {
      const { kind, refId } = checkLedgerKey(subject);
      let erased = 0;
      let unopened: PayloadSealError | undefined;
      for await (const batch of storedBodies()) {
        const about: string[] = [];
        for (const { jobId, data } of batch) {
          let text: string;
          try {
            text = await open(data.body, data.id);
          } catch (error) {
            // Erase the rest, then say so: this body might be about the subject.
            if (!(error instanceof PayloadSealError)) throw error;
            unopened ??= error;
            continue;
          }
          const found = subjectOf(text, identify);
          if (found?.kind === kind && found.refId === refId) about.push(jobId);
        }
        if (about.length > 0) erased += Number(await scripts.erase(Date.now(), ...about));
      }
      if (unopened !== undefined) throw unopened;
      return { erased };
    },

    async reseal({ onProgress }: { onProgress?: (resealed: number) => void } = {}): Promise<ResealResult> {
      if (sealer === undefined)
        throw new ConfigurationError('encryption', 'reseal needs the encryption option: the keys to seal with, the current one first');
      let resealed = 0;
      let unopened: PayloadSealError | undefined;
      for await (const batch of storedBodies()) {
        const writes: string[] = [];
        for (const { jobId, raw, data } of batch) {
          if (!sealer.needsReseal(data.body)) continue;
          try {
            const body = await sealer.seal(await open(data.body, data.id), data.id);
            writes.push(jobId, raw, JSON.stringify({ id: data.id, timestamp: data.timestamp, body }));
          } catch (error) {
            if (!(error instanceof PayloadSealError)) throw error;
            unopened ??= error;
          }
        }
        if (writes.length === 0) continue;
        resealed += Number(await scripts.reseal(...writes));
        onProgress?.(resealed);
      }
      if (unopened !== undefined) throw unopened;
      return { resealed };
    },
  };
}
