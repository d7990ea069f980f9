import { packageBuild } from '../../tsup.package.js';

export default [
  packageBuild(),
  // The `verikit-fake` command: ESM only, with its shebang kept by tsup.
  packageBuild({ entry: { bin: 'src/bin.ts' }, format: ['esm'], dts: false, sourcemap: false }),
];
