import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort, runScript } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));

// Compiled with tsc as a Nest project is: decorators and their metadata, strict types (the
// Fastify platform's TS2769 pitfall would fail here).
beforeAll(async () => {
  await promisify(execFile)(`${dir}/node_modules/.bin/tsc`, ['-p', 'tsconfig.json'], { cwd: dir }).catch(
    (error: { stdout?: string; message: string }) => {
      throw new Error(`the NestJS recipe does not compile:\n${error.stdout || error.message}`);
    },
  );
});

describe.each([
  ['Express', 'main-express.js'],
  ['Fastify', 'main-fastify.js'],
])('recipe: NestJS on the %s platform', (_platform, main) => {
  const start = (env: Record<string, string>) => runScript(`${dir}/build/${main}`, dir, env);
  readmeServerSuite(start);

  it("the app's own routes keep Nest's JSON parsing", async () => {
    const port = await freePort();
    const app = start({
      PORT: String(port),
      VERIKIT_API_KEY: 'k',
      VERIKIT_BASE_URL: 'http://127.0.0.1:9',
      VERIKIT_WEB_URL: 'http://127.0.0.1:9',
      VERIKIT_PUBLIC_KEY: 'pk',
      VERIKIT_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    });
    try {
      await app.waitFor('listening', 20_000);
      const order = await request(`http://127.0.0.1:${port}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"id":7}',
      });
      expect(await order.body.json()).toEqual({ received: { id: 7 } });
      const unsigned = await request(`http://127.0.0.1:${port}/verikit/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"id":7}',
      });
      expect(unsigned.statusCode).toBe(400);
      expect(await unsigned.body.json()).toMatchObject({ error: 'invalid_signature' });
    } finally {
      await app.stop();
    }
  });
});
