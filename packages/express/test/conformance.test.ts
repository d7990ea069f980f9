import type { AddressInfo } from 'node:net';
import express, { type Express, type Request } from 'express';
import express4 from 'express4';
import { conformanceSuite, type HostParser } from '../../../test-support/conformance.js';
import { verikitRouter } from '../src/index.js';

type Parsers = Pick<typeof express, 'json' | 'urlencoded'>;
const keepRaw = (req: unknown, _res: unknown, buf: Buffer) => Object.assign(req as object, { rawBody: buf });

/** The host's body parsers, set up as a host app would before mounting verikit. */
function hostParsers(app: Express, parsers: Parsers, parser: HostParser): void {
  if (parser === 'global') app.use(parsers.json());
  if (parser === 'global-keeping-raw') app.use(parsers.json({ limit: '1mb', verify: keepRaw }));
  if (parser === 'global-form') {
    app.use(parsers.urlencoded({ extended: false }));
    app.use(parsers.json({ limit: '1mb', verify: keepRaw }));
  }
  if (parser === 'raw-reader') app.use((req, _res, next) => req.on('data', () => {}).once('end', () => next()));
}

async function listen(app: Express) {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// Express 5 and 4 with their own parsers, and Express 4 with body-parser 2 (Express 5's) registered globally.
for (const [name, framework, parsers] of [
  ['express 5', express, express],
  ['express 4', express4, express4],
  ['express 4 + body-parser 2', express4, express],
] as const) {
  conformanceSuite<Request>({
    name,
    header: (req, header) => req.get(header),
    globalParserLosesRawBody: true,
    start: async (options, { parser }) => {
      const app = framework() as Express;
      hostParsers(app, parsers, parser);
      app.use('/verikit', verikitRouter(options));
      app.post('/api/echo', parsers.json(), (req, res) => {
        res.json({ echoed: req.body });
      });
      return listen(app);
    },
    startTwo: async (first, second) => {
      const app = framework() as Express;
      app.use('/one', verikitRouter(first));
      app.use('/two', verikitRouter(second));
      return listen(app);
    },
  });
}
