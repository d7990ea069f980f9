import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as defaultBuild from '../src/index.default.js';
import * as nodeBuild from '../src/index.node.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: nodeBuild, entryPoints: ['createClient', 'createWebhookHandler'] });

/** Every module of the ESM build reached from `entry` by its relative imports (static ones only, when `dynamic` is false). */
function modulesReachedFrom(entry: URL, { dynamic = true } = {}): URL[] {
  const seen = new Map<string, URL>();
  const imports = dynamic ? /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g : /(?:from|import)\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  const visit = (url: URL) => {
    if (seen.has(url.href)) return;
    seen.set(url.href, url);
    const code = readFileSync(url, 'utf8');
    for (const match of code.matchAll(imports)) visit(new URL(match[1] as string, url));
  };
  visit(entry);
  return [...seen.values()];
}

describe('the two builds', () => {
  it('the default (Web) build imports no Node built-in and no undici, in any module it reaches', () => {
    const reached = modulesReachedFrom(new URL('../dist/esm/index.default.js', import.meta.url));
    expect(reached.length).toBeGreaterThan(20);
    expect(reached.some((url) => url.pathname.endsWith('/hmac-web.js'))).toBe(true);
    for (const url of [...reached, new URL('../dist/default.cjs', import.meta.url)]) {
      const code = readFileSync(url, 'utf8');
      expect(code, url.pathname).not.toMatch(
        /\bfrom\s+['"](node:|undici)|import\(['"](node:|undici)|require\(['"](node:|undici|stream|crypto|http)/,
      );
    }
  });

  it('ESM is one file per module, so bundlers leave out what an app does not use', () => {
    const reached = modulesReachedFrom(new URL('../dist/esm/index.default.js', import.meta.url)).map((url) => url.pathname);
    // The verifier and handler modules import nothing from the client's schemas, which alone import zod.
    const zodImporters = reached.filter((path) => /from\s+['"]zod(\/[\w/]+)?['"]/.test(readFileSync(path, 'utf8')));
    expect(zodImporters.map((path) => path.replace(/.*dist\/esm\//, '')).sort()).toEqual([
      'client/parsers.js',
      'schemas/kyb.js',
      'schemas/kyc.js',
      'schemas/loose-object.js',
      'schemas/open-enum.js',
    ]);
  });

  it("Node's ESM entry loads neither zod nor undici with the package: only the client's first call imports them", () => {
    const entry = new URL('../dist/node.js', import.meta.url);
    const importsZod = (url: URL) => /\bfrom\s*['"]zod/.test(readFileSync(url, 'utf8'));
    const loaded = modulesReachedFrom(entry, { dynamic: false });
    expect(loaded.filter((url) => importsZod(url) || /\bfrom\s*['"]undici/.test(readFileSync(url, 'utf8')))).toEqual([]);
    // The client's parsers are the chunk that imports zod, reached by a dynamic import alone.
    const onFirstCall = modulesReachedFrom(entry).filter((url) => !loaded.some((l) => l.href === url.href));
    expect(onFirstCall.filter(importsZod).map((url) => url.pathname.replace(/.*dist\/|-\w+\.js$/g, ''))).toEqual(['parsers-node']);
  });

  it('both builds export the same names', () => {
    expect(Object.keys(defaultBuild).sort()).toEqual(Object.keys(nodeBuild).sort());
  });
});
