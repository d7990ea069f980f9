import { createClientWithTransport, lazyParsers, type VerikitClient } from './client/client.js';
import { type ClientOptions, clientOptionsFromEnv, withVariableNames } from './client/options.js';
import { createFetchTransport } from './client/transport-fetch.js';
import { createNodeTransport, type UndiciTransportOptions } from './client/transport-undici.js';
import { nodeAesGcm } from './privacy/aes-node.js';
import { createSealerWith, type EncryptionOptions, type PayloadSealer } from './privacy/seal.js';
import type { AdapterInfo, VerikitRoutes, VerikitRoutesOptions } from './routes.js';
import { type SharedTimeouts, sharedTimeoutsOn } from './store/timeout.js';
import type { TelemetryOption } from './telemetry/api.js';
import { optionObserver } from './telemetry/observer.js';
import { DeadlineSweeper } from './util/deadlines.js';
import { readAnyBody } from './util/read-node-body.js';
import { runtimeName } from './util/runtime.js';
import type { VerifyWebhookInput } from './webhook/api.js';
import { fetchWebhookHandlerOn, verifyWebhookOn, verikitRoutesOn, webhookHandlerOn, webhookVerifierOn } from './webhook/api.js';
import type { FetchWebhookHandler, FetchWebhookOptions } from './webhook/fetch-handler.js';
import type { WebhookHandler, WebhookHandlerOptions } from './webhook/handler.js';
import { nodeHmac } from './webhook/hmac-node.js';
import type { VerifiedDelivery, WebhookVerifier, WebhookVerifierOptions } from './webhook/verify.js';

export * from './shared.js';
export { unreadNodeRequest } from './util/node-request.js';
export type { VerifyWebhookInput } from './webhook/api.js';
export type { FetchWebhookHandler, FetchWebhookOptions } from './webhook/fetch-handler.js';

// zod and the schemas load at a client's first call: a process that only receives webhooks never loads them.
const parsers = lazyParsers(() => import('./client/parsers-node.js'));

// One interval sweeps every deadline of a route on Node, where a timer per request costs (bench/adapters.mjs).
// Telemetry: the `telemetry` option, or `@opentelemetry/api` found by itself when installed.
const platform = {
  engine: nodeHmac,
  // Node frameworks hand over the Node request itself (Hono on Node included), besides Web streams.
  readBody: readAnyBody,
  makeDeadlines: (lengthMs: number) => new DeadlineSweeper(lengthMs),
  observe: (telemetry: TelemetryOption) => (telemetry === false ? undefined : optionObserver(telemetry)),
};

/** Client options on Node: an undici dispatcher (a proxy, say) and pool size may be given. */
export interface NodeClientOptions extends ClientOptions, UndiciTransportOptions {}

/**
 * Creates an API client. On Node it uses one keep-alive undici Agent (or your `fetch`/`dispatcher`).
 * @example
 * const client = createClient({ apiKey: process.env.VERIKIT_API_KEY!, baseUrl: 'https://api.example' });
 * const details = await client.kyb.getCase('business-42');
 */
export function createClient(options: NodeClientOptions): VerikitClient {
  const transport =
    options?.fetch !== undefined
      ? createFetchTransport(options.fetch)
      : createNodeTransport({
          dispatcher: options?.dispatcher,
          connections: options?.connections,
          keepAliveTimeoutMs: options?.keepAliveTimeoutMs,
        });
  return createClientWithTransport(options, transport, runtimeName(), parsers);
}

/** Creates a client from `VERIKIT_API_KEY`, `VERIKIT_BASE_URL`, and optionally `VERIKIT_WEB_URL`, `VERIKIT_PUBLIC_KEY`, `VERIKIT_ENVIRONMENT`. */
export function clientFromEnv(
  overrides: Partial<NodeClientOptions> = {},
  env: Record<string, string | undefined> = process.env,
): VerikitClient {
  return withVariableNames(createClient({ ...clientOptionsFromEnv(env), ...overrides }));
}

/**
 * A Svix webhook verifier (node:crypto); secrets are decoded and checked now, not at the first delivery.
 * @example
 * const verifier = createWebhookVerifier({ secrets: process.env.VERIKIT_WEBHOOK_SECRET! });
 * const { id } = await verifier.verify(req.headers, rawBody);
 */
export const createWebhookVerifier: (options: WebhookVerifierOptions) => WebhookVerifier = /* @__PURE__ */ webhookVerifierOn(platform);

/** Verifies one delivery (decoding the secrets on each call; keep a verifier for repeated use). */
export const verifyWebhook: (input: VerifyWebhookInput) => Promise<VerifiedDelivery> = /* @__PURE__ */ verifyWebhookOn(platform);

/**
 * The framework-neutral webhook route: verify, dedupe by svix-id, run `onEvent` once, answer.
 * @example
 * const handle = createWebhookHandler({ secret, store: new MemoryIdempotencyStore(), client, onEvent: async (ctx) => save(await ctx.fetchResult()) });
 * const { status, headers, body } = await handle({ method: 'POST', headers: req.headers, body: rawBody });
 */
export const createWebhookHandler: (options: WebhookHandlerOptions) => WebhookHandler = /* @__PURE__ */ webhookHandlerOn(platform);

/**
 * The route set every adapter mounts (webhook, KYB and KYC invites), framework-neutral.
 * Adapters call this; integrators normally use `@verikit/express`, `@verikit/fastify` or `@verikit/hono`.
 */
export const createVerikitRoutes: <Req>(options: VerikitRoutesOptions<Req>, adapter?: AdapterInfo) => VerikitRoutes<Req> =
  /* @__PURE__ */ verikitRoutesOn(platform);

/**
 * The webhook route as a Fetch handler, `(request: Request) => Promise<Response>`: for a Next.js
 * route handler, `Bun.serve`, `Deno.serve` or a Worker's `fetch`. The body is read as a stream
 * within the route's limits.
 * @example
 * const handle = createFetchWebhookHandler({ secret, store: new MemoryIdempotencyStore(), client, onEvent });
 * export const POST = (request: Request) => handle(request);
 */
export const createFetchWebhookHandler: (options: FetchWebhookOptions) => FetchWebhookHandler =
  /* @__PURE__ */ fetchWebhookHandlerOn(platform);

/**
 * The sealer the storage engines use for their `encryption` option: AES-256-GCM under the first key,
 * opened with any, bound to the record each value belongs to; `undefined` when `option` is.
 * @example
 * const sealer = createPayloadSealer({ keys: [{ id: '2026-11', key: process.env.VERIKIT_ENCRYPTION_KEY! }] });
 */
export const createPayloadSealer = (option: EncryptionOptions | undefined): PayloadSealer | undefined =>
  createSealerWith(nodeAesGcm, option);

/**
 * `withTimeout` for the many calls of a store's hot path, all bounded by one `timeoutMs`: their
 * deadlines share one interval that sweeps them (arming one appends to a list, where a timer of its
 * own costs about a microsecond per call), held while a call is pending, and fire up to a tenth of
 * `timeoutMs` (at most 250 ms) late. The Web build's arms a timer per call.
 * @example
 * const bounded = sharedTimeouts(5_000);
 * const status = await bounded(redis.evalsha(claim, 1, key), 'a claim');
 */
export const sharedTimeouts: SharedTimeouts = /* @__PURE__ */ sharedTimeoutsOn((lengthMs) => new DeadlineSweeper(lengthMs, true));
