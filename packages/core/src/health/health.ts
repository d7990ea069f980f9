import { ConfigurationError } from '../errors.js';
import type { InboxEngine, InboxStats } from '../inbox/inbox.js';
import type { LedgerEngine, LedgerStats } from '../ledger/ledger.js';
import { StorageTimeoutError, withTimeout } from '../store/timeout.js';
import { positiveNumber } from '../util/option-checks.js';

/** A readiness verdict: `ok`; `degraded` (answering, but over a threshold: look, don't restart); `down` (not answering). */
export type HealthStatus = 'ok' | 'degraded' | 'down';

/** A threshold an engine that answered is over. */
export type HealthProblem = 'oldest_pending_too_old' | 'too_many_dead_letters';

/** Why an engine is down: no answer within `timeoutMs`, or its call failed. */
export type HealthDownReason = 'timeout' | 'error';

/** One engine's check: its figures when it answered in time, else why not (a code, never the error's own text). */
export type HealthCheck<Stats> =
  | { status: 'ok'; durationMs: number; stats: Stats }
  | { status: 'degraded'; durationMs: number; stats: Stats; problems: HealthProblem[] }
  | { status: 'down'; durationMs: number; reason: HealthDownReason; errorCode: string | null; message: string };

/** What {@link checkHealth} found: the worst engine's status, and each engine's check. */
export interface HealthReport {
  status: HealthStatus;
  checks: { inbox?: HealthCheck<InboxStats>; ledger?: HealthCheck<LedgerStats> };
}

/** Options of {@link checkHealth}: the engines to check (one at least) and the thresholds that make a report `degraded`. */
export interface HealthOptions {
  /** An inbox engine (`createPostgresInbox`, `createRedisInbox`): its depth and oldest pending event. */
  inbox?: Pick<InboxEngine, 'stats'>;
  /** A ledger engine: its counts and when a webhook last led to an observation. */
  ledger?: Pick<LedgerEngine, 'stats'>;
  /** The longest an engine may take to answer, in ms (default 2 000); past it, it is `down`. */
  timeoutMs?: number;
  /** `degraded` once the oldest pending event has waited longer than this, in ms (unset: not checked). */
  maxOldestPendingMs?: number;
  /** `degraded` once there are more dead letters than this (0: any dead letter; unset: not checked). */
  maxDead?: number;
}

/** What {@link healthResponse} answers: the HTTP status, headers and JSON body, for any framework. */
export interface HealthResponse {
  status: 200 | 503;
  headers: Record<string, string>;
  body: string;
}

const RANK: Record<HealthStatus, number> = { ok: 0, degraded: 1, down: 2 };
/** A code that can be shown as it is (`ECONNREFUSED`, `timeout`, a SQLSTATE): no message, no URL, no secret. */
const SAFE_CODE = /^[A-Za-z0-9_]{1,40}$/;

function checkOptions(options: HealthOptions) {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', 'checkHealth needs an options object');
  const { inbox, ledger, maxDead } = options;
  if (inbox === undefined && ledger === undefined) throw new ConfigurationError('inbox', 'checkHealth needs an inbox, a ledger or both');
  for (const [option, engine] of [
    ['inbox', inbox],
    ['ledger', ledger],
  ] as const) {
    if (engine !== undefined && typeof engine?.stats !== 'function')
      throw new ConfigurationError(option, `checkHealth: ${option} must be an engine with a stats() method`);
  }
  if (maxDead !== undefined && (!Number.isInteger(maxDead) || maxDead < 0))
    throw new ConfigurationError('maxDead', 'maxDead must be a whole number from 0');
  return {
    inbox,
    ledger,
    maxDead,
    timeoutMs: positiveNumber('timeoutMs', options.timeoutMs, 2_000, 'ms'),
    maxOldestPendingMs:
      options.maxOldestPendingMs === undefined ? undefined : positiveNumber('maxOldestPendingMs', options.maxOldestPendingMs, 0, 'ms'),
  };
}

/** Calls `stats` within the bound and judges its answer; a failure becomes `down` with a code, its message never shown. */
async function check<Stats>(
  what: string,
  stats: () => Promise<Stats>,
  timeoutMs: number,
  problemsOf: (stats: Stats) => HealthProblem[],
): Promise<HealthCheck<Stats>> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  try {
    const answer = await withTimeout(Promise.resolve().then(stats), timeoutMs, `${what}'s stats`);
    const problems = problemsOf(answer);
    return problems.length === 0
      ? { status: 'ok', durationMs: durationMs(), stats: answer }
      : { status: 'degraded', durationMs: durationMs(), stats: answer, problems };
  } catch (error) {
    // The engine's own bound may pass first: a timeout either way.
    const timedOut = error instanceof StorageTimeoutError;
    const code = (error as { code?: unknown } | null)?.code;
    return {
      status: 'down',
      durationMs: durationMs(),
      reason: timedOut ? 'timeout' : 'error',
      errorCode: typeof code === 'string' && SAFE_CODE.test(code) ? code : null,
      message: timedOut ? `${what} did not answer within the bound` : `${what}'s stats call failed`,
    };
  }
}

/**
 * A readiness check for a `/healthz` route: asks each engine given for its stats within
 * `timeoutMs` (both at once) and judges the answers against the thresholds. Never throws for an
 * engine that is down: that is the report's answer. Turn it into a response with {@link healthResponse}.
 * @example
 * const report = await checkHealth({ inbox, timeoutMs: 2_000, maxOldestPendingMs: 60_000, maxDead: 0 });
 * const { status, headers, body } = healthResponse(report);
 */
export async function checkHealth(options: HealthOptions): Promise<HealthReport> {
  const { inbox, ledger, timeoutMs, maxOldestPendingMs, maxDead } = checkOptions(options);
  const [inboxCheck, ledgerCheck] = await Promise.all([
    inbox &&
      check(
        'the inbox',
        async (): Promise<InboxStats> => {
          const { pending, retrying, dead, oldestPendingAt, oldestPendingAgeMs } = await inbox.stats();
          return { pending, retrying, dead, oldestPendingAt, oldestPendingAgeMs };
        },
        timeoutMs,
        (stats) => [
          ...(maxOldestPendingMs !== undefined && (stats.oldestPendingAgeMs ?? 0) > maxOldestPendingMs
            ? (['oldest_pending_too_old'] as const)
            : []),
          ...(maxDead !== undefined && stats.dead > maxDead ? (['too_many_dead_letters'] as const) : []),
        ],
      ),
    ledger &&
      check(
        'the ledger',
        async (): Promise<LedgerStats> => {
          const { pending, pendingByKind, final, lastWebhookAt } = await ledger.stats();
          return { pending, pendingByKind, final, lastWebhookAt };
        },
        timeoutMs,
        () => [],
      ),
  ]);
  const checks: HealthReport['checks'] = {};
  if (inboxCheck) checks.inbox = inboxCheck;
  if (ledgerCheck) checks.ledger = ledgerCheck;
  const status = Object.values(checks).reduce<HealthStatus>((worst, { status }) => (RANK[status] > RANK[worst] ? status : worst), 'ok');
  return { status, checks };
}

/** The HTTP answer to a report: 200 when `ok` or `degraded` (still serving), 503 when `down`; the report as JSON, never cached. */
export function healthResponse(report: HealthReport): HealthResponse {
  return {
    status: report.status === 'down' ? 503 : 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    body: JSON.stringify(report),
  };
}
