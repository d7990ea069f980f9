import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { attwProblems, loadedFromBothModuleSystems, publintMessages } from '../../../test-support/package-checks.js';
import * as defaultBuild from '../src/index.default.js';
import * as nodeBuild from '../src/index.node.js';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));

// These read dist/: the root `pnpm test` builds first.
describe('the published package', () => {
  it('passes publint', async () => {
    expect(await publintMessages(pkgDir)).toEqual([]);
  });

  it('passes are-the-types-wrong', async () => {
    expect(await attwProblems(pkgDir)).toEqual([]);
  }, 120_000);

  it('imports from CommonJS and from ESM by its name', async () => {
    expect(await loadedFromBothModuleSystems(pkgDir, 'createClient')).toEqual({ cjs: 'function', esm: 'function' });
    expect(await loadedFromBothModuleSystems(pkgDir, 'createWebhookHandler')).toEqual({ cjs: 'function', esm: 'function' });
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
