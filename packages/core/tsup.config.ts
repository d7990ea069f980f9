import { readFileSync } from 'node:fs';
import { packageBuild } from '../../tsup.package.js';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};
// `__VERIKIT_WEB_BUILD__`: the Web build takes telemetry only as openTelemetry(api)'s value, and looks for no API.
const define = { __VERIKIT_VERSION__: JSON.stringify(version), __VERIKIT_WEB_BUILD__: 'false' };
const web = { ...define, __VERIKIT_WEB_BUILD__: 'true' };

// Two builds behind one exports map: `node` gets node:crypto + undici, `default` only Web APIs,
// so Workers, Bun and Deno never load a Node built-in.
// ESM ships one file per module, so an app's bundler drops every module it does not use: a
// webhook-only Worker carries neither the client nor its zod schemas. CommonJS ships one file per build.
// On Node the client imports zod and its schemas at its first call, so importing the package loads neither.
export default [
  packageBuild({
    entry: ['src/**/*.ts', '!src/**/*.d.ts'],
    outDir: 'dist/esm',
    format: ['esm'],
    bundle: false,
    dts: false,
    platform: 'neutral',
    target: 'es2022',
    define: web,
  }),
  // Node's ESM entry is one file (and a chunk the client imports at its first call): Node loads a
  // graph of sixty modules in about twice the time of one file, and a process that only receives
  // webhooks should start as fast as svix's.
  packageBuild({ entry: { node: 'src/index.node.ts' }, format: ['esm'], splitting: true, dts: false, define }),
  packageBuild({ entry: { node: 'src/index.node.ts' }, format: ['cjs'], define }),
  packageBuild({ entry: { default: 'src/index.default.ts' }, format: ['cjs'], platform: 'neutral', target: 'es2022', define: web }),
  // `@verikit/core/schemas`: the zod schemas, apart so that the main entry loads no zod.
  packageBuild({ entry: { schemas: 'src/schemas/index.ts' }, format: ['cjs'], platform: 'neutral', target: 'es2022', define }),
  // `@verikit/core/otel`: openTelemetry(api), apart so that a bundle without telemetry carries none of it.
  // Its ESM is dist/esm/otel.js on every runtime; its CommonJS is one file.
  packageBuild({ entry: { otel: 'src/otel.ts' }, format: ['cjs'], platform: 'neutral', target: 'es2022', define: web }),
  // The ESM builds' types (the CommonJS builds above emit their .d.cts).
  packageBuild({
    entry: { node: 'src/index.node.ts', default: 'src/index.default.ts', schemas: 'src/schemas/index.ts', otel: 'src/otel.ts' },
    format: ['esm'],
    dts: { only: true },
  }),
];
