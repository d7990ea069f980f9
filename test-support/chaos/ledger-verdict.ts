import { expect } from 'vitest';
import type { LedgerChaosOptions, LedgerChaosReport } from './ledger-harness.js';

const BUDGET_PER_MINUTE = 3_000;

/**
 * The scenario every engine runs: 500 refIds (KYB and KYC), 3 to 6 transitions each over 50 s, 3
 * instances, 3 SIGKILLs, 30% of messages dropped, half the rest delivered twice, all of them up to
 * 2 s late, and a 6 s endpoint-down window that outlasts the fake's retries (a message sent in it
 * is lost). The reconcile schedule is compressed to seconds; the budget (50 reads/s over all
 * instances) is below what the webhooks and the reconcilers ask for, so it paces them (how closely
 * depends on the machine: the figures print the busiest minute and the busiest 10 s), and the reads
 * go on for more than a minute, so the minute window of (d) is a real one.
 */
export const LEDGER_CHAOS_SCENARIO: LedgerChaosOptions = {
  refIds: 500,
  transitions: { min: 3, max: 6 },
  instances: 3,
  kills: 3,
  driveMs: 50_000,
  downWindowMs: [18_000, 24_000],
  retryScheduleMs: [0, 500, 1_500],
  dropRate: 0.3,
  duplicateRate: 0.5,
  delayMs: { min: 0, max: 2_000 },
  settleTimeoutMs: 45_000,
  settings: {
    readsPerMinute: BUDGET_PER_MINUTE,
    schedule: {
      stepsMs: [500, 1_500, 3_000],
      repeatMs: 3_000,
      finalRecheckMs: 3_000,
      finalWindowMs: 10 * 60_000,
      failureBaseMs: 250,
      failureMaxMs: 2_000,
    },
    lockMs: 5_000,
    onChangeFailRate: 0.03,
    reconcilerPollMs: 200,
    worker: {
      concurrency: 8,
      leaseMs: 5_000,
      pollIntervalMs: 200,
      eventTimeoutMs: 20_000,
      retry: { maxAttempts: 30, baseDelayMs: 100, maxDelayMs: 1_000 },
    },
  },
};

/** Prints a run's figures on one line, then asserts (a) to (e) of the issue, naming the refIds at fault. */
export function expectLedgerChaos(report: LedgerChaosReport, label: string): void {
  const budget = report.budgetPerMinute;
  console.log(
    `ledger chaos (${label}): refIds=${report.refIds} transitions=${report.transitions} changes=${JSON.stringify(report.changes)} ` +
      `effects=${JSON.stringify(report.effectsBySource)} recorded=${report.recorded} missed-webhook-warnings=${report.missedWarnings} ` +
      `unlogged-by-killed=${report.unloggedByKilled} onChange-throws=${report.onChangeThrows} sigkills=${report.kills} ` +
      `messages=${report.messages} dropped=${report.dropped} out-of-retries=${report.failed} duplicated=${report.duplicated} ` +
      `reads=${report.reads} max-reads-60s=${report.maxReadsPerMinute}/${budget} max-reads-10s=${report.maxReadsPer10s}/${budget / 6} ` +
      `settled-after=${report.settleSeconds}s crashes=${report.crashes.length} seconds=${report.seconds}`,
  );
  expect(report.crashes).toEqual([]);
  expect(report.kills).toBeGreaterThanOrEqual(3);
  expect(report.refIds).toBeGreaterThanOrEqual(500);
  // Every planned transition changed the fake (a no-op move would make the history shorter than planned).
  expect(Object.values(report.changes).reduce((a, b) => a + b, 0)).toBe(report.transitions);
  expect(report.changes.reopened).toBeGreaterThan(0);
  expect(report.changes.overturned).toBeGreaterThan(0);
  expect(report.dropped).toBeGreaterThan(0);
  expect(report.failed).toBeGreaterThan(0);
  // (a) the ledger equals the fake for every refId; (b) in the fake's order, never twice; (c) each reaction once.
  expect.soft(report.notEqual).toEqual([]);
  expect.soft(report.outOfOrder).toEqual([]);
  expect.soft(report.notOnce).toEqual([]);
  // (d) the budget in any minute window (the reads go on for more than a minute, mostly at the budget's pace: see max-reads-10s).
  expect.soft(report.maxReadsPerMinute).toBeLessThanOrEqual(budget);
  // (e) polling found changes, and every one of them was logged.
  expect.soft(report.effectsBySource.reconcile ?? 0).toBeGreaterThan(0);
  expect.soft(report.unlogged).toEqual([]);
}
