import { packageBuild } from '../../tsup.package.js';

// The bin is ESM only (Node runs it, nobody requires it); the programmatic entry is ESM + CJS like every package.
// Both ESM entries share one chunk. `shims` gives the CJS build `import.meta.url`, which finds package.json files.
export default [
  packageBuild({
    entry: { index: 'src/index.ts', bin: 'src/bin.ts' },
    format: ['esm'],
    splitting: true,
    shims: true,
    dts: { entry: { index: 'src/index.ts' } },
  }),
  packageBuild({ format: ['cjs'], shims: true }),
];
