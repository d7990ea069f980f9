import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as defaultBuild from '../src/index.default.js';
import * as nodeBuild from '../src/index.node.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: nodeBuild, entryPoints: ['createClient', 'createWebhookHandler'] });

describe('the two builds', () => {
  it('the default (Web) build imports no Node built-in and no undici', () => {
    for (const file of ['dist/default.js', 'dist/default.cjs']) {
      const code = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
      expect(code).not.toMatch(/\bfrom\s+['"](node:|undici)|require\(['"](node:|undici|stream|crypto|http)/);
    }
  });

  it('both builds export the same names', () => {
    expect(Object.keys(defaultBuild).sort()).toEqual(Object.keys(nodeBuild).sort());
  });
});
