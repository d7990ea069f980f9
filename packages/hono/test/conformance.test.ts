import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { conformanceSuite } from '../../../test-support/conformance.js';
import { verikitApp } from '../src/index.js';

function listen(app: Hono) {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  return new Promise<{ url: string; close(): Promise<void> }>((resolve) =>
    server.once('listening', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

conformanceSuite<Context>({
  name: 'hono',
  header: (c, name) => c.req.header(name),
  globalParserLosesRawBody: false,
  start: async (options, { parser }) => {
    const app = new Hono();
    if (parser !== 'none') {
      // Host middleware that reads every body before any route sees it: through c.req (which keeps a copy), or raw.
      app.use('*', async (c, next) => {
        const type = c.req.header('content-type') ?? '';
        if (parser === 'raw-reader') {
          if (c.req.raw.body) await c.req.raw.text();
        } else if (type.includes('json')) await c.req.json().catch(() => undefined);
        else if (parser === 'global-form' && type.includes('form')) await c.req.parseBody();
        await next();
      });
    }
    app.route('/verikit', verikitApp(options));
    app.post('/api/echo', async (c) => c.json({ echoed: await c.req.json() }));
    return listen(app);
  },
  startTwo: async (first, second) => {
    const app = new Hono();
    app.route('/one', verikitApp(first));
    app.route('/two', verikitApp(second));
    return listen(app);
  },
});
