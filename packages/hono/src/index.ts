import {
  createVerikitRoutes,
  type InviteHandler,
  unreadNodeRequest,
  type VerikitRoutes,
  type VerikitRoutesOptions,
  type WebhookBodySource,
} from '@verikit/core';
import type { Context, Hono } from 'hono';
import { HonoBase } from 'hono/hono-base';
import { fixedPathRouter } from './fixed-path-router.js';

/** Options of {@link verikitApp}, or a function of the first request's context (for secrets in `env(c)`). */
export type VerikitAppOptions = VerikitRoutesOptions<Context> | ((c: Context) => VerikitRoutesOptions<Context>);

const RAW_BODY_FIX =
  'A middleware read c.req.raw first: read bodies through c.req (c.req.json(), c.req.text() keep the bytes), or mount verikitApp before it.';

const respond = (answer: { status: number; headers: Record<string, string>; body: string }) =>
  new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers });

/** Where the raw body is: kept by Hono for an earlier `c.req.*()` read, used up by a raw read, or still on the wire. */
async function bodySource(c: Context): Promise<WebhookBodySource> {
  // Hono keeps what a middleware read through c.req and hands the same bytes out again.
  if (Object.keys(c.req.bodyCache).length > 0) return { kind: 'bytes', bytes: await c.req.arrayBuffer() };
  if (c.req.raw.bodyUsed) return { kind: 'consumed' };
  return { kind: 'stream', stream: c.req.raw.body };
}

/**
 * Hands late work to the Worker's `waitUntil` where the runtime gave Hono an execution context.
 * Looked up only when there is late work: the getter throws where there is none (Node, Bun, Deno,
 * whose processes keep running anyway), and a throw per request would cost the route.
 */
const waitUntilOf =
  (c: Context) =>
  (promise: Promise<unknown>): void => {
    let ctx: Context['executionCtx'];
    try {
      ctx = c.executionCtx;
    } catch {
      return;
    }
    ctx.waitUntil(promise);
  };

/**
 * A Hono sub-app with `POST /webhook`, `POST /invite/kyb` and `POST /invite/kyc`; Web APIs only, so
 * it runs on Node (`@hono/node-server`), Workers, Deno and Bun. Mount with `app.route('/verikit', ...)`.
 * @example
 * app.route('/verikit', verikitApp((c) => ({ webhook: { secret: env(c).VERIKIT_WEBHOOK_SECRET, store, onEvent } })));
 */
export function verikitApp(options: VerikitAppOptions): Hono {
  const adapter = { rawBodyFix: RAW_BODY_FIX };
  // Built once: eagerly from an object, or from the first request's context when given a function.
  let routes: VerikitRoutes<Context> | undefined = typeof options === 'function' ? undefined : createVerikitRoutes(options, adapter);
  const routesFor = (c: Context) => {
    routes ??= createVerikitRoutes((options as (c: Context) => VerikitRoutesOptions<Context>)(c), adapter);
    return routes;
  };
  // Mounted with app.route(), the routes move into the host's router: the sub-app brings no router of
  // its own (neither Hono's default one nor hono/tiny's), so a Worker carries only the host's.
  const app: Hono = new HonoBase({ router: fixedPathRouter() });
  app.all('/webhook', async (c) => {
    const webhook = routesFor(c).webhook;
    if (!webhook) return c.notFound();
    // On Node, c.req.raw is a stand-in that builds a full Request and web stream on first use of its
    // body (or bodyUsed): the Node request, while nothing has read it, gives the same bytes for far less.
    const incoming = unreadNodeRequest((c.env as { incoming?: unknown } | undefined)?.incoming);
    return respond(
      await webhook.receive({
        method: c.req.method,
        headers: incoming?.headers ?? c.req.raw.headers,
        body: incoming ? { kind: 'stream', stream: incoming } : await bodySource(c),
        waitUntil: waitUntilOf(c),
      }),
    );
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
