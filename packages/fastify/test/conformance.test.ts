import Fastify, { type FastifyRequest } from 'fastify';
import { conformanceSuite } from '../../../test-support/conformance.js';
import { verikitPlugin } from '../src/index.js';

// Fastify's own JSON parser is always global; 'global-keeping-raw' changes nothing for it.
conformanceSuite<FastifyRequest>({
  name: 'fastify',
  header: (req, name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
  globalParserLosesRawBody: false,
  start: async (options) => {
    const app = Fastify();
    await app.register(verikitPlugin, { prefix: '/verikit', ...options });
    app.post('/api/echo', async (req) => ({ echoed: req.body }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
});
