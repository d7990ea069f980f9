import { createClientWithTransport, type VerikitClient } from './client/client.js';
import { type ClientOptions, clientOptionsFromEnv, withVariableNames } from './client/options.js';
import * as parsers from './client/parsers.js';
import { createFetchTransport } from './client/transport-fetch.js';
import { webAesGcm } from './privacy/aes-web.js';
import { createSealerWith, type EncryptionOptions, type PayloadSealer } from './privacy/seal.js';
import type { AdapterInfo, VerikitRoutes, VerikitRoutesOptions } from './routes.js';
import { type SharedTimeouts, sharedTimeoutsOn } from './store/timeout.js';
import { webObserver } from './telemetry/seam.js';
import { TimerDeadlines } from './util/deadlines.js';
import type { NodeRequestLike } from './util/node-request.js';
import { readWebStreamBody } from './util/read-web-only.js';
import { runtimeName } from './util/runtime.js';
import type { VerifyWebhookInput } from './webhook/api.js';
import { fetchWebhookHandlerOn, verifyWebhookOn, verikitRoutesOn, webhookHandlerOn, webhookVerifierOn } from './webhook/api.js';
import type { FetchWebhookHandler, FetchWebhookOptions } from './webhook/fetch-handler.js';
import type { WebhookHandler, WebhookHandlerOptions } from './webhook/handler.js';
import { webHmac } from './webhook/hmac-web.js';
import type { VerifiedDelivery, WebhookVerifier, WebhookVerifierOptions } from './webhook/verify.js';

export * from './shared.js';
export type { VerifyWebhookInput } from './webhook/api.js';
export type { FetchWebhookHandler, FetchWebhookOptions } from './webhook/fetch-handler.js';

/**
 * The Node build's way to a Node request nobody has read (`@hono/node-server`'s `c.env.incoming`);
 * outside Node there is none, so it answers undefined and adapters read the Web request.
 */
export const unreadNodeRequest = (_value: unknown): NodeRequestLike | undefined => undefined;

// A timer per deadline, armed within its request: Workers cancel a request's timers when it ends.
// Telemetry only through openTelemetry(api) (`@verikit/core/otel`): a Worker that does not pass it bundles no OpenTelemetry glue.
// The webhook functions below are bound to it one by one, marked pure: a bundler keeps only those an app calls.
const platform = {
  engine: webHmac,
  makeDeadlines: (lengthMs: number) => new TimerDeadlines(lengthMs),
  readBody: readWebStreamBody,
  observe: webObserver,
};

/** Client options outside Node (same as on Node, minus the undici pool settings). */
export interface NodeClientOptions extends ClientOptions {}

/**
 * Creates an API client over `fetch` (the global one unless you pass `fetch`).
 * @example
 * const client = createClient({ apiKey: env.VERIKIT_API_KEY, baseUrl: 'https://api.example' });
 */
export function createClient(options: ClientOptions): VerikitClient {
  // Imported statically: a bundler keeps them only where createClient is used, and tree-shakes zod.
  return createClientWithTransport(options, createFetchTransport(options?.fetch), runtimeName(), () => parsers);
}

/** Creates a client from `VERIKIT_*` variables; pass the env record where there is no `process.env` (Workers). */
export function clientFromEnv(
  overrides: Partial<ClientOptions> = {},
  env: Record<string, string | undefined> = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {},
): VerikitClient {
  return withVariableNames(createClient({ ...clientOptionsFromEnv(env), ...overrides }));
}

/**
 * A Svix webhook verifier (WebCrypto); secrets are decoded and checked now, not at the first delivery.
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
  createSealerWith(webAesGcm, option);

/**
 * `withTimeout` for the many calls of a store, all bounded by one `timeoutMs`. Here a timer per call
 * (a Worker cancels a request's timers when it ends); Node's build sweeps them with one interval.
 */
export const sharedTimeouts: SharedTimeouts = /* @__PURE__ */ sharedTimeoutsOn((lengthMs) => new TimerDeadlines(lengthMs));
