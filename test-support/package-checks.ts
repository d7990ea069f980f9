import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const attwBin = fileURLToPath(new URL('../node_modules/.bin/attw', import.meta.url));

async function attwProblems(pkgDir: string): Promise<unknown[]> {
  const { stdout } = await run(attwBin, ['--pack', '.', '--format', 'json'], { cwd: pkgDir, timeout: 120_000 });
  return (JSON.parse(stdout) as { analysis: { problems: unknown[] } }).analysis.problems;
}

async function typeofFromBoth(pkgDir: string, name: string, symbol: string): Promise<{ cjs: string; esm: string }> {
  const [n, s] = [JSON.stringify(name), JSON.stringify(symbol)];
  const cjs = await run(process.execPath, ['-e', `console.log(typeof require(${n})[${s}])`], { cwd: pkgDir });
  const esm = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${n}); console.log(typeof m[${s}])`], {
    cwd: pkgDir,
  });
  return { cjs: cjs.stdout.trim(), esm: esm.stdout.trim() };
}

/**
 * The checks every published package passes: publint, are-the-types-wrong, loading by its name
 * from CommonJS and ESM, and a snapshot of its export names. They read dist/ (`pnpm test` builds first).
 */
export function publishedPackageSuite(packageUrl: URL, options: { exports: Record<string, unknown>; entryPoints: string[] }): void {
  const pkgDir = fileURLToPath(packageUrl);
  const { name } = JSON.parse(readFileSync(`${pkgDir}/package.json`, 'utf8')) as { name: string };
  describe(`the published package ${name}`, () => {
    it('passes publint', async () => {
      expect((await publint({ pkgDir, strict: true })).messages).toEqual([]);
    });

    it('passes are-the-types-wrong', async () => {
      expect(await attwProblems(pkgDir)).toEqual([]);
    }, 120_000);

    it.each(options.entryPoints)('loads %s from CommonJS and from ESM by its name', async (symbol) => {
      expect(await typeofFromBoth(pkgDir, name, symbol)).toEqual({ cjs: 'function', esm: 'function' });
    });

    it('exports the documented names', () => {
      expect(Object.keys(options.exports).sort()).toMatchSnapshot();
    });
  });
}
