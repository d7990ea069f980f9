import { createVerikitRoutes, type InviteHandler, readNodeBody, type VerikitRoutesOptions, type WebhookBodySource } from '@verikit/core';
import { type Request, type RequestHandler, type Response, Router } from 'express';

/** Options of {@link verikitRouter}: the webhook and invite routes, each mounted only when given. */
export type VerikitRouterOptions = VerikitRoutesOptions<Request>;

const RAW_BODY_FIX =
  "Mount verikitRouter before express.json(), or keep the raw bytes with express.json({ limit: '1mb', verify: (req, _res, buf) => { req.rawBody = buf } }); the limit must be at least the webhook maxBodyBytes, or the host's parser answers 413 first.";

function send(res: Response, answer: { status: number; headers: Record<string, string>; body: string }): void {
  res.status(answer.status).set(answer.headers).end(answer.body);
}

/** Where the raw body is: kept by the host (`express.raw()`, a `verify` callback), still on the wire, or read by a parser that kept nothing. */
function bodySource(req: Request): WebhookBodySource {
  if (Buffer.isBuffer(req.body)) return { kind: 'bytes', bytes: req.body };
  const kept = (req as Request & { rawBody?: unknown }).rawBody;
  if (Buffer.isBuffer(kept) || typeof kept === 'string') return { kind: 'bytes', bytes: kept };
  // The stream itself says it was read: body-parser 2 (Express 5's) does not set the `req._body`
  // flag that Express 4's own parsers check, so that flag cannot be trusted.
  if (req.readableEnded) return { kind: 'consumed' };
  return { kind: 'stream', stream: req, read: readNodeBody };
}

/**
 * An Express Router with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc`.
 * Works with Express 4 and 5; reads raw bytes on the webhook route only.
 * @example
 * app.use('/verikit', verikitRouter({ client, webhook: { secret, store, onEvent }, invite: { kyb: { resolveBusiness } } }));
 */
export function verikitRouter(options: VerikitRouterOptions): Router {
  const routes = createVerikitRoutes(options, { rawBodyFix: RAW_BODY_FIX });
  const router = Router();
  const webhook = routes.webhook;
  if (webhook) {
    router.all('/webhook', (req, res, next) => {
      webhook.receive({ method: req.method, headers: req.headers, body: bodySource(req) }).then((answer) => send(res, answer), next);
    });
  }
  const invite =
    (handle: InviteHandler<Request>): RequestHandler =>
    (req, res, next) => {
      handle({ method: req.method, headers: req.headers, request: req }).then((answer) => send(res, answer), next);
    };
  if (routes.inviteKyb) router.all('/invite/kyb', invite(routes.inviteKyb));
  if (routes.inviteKyc) router.all('/invite/kyc', invite(routes.inviteKyc));
  return router;
}
