// Cold start: what importing verikit's webhook path costs a fresh Node process, beside svix's import.
// Each figure is one `await import()` in a new `node` process, resolved from the repository root as a
// user's project resolves its dependencies (the built dist/). Rounds interleave the subjects, so that
// load from other processes falls on all of them alike; each figure is the median of the rounds.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, report } from './lib.mjs';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * What is imported. An adapter is timed after its framework is loaded: an app that mounts it has
 * loaded its framework already, so the framework is no part of what verikit adds.
 */
export const SUBJECTS = [
  { name: 'core', specifier: '@verikit/core' },
  { name: 'hono', specifier: '@verikit/hono', after: 'hono' },
  { name: 'express', specifier: '@verikit/express', after: 'express' },
  { name: 'fastify', specifier: '@verikit/fastify', after: 'fastify' },
];
const BASELINE = { name: 'svix', specifier: 'svix' };
/** Issue 23's bar: verikit's import costs at most half of svix's. */
export const BAR = 0.5;

const CHILD = `
const [specifier, after] = process.argv.slice(1);
if (after) await import(after);
const cpu = process.cpuUsage();
const started = performance.now();
await import(specifier);
const wallMs = performance.now() - started;
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ wallMs, cpuMs: (used.user + used.system) / 1000 }));
`;

/** One import in a fresh process: wall and CPU milliseconds. */
async function importOnce({ specifier, after }) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD, specifier, after ?? ''], { cwd: root });
  return JSON.parse(stdout);
}

/** Medians of `rounds` interleaved fresh-process imports, per subject and for svix. */
export async function measureCold({ rounds = 9, verbose = false } = {}) {
  const subjects = [...SUBJECTS, BASELINE];
  const samples = new Map(subjects.map((s) => [s.name, { wallMs: [], cpuMs: [] }]));
  for (let round = 0; round < rounds; round++) {
    // Rotated each round, so no subject always runs first (or right after another's exit).
    for (let i = 0; i < subjects.length; i++) {
      const subject = subjects[(i + round) % subjects.length];
      const { wallMs, cpuMs } = await importOnce(subject);
      samples.get(subject.name).wallMs.push(wallMs);
      samples.get(subject.name).cpuMs.push(cpuMs);
      if (verbose) console.log(`  round ${round + 1}: ${subject.name} ${wallMs.toFixed(1)} ms (cpu ${cpuMs.toFixed(1)} ms)`);
    }
  }
  return Object.fromEntries(
    [...samples].map(([name, { wallMs, cpuMs }]) => [
      name,
      { wallMs: median(wallMs), cpuMs: median(cpuMs), minWallMs: Math.min(...wallMs), maxWallMs: Math.max(...wallMs) },
    ]),
  );
}

/** Reports each subject's import time over svix's, beside the bar, and svix's own time. */
export async function benchCold(options = {}) {
  const rounds = options.rounds ?? 9;
  console.log(`cold: one import in a fresh node process, median of ${rounds} interleaved rounds (wall ms; CPU ms in brackets):`);
  const figures = await measureCold({ ...options, rounds });
  const svix = figures[BASELINE.name];
  for (const { name, after } of SUBJECTS) {
    const own = figures[name];
    const context = after === undefined ? '' : ` (${after} already loaded)`;
    report({
      name: `cold/${name}/vs-svix`,
      label:
        `${name} import ${Math.round(own.wallMs)} ms vs svix ${Math.round(svix.wallMs)} ms [cpu ${Math.round(own.cpuMs)} vs ${Math.round(svix.cpuMs)} ms; ` +
        `wall range ${Math.round(own.minWallMs)}-${Math.round(own.maxWallMs)} ms]${context}`,
      value: own.wallMs / svix.wallMs,
      unit: 'x',
      bar: { max: BAR },
    });
  }
  report({ name: 'cold/svix/wall', label: 'svix import', value: svix.wallMs, unit: 'ms', range: [svix.minWallMs, svix.maxWallMs] });
}
