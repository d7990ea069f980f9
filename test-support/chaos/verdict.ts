import { expect } from 'vitest';
import type { ChaosFigures, ChaosOptions } from './harness.js';

/**
 * The scenario every engine runs: 2,000 ids sent 5 times each over 3 instances, 3 SIGKILLs,
 * Svix-like retries compressed. The schedule's tail (one attempt every 6.4 s for half a minute) is
 * what keeps the run from depending on an idle machine: an id whose lease a killed instance held
 * answers 409 until the lease runs out, and on a starved machine a restart takes seconds, so a
 * sender that gave up after 13 s lost ids that nothing else had lost (seen under load: 1 of 2,000).
 */
export const CHAOS_SCENARIO: Omit<ChaosOptions, 'mode' | 'secret'> = {
  distinct: 2_000,
  copiesPerId: 5,
  instances: 3,
  kills: 3,
  scheduleMs: [0, 20, 50, 100, 200, 400, 800, 1_600, 3_200, 6_400, 6_400, 6_400, 6_400, 6_400],
  concurrency: 96,
};

/** Prints a run's figures on one line, then asserts what every engine must show: nothing lost, nothing doubled, nothing early. */
export function expectExactlyOnce(figures: ChaosFigures, label: string): void {
  console.log(
    `chaos (${label}): deliveries=${figures.deliveries} distinct=${figures.distinct} attempts=${figures.attempts} ` +
      `effects-lost=${figures.lost} effects-doubled=${figures.doubled} 2xx-before-durable=${figures.earlyAcks} given-up=${figures.givenUp} ` +
      `sigkills=${figures.kills} killed-connections=${figures.killedConnections} onEvent-runs=${figures.runs} ` +
      `statuses=${JSON.stringify(figures.statuses)} ${figures.whileDown ? `while-engine-down=${JSON.stringify(figures.whileDown)} ` : ''}` +
      `crashes=${figures.crashes.length} seconds=${figures.seconds}`,
  );
  expect(figures.kills).toBeGreaterThanOrEqual(3);
  expect(figures.deliveries).toBeGreaterThanOrEqual(10_000);
  expect(figures.killedConnections).toBeGreaterThan(0);
  expect(figures.crashes).toEqual([]);
  expect(figures.lost).toBe(0);
  expect(figures.doubled).toBe(0);
  expect(figures.earlyAcks).toBe(0);
  // Each delivery the sender gave up on, with every answer it had: what a failure here needs to be understood.
  expect(figures.givenUpHistories).toEqual([]);
  expect(figures.givenUp).toBe(0);
}
