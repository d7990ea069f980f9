import { type AdapterInfo, createRoutesWith, type RoutePlatform, type VerikitRoutes, type VerikitRoutesOptions } from '../routes.js';
import type { TelemetryOption } from '../telemetry/api.js';
import type { WebhookObserver } from '../telemetry/seam.js';
import { type FetchWebhookHandler, type FetchWebhookOptions, fetchWebhookHandlerWith } from './fetch-handler.js';
import { createHandlerWith, type WebhookHandler, type WebhookHandlerOptions } from './handler.js';
import type { HmacEngine } from './hmac.js';
import type { WebhookBody, WebhookHeaders } from './input.js';
import {
  createDeliveryCheck,
  createVerifierWith,
  type VerifiedDelivery,
  type WebhookVerifier,
  type WebhookVerifierOptions,
} from './verify.js';

/** Input of the one-shot `verifyWebhook`. */
export interface VerifyWebhookInput extends Omit<WebhookVerifierOptions, 'secrets'> {
  /** The signing secret(s). */
  secrets: string | readonly string[];
  /** The request headers. */
  headers: WebhookHeaders;
  /** The raw body, unparsed. */
  body: WebhookBody;
}

/** What the webhook functions are bound to in each build: its HMAC engine, its deadlines and body reader, and how it reads the `telemetry` option. */
export interface WebhookPlatform<Key> extends RoutePlatform {
  engine: HmacEngine<Key>;
  /** How deliveries are traced and answers measured for a `telemetry` option; `undefined` when they are not. */
  observe: (telemetry: TelemetryOption) => WebhookObserver | undefined;
}

// One binder per public function, not one object holding them all: each build binds them one export
// at a time (annotated pure), so an app's bundler keeps only the functions the app calls.

/** `createWebhookVerifier` on a platform. */
export const webhookVerifierOn =
  <Key>(platform: WebhookPlatform<Key>) =>
  (options: WebhookVerifierOptions): WebhookVerifier =>
    createVerifierWith(options, platform.engine);

/** `verifyWebhook` on a platform. */
export const verifyWebhookOn =
  <Key>(platform: WebhookPlatform<Key>) =>
  (input: VerifyWebhookInput): Promise<VerifiedDelivery> =>
    createVerifierWith(input, platform.engine).verify(input.headers, input.body);

/** The handler over the platform's HMAC engine and deadlines, its deliveries traced by `observer`. */
const handlerOn = <Key>(platform: WebhookPlatform<Key>, options: WebhookHandlerOptions, observer: WebhookObserver | undefined) =>
  createHandlerWith(options, (o, secretOption) => createDeliveryCheck(o, platform.engine, secretOption), platform.makeDeadlines, observer);

/** `createWebhookHandler` on a platform: its answers measured. */
export const webhookHandlerOn =
  <Key>(platform: WebhookPlatform<Key>) =>
  (options: WebhookHandlerOptions): WebhookHandler => {
    const observer = platform.observe(options?.telemetry);
    const handler = handlerOn(platform, options, observer);
    return observer === undefined ? handler : observer.measure(handler);
  };

/** `createVerikitRoutes` on a platform: the webhook route's answers measured at `receive` (from the request on), once each. */
export const verikitRoutesOn =
  <Key>(platform: WebhookPlatform<Key>) =>
  <Req>(options: VerikitRoutesOptions<Req>, adapter?: AdapterInfo): VerikitRoutes<Req> => {
    const observer = platform.observe(options?.webhook?.telemetry);
    const routes = createRoutesWith(options, (o) => handlerOn(platform, o, observer), platform, adapter);
    const route = routes.webhook;
    return route === undefined || observer === undefined
      ? routes
      : { ...routes, webhook: { ...route, receive: observer.measure(route.receive) } };
  };

/** `createFetchWebhookHandler` on a platform. */
export const fetchWebhookHandlerOn = <Key>(platform: WebhookPlatform<Key>) => {
  const makeRoutes = verikitRoutesOn(platform);
  return (options: FetchWebhookOptions): FetchWebhookHandler => fetchWebhookHandlerWith(options, makeRoutes);
};
