import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '@verikit/testing';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runScript } from '../../../test-support/readme-snippet.js';
import { readmeServerSuite } from '../../../test-support/readme-suite.js';

const dir = fileURLToPath(new URL('..', import.meta.url));
const source = readFileSync(`${dir}/server.mjs`, 'utf8');
// The same program on Express 4 (installed here as `express4`), changed in its import only.
const express4 = `${dir}/.server-express4.mjs`;
writeFileSync(express4, source.replace("from 'express';", "from 'express4';"));
afterAll(() => rmSync(express4, { force: true }));

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe.each([
  ['Express 5', `${dir}/server.mjs`],
  ['Express 4', express4],
])('recipe: a global express.json() on %s', (_name, file) => {
  readmeServerSuite((env) => runScript(file, dir, env));

  it('a 600 kB signed delivery passes the host parser and verifies; the app keeps its JSON routes', async () => {
    const port = await freePort();
    const server = runScript(file, dir, {
      PORT: String(port),
      VERIKIT_API_KEY: 'k',
      VERIKIT_BASE_URL: 'http://127.0.0.1:9',
      VERIKIT_WEB_URL: 'http://127.0.0.1:9',
      VERIKIT_PUBLIC_KEY: 'pk',
      VERIKIT_WEBHOOK_SECRET: SECRET,
    });
    try {
      await server.waitFor('listening');
      const signed = signWebhook({ secret: SECRET, payload: { type: 'other.event', data: { padding: 'x'.repeat(600_000) } } });
      const webhook = await request(`http://127.0.0.1:${port}/verikit/webhook`, {
        method: 'POST',
        headers: { ...signed.headers, 'content-type': 'application/json' },
        body: signed.body,
      });
      // No refId to fetch: onEvent throws and the answer is 500, but only after a passed signature check.
      expect(await webhook.body.json()).toEqual({ error: 'handler_failed' });
      const orders = await request(`http://127.0.0.1:${port}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"id":7}',
      });
      expect(await orders.body.json()).toEqual({ received: { id: 7 } });
    } finally {
      await server.stop();
    }
  });
});
