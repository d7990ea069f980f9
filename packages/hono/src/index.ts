import {
  createVerikitRoutes,
  declaredLengthExceeds,
  type InviteHandler,
  type VerikitRoutes,
  type VerikitRoutesOptions,
  webhookResponses,
} from '@verikit/core';
import { type Context, Hono } from 'hono';

/** Options of {@link verikitApp}, or a function of the first request's context (for secrets in `env(c)`). */
export type VerikitAppOptions = VerikitRoutesOptions<Context> | ((c: Context) => VerikitRoutesOptions<Context>);

const respond = (answer: { status: number; headers: Record<string, string>; body: string }) =>
  new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers });

/**
 * A Hono sub-app with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc`; Web APIs only, so
 * it runs on Node (`@hono/node-server`), Workers, Deno and Bun. Mount with `app.route('/verikit', ...)`.
 * @example
 * app.route('/verikit', verikitApp((c) => ({ webhook: { secret: env(c).VERIKIT_WEBHOOK_SECRET, store, onEvent } })));
 */
export function verikitApp(options: VerikitAppOptions): Hono {
  // Built once: eagerly from an object, or from the first request's context when given a function.
  let routes: VerikitRoutes<Context> | undefined = typeof options === 'function' ? undefined : createVerikitRoutes(options);
  const routesFor = (c: Context) => {
    routes ??= createVerikitRoutes((options as (c: Context) => VerikitRoutesOptions<Context>)(c));
    return routes;
  };
  const app = new Hono();
  app.all('/webhook', async (c) => {
    const webhook = routesFor(c).webhook;
    if (!webhook) return c.notFound();
    const headers = c.req.raw.headers;
    if (declaredLengthExceeds(headers, webhook.maxBodyBytes)) return respond(webhookResponses.payloadTooLarge());
    // Hono caches a body another middleware already read, so these are still the exact bytes.
    const body = c.req.method === 'GET' || c.req.method === 'HEAD' ? undefined : await c.req.arrayBuffer();
    return respond(await webhook.handle({ method: c.req.method, headers, body }));
  });
  const invite = (pick: (r: VerikitRoutes<Context>) => InviteHandler<Context> | undefined) => async (c: Context) => {
    const handle = pick(routesFor(c));
    if (!handle) return c.notFound();
    return respond(await handle({ method: c.req.method, headers: c.req.raw.headers, request: c }));
  };
  app.all(
    '/invite/kyb',
    invite((r) => r.inviteKyb),
  );
  app.all(
    '/invite/kyc',
    invite((r) => r.inviteKyc),
  );
  return app;
}
