import { readFileSync } from 'node:fs';
import { packageBuild } from '../../tsup.package.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const define = { __VERIKIT_VERSION__: JSON.stringify(version) };

// Two builds behind one exports map: `node` gets node:crypto + undici, `default` only Web APIs,
// so Workers, Bun and Deno never load a Node built-in.
export default [
  packageBuild({ entry: { node: 'src/index.node.ts' }, define }),
  packageBuild({ entry: { default: 'src/index.default.ts' }, platform: 'neutral', target: 'es2022', define }),
];
