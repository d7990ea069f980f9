import { type Logger, VerikitError } from '@verikit/core';
import type { Cluster, Redis } from 'ioredis';
import { isCluster } from './cluster.js';
import { withoutCommandArgs } from './redact.js';

/** What to do when the Redis server can lose what verikit wrote: log it, refuse to work, or say nothing. */
export type PersistencePolicy = 'warn' | 'require' | 'ignore';

/** The server's settings that decide what a restart or a crash loses, and what is wrong with them. */
export interface PersistenceReport {
  /** `appendonly yes` (INFO `aof_enabled`). */
  appendonly: boolean;
  /** `appendfsync` (`always`, `everysec`, `no`); undefined where `CONFIG GET` is refused (managed services). */
  appendfsync: string | undefined;
  /** `maxmemory-policy` (INFO `maxmemory_policy`); undefined when the server does not say. */
  maxmemoryPolicy: string | undefined;
  /** Each setting that can lose a handled id, a lease or a queued event, as a sentence naming the fix. Empty when none. */
  problems: string[];
}

/** The Redis server can lose acknowledged writes (see `problems`), and `persistence: 'require'` was asked for. */
export class RedisNotDurableError extends VerikitError {
  override name = 'RedisNotDurableError';
  /** What is wrong, one sentence each. */
  readonly problems: string[];

  constructor(problems: string[]) {
    super('not_durable', `the Redis server can lose what verikit writes: ${problems.join('; ')}`);
    this.problems = problems;
  }
}

function infoField(info: string, field: string): string | undefined {
  const match = new RegExp(`^${field}:(.*)$`, 'm').exec(info);
  return match?.[1]?.trim();
}

/** Reads one server's persistence and eviction settings and says what each can lose. */
async function readServer(redis: Redis): Promise<PersistenceReport> {
  const [persistence, memory] = await Promise.all([redis.info('persistence'), redis.info('memory')]);
  const appendonly = infoField(persistence, 'aof_enabled') === '1';
  // CONFIG is often disabled on managed services; INFO is not.
  const appendfsync = await redis
    .config('GET', 'appendfsync')
    .then((reply) => (Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : undefined))
    .catch(() => undefined);
  const maxmemoryPolicy = infoField(memory, 'maxmemory_policy');
  const problems: string[] = [];
  if (!appendonly) {
    problems.push(
      'appendonly is off: a restart loses every handled id, lease and queued event written since the last RDB snapshot (all of them without snapshots); set appendonly yes and appendfsync everysec',
    );
  } else if (appendfsync === 'no') {
    problems.push(
      'appendfsync is no: the operating system decides when writes reach the disk, so a machine crash can lose about the last 30 s; set appendfsync everysec (at most about 1 s) or always',
    );
  }
  if (maxmemoryPolicy !== undefined && maxmemoryPolicy !== 'noeviction') {
    problems.push(
      `maxmemory-policy is ${maxmemoryPolicy}: under memory pressure Redis may evict handled ids (a repeat then runs onEvent again) and queued events (lost); set noeviction`,
    );
  }
  return { appendonly, appendfsync, maxmemoryPolicy, problems };
}

/** `appendfsync` values from the one that can lose the most. */
const FSYNC_WEAKEST_FIRST = ['no', 'everysec', 'always'];

/**
 * Reads the server's persistence and eviction settings and says what each can lose. On a Cluster,
 * every master's (INFO without a key would reach one node at random, and each master holds the
 * writes of its own slots): `appendonly` only when every master has it, the weakest `appendfsync`
 * and the first eviction policy other than `noeviction`, and each problem naming the masters it is
 * found on.
 */
export async function readPersistence(redis: Redis | Cluster): Promise<PersistenceReport> {
  if (!isCluster(redis)) return readServer(redis);
  // The masters are known once the client has read the slots: a first command makes it.
  if (redis.nodes('master').length === 0) await redis.ping();
  const masters = redis.nodes('master');
  const reports = await Promise.all(masters.map(readServer));
  const foundOn = new Map<string, string[]>();
  reports.forEach((report, i) => {
    const { host, port } = (masters[i] as Redis).options;
    for (const problem of report.problems) foundOn.set(problem, [...(foundOn.get(problem) ?? []), `${host}:${port}`]);
  });
  const fsyncs = reports.map((report) => report.appendfsync);
  return {
    appendonly: reports.every((report) => report.appendonly),
    appendfsync: FSYNC_WEAKEST_FIRST.find((value) => fsyncs.includes(value)) ?? fsyncs.find((value) => value !== undefined),
    maxmemoryPolicy: (reports.find((report) => report.maxmemoryPolicy !== 'noeviction') ?? reports[0])?.maxmemoryPolicy,
    problems: [...foundOn].map(([problem, nodes]) => `${problem} (on ${nodes.length === 1 ? 'master' : 'masters'} ${nodes.join(', ')})`),
  };
}

/** Checks the server once, as the policy says, before verikit relies on it. */
export interface PersistenceGuard {
  /** Reads the settings now; logs (`warn`) or throws {@link RedisNotDurableError} (`require`) when something can be lost. */
  check(): Promise<PersistenceReport>;
  /**
   * Runs `call` once the policy allows: under `require` after a passed check (rejecting with the
   * refusal otherwise); under `warn` at once, with one check started in the background; under
   * `ignore` at once. Once a check has passed, `call` runs with no wait.
   */
  before<T>(call: () => Promise<T>): Promise<T>;
}

/** How long a refusal stands before the server is read again, so fixing it heals without a restart. */
const RECHECK_MS = 30_000;

/** A {@link PersistenceGuard} for `redis` under `policy`. */
export function persistenceGuard(redis: Redis | Cluster, policy: PersistencePolicy, logger: Logger): PersistenceGuard {
  let warned = false;
  const check = async (): Promise<PersistenceReport> => {
    const report = await readPersistence(redis);
    if (report.problems.length === 0 || policy === 'ignore') return report;
    if (policy === 'require') throw new RedisNotDurableError(report.problems);
    if (!warned) {
      warned = true;
      for (const problem of report.problems) logger.warn({ problem }, 'the Redis server can lose what verikit writes');
    }
    return report;
  };
  let passed = false;
  let started = false;
  let verdict: Promise<void> | undefined;
  let refusedAt = 0;
  /** A promise to wait for before an operation (`require` until a check passed), or undefined for none. */
  const ensure = (): Promise<void> | undefined => {
    if (policy === 'ignore' || passed) return undefined;
    if (policy === 'warn') {
      if (!started) {
        started = true;
        check().then(
          () => {
            passed = true;
          },
          (error: unknown) => {
            started = false; // could not read the server: asked again at the next use
            logger.warn({ err: withoutCommandArgs(error) }, "could not read the Redis server's persistence settings");
          },
        );
      }
      return undefined;
    }
    if (verdict === undefined || (refusedAt > 0 && performance.now() - refusedAt > RECHECK_MS)) {
      refusedAt = 0;
      verdict = check().then(
        () => {
          passed = true;
        },
        (error: unknown) => {
          // A refusal stands for a while; a server we could not read is asked again at the next use.
          if (error instanceof RedisNotDurableError) refusedAt = performance.now();
          else verdict = undefined;
          throw error;
        },
      );
    }
    return verdict;
  };
  return {
    check,
    before(call) {
      const waiting = ensure();
      return waiting === undefined ? call() : waiting.then(call);
    },
  };
}
