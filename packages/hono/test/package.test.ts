import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as adapter from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: adapter, entryPoints: ['verikitApp'] });

it('the build uses Web APIs only (no Node built-in), so it runs on edge runtimes', () => {
  for (const file of ['dist/index.js', 'dist/index.cjs']) {
    const code = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
    expect(code).not.toMatch(/\bfrom\s+['"]node:|require\(['"]node:/);
  }
});
