import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const define = { __VERIKIT_VERSION__: JSON.stringify(version) };

// Two builds behind one exports map: `node` gets node:crypto + undici, `default` only Web APIs,
// so Workers, Bun and Deno never load a Node built-in.
export default defineConfig([
  {
    entry: { node: 'src/index.node.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    define,
  },
  {
    entry: { default: 'src/index.default.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    define,
  },
]);
