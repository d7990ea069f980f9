import type { VerikitClient } from '../client/client.js';
import type { VerikitRoutes, VerikitRoutesOptions, WebhookRoute, WebhookRouteOptions } from '../routes.js';

/** Options of {@link FetchWebhookHandler}: the webhook route's, plus the client `ctx.fetchResult()` reads through. */
export type FetchWebhookOptions = WebhookRouteOptions & {
  /** The API client for `ctx.fetchResult()` (inline mode), made by `createClient` or `clientFromEnv`. */
  client?: VerikitClient;
};

/** What a Fetch runtime may hand over with the request: a Worker's `ctx` fits. */
export interface FetchRequestContext {
  /** Keeps the runtime alive for work that outlives the answer (an `onEvent` past its deadline). */
  waitUntil?(promise: Promise<unknown>): void;
}

/** The webhook route as a Fetch handler: a `Request` (and a Worker's `ctx`) in, a `Response` out. */
export type FetchWebhookHandler = (request: Request, context?: FetchRequestContext) => Promise<Response>;

/** Builds the Fetch handler over the platform's route factory. */
export function fetchWebhookHandlerWith(
  options: FetchWebhookOptions,
  makeRoutes: (o: VerikitRoutesOptions<Request>) => VerikitRoutes<Request>,
): FetchWebhookHandler {
  const { client, ...webhook } = options ?? ({} as FetchWebhookOptions);
  // Given webhook options, the route set always has its webhook route.
  const route = makeRoutes({ client, webhook }).webhook as WebhookRoute;
  return async (request) => {
    // The body stays a stream: it is read within maxBodyBytes and bodyTimeoutMs, never buffered whole first.
    const answer = await route.receive({
      method: request.method,
      headers: request.headers,
      body: { kind: 'stream', stream: request.body },
    });
    return new Response(answer.body === '' ? null : answer.body, { status: answer.status, headers: answer.headers });
  };
}
