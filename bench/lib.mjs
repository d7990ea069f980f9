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

/**
 * Drains running side by side, compared window by window (on these VMs a core's speed drifts from
 * second to second, so drains taken one after the other compare different machines): waits
 * `warmupSeconds`, then answers, for each of `windows` windows of `windowSeconds`, every counter's
 * rate in it (events per second), keyed as `counters` is.
 */
export async function rateWindows(counters, { warmupSeconds, windowSeconds, windows }) {
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const read = () => Object.fromEntries(Object.entries(counters).map(([name, count]) => [name, count()]));
  await sleep(warmupSeconds * 1000);
  const rounds = [];
  for (let w = 0; w < windows; w++) {
    const before = read();
    await sleep(windowSeconds * 1000);
    const after = read();
    rounds.push(Object.fromEntries(Object.keys(counters).map((name) => [name, (after[name] - before[name]) / windowSeconds])));
  }
  return rounds;
}

/**
 * The benchmarks' shared reporter: every figure goes through `report`, which prints it beside its bar
 * and keeps it for `writeReport` (`pnpm bench --json=<file>`), so a figure can be compared run to run.
 *
 *   report({ name, value, unit, bar, range, note })
 *   - name:  a stable key, slash-separated from general to particular ('adapters/fastify/sync/ratio');
 *            the JSON file is keyed by it, so keep it the same from run to run.
 *   - value: the figure (a number).
 *   - unit:  what it counts ('x', 'req/s', 'µs/req', 'ops/s', 'ms', 'KB').
 *   - bar:   optional, the quality bar: { min } or { max } (or both); the line then says whether it is met.
 *   - range: optional [low, high] over rounds, printed beside the median.
 *   - label: optional, the words printed for the figure (default: the name).
 *   - indent: optional, spaces before the line (default 2).
 * Returns the entry as kept. `reportedFigures()` lists every entry so far; `writeReport(path)` writes
 * them as JSON: { startedAt, node, figures: { [name]: { value, unit, bar?, met?, range? } } }.
 */
const figures = [];
const startedAt = new Date().toISOString();

/** Prints one figure beside its bar (met or not) and keeps it for the JSON report. */
export function report({ name, value, unit, bar, range, label = name, indent = 2 }) {
  const met = bar === undefined ? undefined : (bar.min === undefined || value >= bar.min) && (bar.max === undefined || value <= bar.max);
  const entry = { name, value, unit, ...(bar ? { bar, met } : {}), ...(range ? { range } : {}) };
  figures.push(entry);
  const shown = `${formatFigure(value, unit)}${range ? ` [${formatFigure(range[0], unit, false)}-${formatFigure(range[1], unit, false)}]` : ''}`;
  const barText = bar === undefined ? '' : `   bar ${describeBar(bar, unit)}: ${met ? 'met' : 'NOT MET'}`;
  console.log(`${' '.repeat(indent)}${label}  ${shown}${barText}`);
  return entry;
}

/** Reports the median of `list` (rounds or windows of one measurement), with its range beside it. */
export const reportMedian = ({ list, ...figure }) =>
  report({ ...figure, value: median(list), range: [Math.min(...list), Math.max(...list)] });

/** Reports the median rate of each side of a drain benchmark, then the median of the per-round ratios of the first two beside `bar`. */
export function reportDrain(prefix, sides, { ratioLabel, bar }) {
  for (const { key, label, rates } of sides)
    reportMedian({ name: `${prefix}/${key}`, label: label.padEnd(30), list: rates, unit: 'events/s' });
  const [ours, theirs] = sides;
  const ratios = ours.rates.map((rate, i) => rate / theirs.rates[i]);
  return reportMedian({ name: `${prefix}/ratio`, label: ratioLabel, list: ratios, unit: 'x', bar }).value;
}

/** Every figure reported so far, in order. */
export const reportedFigures = () => [...figures];

/** Writes every figure reported so far to `path` as JSON, keyed by name. */
export async function writeReport(path) {
  const { writeFile } = await import('node:fs/promises');
  const byName = Object.fromEntries(figures.map(({ name, ...rest }) => [name, rest]));
  await writeFile(path, `${JSON.stringify({ startedAt, node: process.version, figures: byName }, null, 2)}\n`);
}

function formatFigure(value, unit, withUnit = true) {
  const number = unit === 'x' ? value.toFixed(3) : Math.abs(value) >= 100 ? fmt(value) : value.toFixed(1);
  return withUnit ? `${number}${unit === 'x' ? 'x' : ` ${unit}`}` : number;
}

function describeBar({ min, max }, unit) {
  const parts = [];
  if (min !== undefined) parts.push(`>= ${formatFigure(min, unit)}`);
  if (max !== undefined) parts.push(`<= ${formatFigure(max, unit)}`);
  return parts.join(' and ');
}
