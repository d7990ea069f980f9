// verikit on plain node:http: core's route set, mounted by hand.
import { createServer } from 'node:http';
import { clientFromEnv, createVerikitRoutes, MemoryIdempotencyStore, readNodeBody } from '@verikit/core';

const routes = createVerikitRoutes({
  client: clientFromEnv(),
  webhook: {
    secret: process.env.VERIKIT_WEBHOOK_SECRET,
    store: new MemoryIdempotencyStore(),
    onEvent: async (ctx) => {
      const { kind, refId, result } = await ctx.fetchResult();
      console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
    },
  },
  invite: {
    // Your auth decides who is signed in (here a header, for the example); null answers 401.
    kyb: { resolveBusiness: (req) => (req.headers['x-business-id'] ? { refId: String(req.headers['x-business-id']) } : null) },
  },
});

/** Writes a verikit answer (status, headers, body) to the Node response. */
const send = (res, answer) => res.writeHead(answer.status, answer.headers).end(answer.body);

const server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const fail = (error) => {
    console.error(error);
    if (!res.headersSent) send(res, { status: 500, headers: {}, body: '' });
  };
  if (path === '/verikit/webhook') {
    // The request stream itself, with its reader: verikit reads it within its size and time limits.
    routes.webhook
      .receive({ method: req.method ?? 'GET', headers: req.headers, body: { kind: 'stream', stream: req, read: readNodeBody } })
      .then((a) => send(res, a), fail);
  } else if (path === '/verikit/invite/kyb') {
    routes.inviteKyb({ method: req.method ?? 'GET', headers: req.headers, request: req }).then((a) => send(res, a), fail);
  } else {
    send(res, { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' });
  }
});
// Node's own limits still apply to everything else; tighter than the defaults for a public endpoint.
server.headersTimeout = 10_000;
server.requestTimeout = 30_000;

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
