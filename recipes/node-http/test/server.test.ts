import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { runScript } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));

describe('recipe: plain node:http', () => {
  readmeServerSuite((env) => runScript(`${dir}/server.mjs`, dir, env));
});
