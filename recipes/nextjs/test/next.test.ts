import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe } from 'vitest';
import { runScript } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));
const next = `${dir}/node_modules/next/dist/bin/next`;
const quiet = { NEXT_TELEMETRY_DISABLED: '1' };

// A production build, as deployed: type-checked by Next, each route bundled for its runtime.
beforeAll(async () => {
  await promisify(execFile)(process.execPath, [next, 'build'], { cwd: dir, env: { ...process.env, ...quiet } }).catch(
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`next build failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`);
    },
  );
});

describe.each([
  ['Node.js', '/api/verikit/webhook'],
  ['edge', '/api/verikit/edge/webhook'],
])('recipe: Next.js App Router route handler on the %s runtime', (_runtime, webhookPath) => {
  readmeServerSuite(
    (env) => runScript(next, dir, { ...quiet, ...env }, ['start', '--hostname', '127.0.0.1', '--port', env.PORT as string]),
    { webhookPath, invitePath: null, ready: 'Ready' },
  );
});
