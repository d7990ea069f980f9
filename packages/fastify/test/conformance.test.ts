import { MemoryIdempotencyStore } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import Fastify, { type FastifyRequest } from 'fastify';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { conformanceSuite } from '../../../test-support/conformance.js';
import { verikitPlugin } from '../src/index.js';

// Fastify's own parsers are per context and never reach the plugin's; a host hook can still read the raw stream.
conformanceSuite<FastifyRequest>({
  name: 'fastify',
  header: (req, name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
  globalParserLosesRawBody: false,
  start: async (options, { parser }) => {
    const app = Fastify();
    if (parser === 'raw-reader')
      app.addHook('onRequest', (req, _reply, done) => void req.raw.on('data', () => {}).once('end', () => done()));
    await app.register(verikitPlugin, { prefix: '/verikit', ...options });
    app.post('/api/echo', async (req) => ({ echoed: req.body }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  startTwo: async (first, second) => {
    const app = Fastify();
    await app.register(verikitPlugin, { prefix: '/one', ...first });
    await app.register(verikitPlugin, { prefix: '/two', ...second });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
});

describe('the Fastify plugin, when core fails', () => {
  it('a webhook route whose answer fails (a custom store that answers a claim with nothing) -> 500 from the scope, no hang, nothing unhandled', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const unhandled: unknown[] = [];
    const hear = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', hear);
    const app = Fastify();
    try {
      // A store breaking its contract: reading the claim's status throws inside core, so its answer itself fails.
      const broken = Object.assign(new MemoryIdempotencyStore(), { claim: async () => null as never });
      await app.register(verikitPlugin, {
        prefix: '/verikit',
        webhook: { secret, store: broken, onEvent: () => {}, logger: false },
      });
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const signed = signWebhook({ secret, payload: { type: 'kyb.case.status_changed' } });
      const response = await request(`${url}/verikit/webhook`, { method: 'POST', headers: signed.headers, body: signed.body });
      expect([response.statusCode, await response.body.json()]).toEqual([500, { error: 'internal_error' }]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', hear);
      await app.close();
    }
  });
});
