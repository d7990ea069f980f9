import { createVerikitRoutes, type InviteHandler, type VerikitRoutesOptions, webhookResponses } from '@verikit/core';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, Router } from 'express';

/** Options of {@link verikitRouter}: the webhook and invite routes, each mounted only when given. */
export type VerikitRouterOptions = VerikitRoutesOptions<Request>;

const RAW_BODY_FIX =
  'Mount verikitRouter before express.json(), or keep the raw bytes with express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }).';

function send(res: Response, answer: { status: number; headers: Record<string, string>; body: string }): void {
  res.status(answer.status).set(answer.headers).end(answer.body);
}

/** The raw bytes of the request: ours (express.raw), the host's `req.rawBody`, or `undefined` if a parser ate them. */
function rawBodyOf(req: Request): Buffer | string | null | undefined {
  if (Buffer.isBuffer(req.body)) return req.body;
  const kept = (req as Request & { rawBody?: unknown }).rawBody;
  if (Buffer.isBuffer(kept) || typeof kept === 'string') return kept;
  // The request declared a body but no raw form of it is left: a parser got there first.
  const declaredBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  return declaredBody ? undefined : null;
}

/**
 * An Express Router with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc`.
 * Works with Express 4 and 5; reads raw bytes on the webhook route only.
 * @example
 * app.use('/verikit', verikitRouter({ client, webhook: { secret, store, onEvent }, invite: { kyb: { resolveBusiness } } }));
 */
export function verikitRouter(options: VerikitRouterOptions): Router {
  const routes = createVerikitRoutes(options);
  const router = Router();
  if (routes.webhook) {
    const { handle, maxBodyBytes } = routes.webhook;
    const webhook: RequestHandler = (req, res, next) => {
      const body = rawBodyOf(req);
      if (body === undefined) return send(res, webhookResponses.rawBodyUnavailable(RAW_BODY_FIX));
      handle({ method: req.method, headers: req.headers, body }).then((answer) => send(res, answer), next);
    };
    const tooLarge: ErrorRequestHandler = (error, _req, res, next) =>
      (error as { type?: string }).type === 'entity.too.large' ? send(res, webhookResponses.payloadTooLarge()) : next(error);
    router.all('/webhook', express.raw({ type: () => true, limit: maxBodyBytes }), webhook, tooLarge);
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
