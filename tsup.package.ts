import { defineConfig, type Options } from 'tsup';

/** The build every single-entry verikit package uses: ESM + CJS + types from src/index.ts. */
export function packageBuild(overrides: Options = {}) {
  return defineConfig({
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    ...overrides,
  });
}
