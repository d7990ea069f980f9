import type { AddressInfo } from 'node:net';
import express, { type Request } from 'express';
import express4 from 'express4';
import { conformanceSuite } from '../../../test-support/conformance.js';
import { verikitRouter } from '../src/index.js';

// Express 5 and 4, each started the way a host app would: its own JSON route, and a global parser when asked.
for (const [name, framework] of [
  ['express 5', express],
  ['express 4', express4],
] as const) {
  conformanceSuite<Request>({
    name,
    header: (req, header) => req.get(header),
    globalParserLosesRawBody: true,
    start: async (options, { parser }) => {
      const app = framework();
      if (parser === 'global') app.use(framework.json());
      if (parser === 'global-keeping-raw') app.use(framework.json({ verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }));
      app.use('/verikit', verikitRouter(options));
      app.post('/api/echo', framework.json(), (req, res) => {
        res.json({ echoed: req.body });
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    },
  });
}
