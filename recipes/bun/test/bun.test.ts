import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { runCommand } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));
// Bun from the npm registry, a dev dependency of this recipe.
const bun = `${dir}/node_modules/.bin/bun`;

describe('recipe: Bun.serve', () => {
  readmeServerSuite((env) => runCommand(bun, ['server.ts'], dir, env), { invitePath: null });
});
