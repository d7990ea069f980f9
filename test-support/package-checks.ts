import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';

const run = promisify(execFile);
const attwBin = fileURLToPath(new URL('../node_modules/.bin/attw', import.meta.url));

/** The problems publint reports for the package in `pkgDir` (strict mode). */
export async function publintMessages(pkgDir: string): Promise<unknown[]> {
  return (await publint({ pkgDir, strict: true })).messages;
}

/** The problems are-the-types-wrong finds in the packed package. */
export async function attwProblems(pkgDir: string): Promise<unknown[]> {
  const { stdout } = await run(attwBin, ['--pack', '.', '--format', 'json'], { cwd: pkgDir, timeout: 120_000 });
  return (JSON.parse(stdout) as { analysis: { problems: unknown[] } }).analysis.problems;
}

/** The package's own name, read from its package.json. */
export function packageName(pkgDir: string): string {
  return (JSON.parse(readFileSync(`${pkgDir}/package.json`, 'utf8')) as { name: string }).name;
}

/** `typeof` of `symbol` when the package is loaded by `require` and by `import`, from its own folder. */
export async function loadedFromBothModuleSystems(pkgDir: string, symbol: string): Promise<{ cjs: string; esm: string }> {
  const name = packageName(pkgDir);
  const cjs = await run(process.execPath, ['-e', `console.log(typeof require(${JSON.stringify(name)})[${JSON.stringify(symbol)}])`], {
    cwd: pkgDir,
  });
  const esm = await run(
    process.execPath,
    ['--input-type=module', '-e', `const m = await import(${JSON.stringify(name)}); console.log(typeof m[${JSON.stringify(symbol)}])`],
    { cwd: pkgDir },
  );
  return { cjs: cjs.stdout.trim(), esm: esm.stdout.trim() };
}
