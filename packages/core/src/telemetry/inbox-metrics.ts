import type { InboxStats } from '../inbox/inbox.js';
import { errorReason } from '../util/logger.js';
import type { MetricAttributes, OtelMeter } from './api.js';
import { type MeterSource, perMeter } from './meter.js';
import { type StatsEngine, sharedPerSource, statsGauges, type Watching } from './stats-gauges.js';

/** How one run of an inbox event ended: done, failed and due again, failed for the last time, or its lease lost to another worker. */
export type RunOutcome = 'done' | 'retry' | 'dead_lettered' | 'lease_lost';

/** One run of an event as the worker reports it: its outcome, and what failed it (for `retry` and `dead_lettered`). */
export interface EventRun {
  outcome: RunOutcome;
  error?: unknown;
}

/** Buckets for a run, in seconds: an `onEvent` may take up to its 5-minute `eventTimeoutMs`. */
const RUN_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Buckets for the attempts an event took (8 by default before it is dead-lettered). */
const ATTEMPTS = [1, 2, 3, 4, 5, 6, 7, 8, 10, 15, 20];

const MESSAGING = { 'messaging.system': 'verikit', 'messaging.operation.name': 'process' };
const BY_OUTCOME: Record<RunOutcome, MetricAttributes> = {
  done: { ...MESSAGING, 'verikit.outcome': 'done' },
  retry: { ...MESSAGING, 'verikit.outcome': 'retry' },
  dead_lettered: { ...MESSAGING, 'verikit.outcome': 'dead_lettered' },
  lease_lost: { ...MESSAGING, 'verikit.outcome': 'lease_lost' },
};
/** What `error.type` may hold: a code or class name, nothing longer or stranger (so nothing with an id or a person in it). */
const SAFE_TYPE = /^[\w.-]{1,64}$/;

/** `error.type` of a failure: its code or class name, or `_OTHER` (the conventions' fallback). */
export function errorType(error: unknown): string {
  const reason = errorReason(error);
  return SAFE_TYPE.test(reason) ? reason : '_OTHER';
}

/** Records one run of an event; `ms` is how long it took. */
export type RecordRun = (run: EventRun, attempt: number, ms: number) => void;

function runRecorder(meter: OtelMeter): RecordRun {
  const duration = meter.createHistogram('messaging.process.duration', {
    unit: 's',
    description: 'Time an inbox worker took to run one event (one attempt), by outcome',
    advice: { explicitBucketBoundaries: RUN_SECONDS },
  });
  const attempts = meter.createHistogram('verikit.inbox.attempts', {
    unit: '{attempt}',
    description: 'Attempts an inbox event took, recorded when it is done or dead-lettered',
    advice: { explicitBucketBoundaries: ATTEMPTS },
  });
  return ({ outcome, error }, attempt, ms) => {
    duration.record(ms / 1000, error === undefined ? BY_OUTCOME[outcome] : { ...BY_OUTCOME[outcome], 'error.type': errorType(error) });
    if (outcome === 'done' || outcome === 'dead_lettered') attempts.record(attempt, { 'verikit.outcome': outcome });
  };
}

const depthGauges = sharedPerSource((source) =>
  statsGauges<InboxStats, undefined>(source, (meter) => {
    const pending = meter.createObservableGauge('verikit.inbox.pending', {
      unit: '{event}',
      description: 'Inbox events neither done nor dead (due, running, or waiting out a retry), as stats() counts them',
    });
    const retrying = meter.createObservableGauge('verikit.inbox.retrying', {
      unit: '{event}',
      description: 'Of the pending inbox events, those waiting out a retry after a failed attempt',
    });
    const dead = meter.createObservableGauge('verikit.inbox.dead', { unit: '{event}', description: 'Dead letters kept in the inbox' });
    const oldest = meter.createObservableGauge('verikit.inbox.oldest_pending.age', {
      unit: 's',
      description: 'How long the oldest pending inbox event has waited since it was accepted (0 when none is pending)',
    });
    return {
      gauges: [pending, retrying, dead, oldest],
      observe(result, stats, sinceReadMs) {
        result.observe(pending, stats.pending);
        result.observe(retrying, stats.retrying);
        result.observe(dead, stats.dead);
        result.observe(oldest, stats.oldestPendingAgeMs === null ? 0 : (stats.oldestPendingAgeMs + sinceReadMs) / 1000);
      },
    };
  }),
);

/** What an inbox worker measures: each run of an event, and its inbox's depth while it runs. */
export interface InboxMetrics {
  /** The run recorder while a meter records (looked up now: a provider registered late is picked up here), else `undefined`. */
  recorder(): RecordRun | undefined;
  /** Reports `inbox`'s depth and oldest pending age on the gauges until the watch is stopped. */
  watch(inbox: StatsEngine<InboxStats>): Watching;
}

/** The inbox worker's metrics on `source`. */
export function inboxMetrics(source: MeterSource): InboxMetrics {
  const gauges = depthGauges(source);
  return { recorder: perMeter(source, runRecorder), watch: (inbox) => gauges.watch(inbox, undefined) };
}
