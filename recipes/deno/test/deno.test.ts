import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { runCommand } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));
// Deno from the npm registry, a dev dependency of this recipe.
const deno = `${dir}/node_modules/.bin/deno`;
// Exactly the permissions the recipe documents: the network on loopback, the variables it reads, and reading its files.
const VARIABLES = [
  'VERIKIT_API_KEY',
  'VERIKIT_BASE_URL',
  'VERIKIT_WEB_URL',
  'VERIKIT_PUBLIC_KEY',
  'VERIKIT_ENVIRONMENT',
  'VERIKIT_WEBHOOK_SECRET',
  'PORT',
];

describe('recipe: Deno.serve', () => {
  readmeServerSuite(
    (env) =>
      runCommand(
        deno,
        ['run', '--no-prompt', '--allow-net=127.0.0.1', '--allow-read', `--allow-env=${VARIABLES.join(',')}`, 'server.ts'],
        dir,
        { ...env, DENO_NO_UPDATE_CHECK: '1' },
      ),
    { invitePath: null },
  );
});
