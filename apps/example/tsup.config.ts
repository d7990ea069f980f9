import { packageBuild } from '../../tsup.package.js';

// An app, not a library: one ESM entry, no type declarations.
export default packageBuild({ entry: { main: 'src/main.ts' }, format: ['esm'], dts: false });
