import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { describe, expect, it } from 'vitest';
import * as defaultBuild from '../src/index.default.js';
import * as nodeBuild from '../src/index.node.js';

const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));

// These read dist/: the root `pnpm test` builds first.
describe('the published package', () => {
  it('passes publint', async () => {
    const { messages } = await publint({ pkgDir, strict: true });
    expect(messages).toEqual([]);
  });

  it('passes are-the-types-wrong', async () => {
    const attw = fileURLToPath(new URL('../../../node_modules/.bin/attw', import.meta.url));
    const { stdout } = await run(attw, ['--pack', '.', '--format', 'json'], { cwd: pkgDir, timeout: 120_000 });
    const report = JSON.parse(stdout) as { analysis: { problems: unknown[] } };
    expect(report.analysis.problems).toEqual([]);
  }, 120_000);

  it('imports from CommonJS and from ESM by its name', async () => {
    const cjs = await run(
      process.execPath,
      ['-e', "const m = require('@verikit/core'); console.log(typeof m.createClient, typeof m.VerikitError)"],
      { cwd: pkgDir },
    );
    expect(cjs.stdout.trim()).toBe('function function');
    const esm = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@verikit/core'); console.log(typeof m.createClient, m.VERSION)"],
      { cwd: pkgDir },
    );
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(esm.stdout.trim()).toBe(`function ${version}`);
  });

  it('the default (Web) build imports no Node built-in and no undici', () => {
    for (const file of ['dist/default.js', 'dist/default.cjs']) {
      const code = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
      expect(code).not.toMatch(/\bfrom\s+['"](node:|undici)|require\(['"](node:|undici|stream|crypto|http)/);
    }
  });

  it('both builds export the same names, and the names are the documented ones', () => {
    expect(Object.keys(defaultBuild).sort()).toEqual(Object.keys(nodeBuild).sort());
    expect(Object.keys(nodeBuild).sort()).toMatchSnapshot();
  });
});
