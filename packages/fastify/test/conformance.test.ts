import Fastify, { type FastifyRequest } from 'fastify';
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
