import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { conformanceSuite } from '../../../test-support/conformance.js';
import { verikitApp } from '../src/index.js';

conformanceSuite<Context>({
  name: 'hono',
  header: (c, name) => c.req.header(name),
  globalParserLosesRawBody: false,
  start: async (options, { parser }) => {
    const app = new Hono();
    if (parser !== 'none') {
      // A host middleware that parses every JSON body before any route sees it.
      app.use('*', async (c, next) => {
        if (c.req.header('content-type')?.includes('json')) await c.req.json().catch(() => undefined);
        await next();
      });
    }
    app.route('/verikit', verikitApp(options));
    app.post('/api/echo', async (c) => c.json({ echoed: await c.req.json() }));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
});
