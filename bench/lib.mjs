// Shared measuring helpers for the benchmarks: fixed-duration closed-loop runs at a given concurrency.

/** Runs `op` from `concurrency` loops for `durationMs`; returns completed operations per second. */
export async function measure(op, { concurrency, durationMs }) {
  let done = 0;
  let failed = 0;
  const stopAt = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < stopAt) {
        try {
          await op();
          done++;
        } catch {
          failed++;
        }
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} operations failed during the run`);
  return done / ((performance.now() - started) / 1000);
}

/**
 * Measures `subject` against `baseline` in alternating rounds, so machine drift hits both alike.
 * Returns the median rate of each and the median of the per-round ratios subject/baseline.
 */
export async function comparePair(subject, baseline, { rounds = 7, concurrency, durationMs, verbose = false }) {
  await measure(subject, { concurrency, durationMs: 300 });
  await measure(baseline, { concurrency, durationMs: 300 });
  const subjectRates = [];
  const baselineRates = [];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on a warmer or cooler machine.
    const first = round % 2 === 0;
    const a = first ? await measure(subject, { concurrency, durationMs }) : undefined;
    const b = await measure(baseline, { concurrency, durationMs });
    const s = a ?? (await measure(subject, { concurrency, durationMs }));
    subjectRates.push(s);
    baselineRates.push(b);
    ratios.push(s / b);
    if (verbose) console.log(`    round ${round + 1}: ${fmt(s)} vs ${fmt(b)} = ${(s / b).toFixed(3)}`);
  }
  return { subject: median(subjectRates), baseline: median(baselineRates), ratio: median(ratios) };
}

/** The median of a list of numbers. */
export function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Formats a figure with thousands separators. */
export const fmt = (n) => Math.round(n).toLocaleString('en-US');
