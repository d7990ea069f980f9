import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { attwProblems, loadedFromBothModuleSystems, publintMessages } from '../../../test-support/package-checks.js';
import * as kit from '../src/index.js';

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
    expect(await loadedFromBothModuleSystems(pkgDir, 'idempotencyStoreContract')).toEqual({ cjs: 'function', esm: 'function' });
  });

  it('exports the documented names', () => {
    expect(Object.keys(kit).sort()).toMatchSnapshot();
  });
});
