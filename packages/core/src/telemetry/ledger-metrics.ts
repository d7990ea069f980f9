import type { LedgerStats, ObservationSource } from '../ledger/ledger.js';
import type { EventKind } from '../webhook/identify.js';
import type { OtelMeter } from './api.js';
import { type MeterSource, perMeter } from './meter.js';
import { type StatsEngine, sharedPerSource, statsGauges, type Watching } from './stats-gauges.js';

/** What an observation of the ledger reports while a meter records. */
export interface LedgerRecorder {
  /** A read of a result from the service (each one spends the read budget), and what led to it. */
  read(source: ObservationSource): void;
  /** A change recorded; `missed` when it stands for a webhook that never arrived. */
  changed(source: ObservationSource, kind: EventKind, missed: boolean): void;
}

const KINDS: readonly EventKind[] = ['kyb', 'kyc'];

function ledgerRecorder(meter: OtelMeter): LedgerRecorder {
  const reads = meter.createCounter('verikit.ledger.reads', {
    unit: '{read}',
    description: 'Reads of verification results from the service, by what led to them (webhook, reconcile): each spends the read budget',
  });
  const changes = meter.createCounter('verikit.ledger.changes', {
    unit: '{change}',
    description: 'Changes of a verification recorded by the ledger, by what observed them (webhook, reconcile) and kind',
  });
  const missed = meter.createCounter('verikit.ledger.missed_webhooks', {
    unit: '{change}',
    description: 'Changes the reconciler found whose webhook never arrived, by kind',
  });
  return {
    read: (source) => reads.add(1, { 'verikit.source': source }),
    changed(source, kind, wasMissed) {
      changes.add(1, { 'verikit.source': source, 'verikit.kind': kind });
      if (wasMissed) missed.add(1, { 'verikit.kind': kind });
    },
  };
}

const ledgerGauges = sharedPerSource((source) =>
  statsGauges<LedgerStats, number>(source, (meter) => {
    const pending = meter.createObservableGauge('verikit.ledger.pending', {
      unit: '{verification}',
      description: 'Verifications not final yet, by kind',
    });
    const oldest = meter.createObservableGauge('verikit.ledger.oldest_pending.age', {
      unit: 's',
      description: 'How long the oldest verification not final yet has been tracked, by kind (0 when none)',
    });
    const budget = meter.createObservableGauge('verikit.ledger.read_budget', {
      unit: '{read}/min',
      description: 'Reads of results per minute the ledger allows, shared by every instance (readsPerMinute)',
    });
    return {
      gauges: [pending, oldest, budget],
      observe(result, stats, _sinceReadMs, readsPerMinute) {
        for (const kind of KINDS) {
          const { pending: count, oldestTrackedAt } = stats.pendingByKind[kind];
          const attributes = { 'verikit.kind': kind };
          result.observe(pending, count, attributes);
          // Tracked on the engine's clock, aged on this one: a skew between them shows here.
          result.observe(oldest, oldestTrackedAt === null ? 0 : Math.max(0, Date.now() - oldestTrackedAt.getTime()) / 1000, attributes);
        }
        result.observe(budget, readsPerMinute);
      },
    };
  }),
);

/** What the ledger's observers measure: reads and changes, and the ledger's pending verifications while they run. */
export interface LedgerMetrics {
  /** The recorder while a meter records (looked up now: a provider registered late is picked up here), else `undefined`. */
  recorder(): LedgerRecorder | undefined;
  /** Reports `ledger`'s pending verifications and `readsPerMinute` on the gauges until the watch is stopped. */
  watch(ledger: StatsEngine<LedgerStats>, readsPerMinute: number): Watching;
}

/** The ledger metrics on `source`. */
export function ledgerMetrics(source: MeterSource): LedgerMetrics {
  const gauges = ledgerGauges(source);
  return { recorder: perMeter(source, ledgerRecorder), watch: (ledger, readsPerMinute) => gauges.watch(ledger, readsPerMinute) };
}
