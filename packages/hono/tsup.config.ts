import { packageBuild } from '../../tsup.package.js';

// Web APIs only: the adapter must load on Workers, Deno and Bun as well as Node.
export default packageBuild({ platform: 'neutral', target: 'es2022' });
