import { type AdapterInfo, createRoutesWith, type VerikitRoutes, type VerikitRoutesOptions } from '../routes.js';
import type { DeadlinesFactory } from '../util/deadlines.js';
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

/** What the webhook functions are bound to in each build: its HMAC engine and its deadlines. */
export interface WebhookPlatform<Key> {
  engine: HmacEngine<Key>;
  makeDeadlines: DeadlinesFactory;
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

/** `createWebhookHandler` on a platform. */
export const webhookHandlerOn =
  <Key>({ engine, makeDeadlines }: WebhookPlatform<Key>) =>
  (options: WebhookHandlerOptions): WebhookHandler =>
    createHandlerWith(options, (o, secretOption) => createDeliveryCheck(o, engine, secretOption), makeDeadlines);

/** `createVerikitRoutes` on a platform. */
export const verikitRoutesOn = <Key>(platform: WebhookPlatform<Key>) => {
  const makeHandler = webhookHandlerOn(platform);
  return <Req>(options: VerikitRoutesOptions<Req>, adapter?: AdapterInfo): VerikitRoutes<Req> =>
    createRoutesWith(options, makeHandler, platform.makeDeadlines, adapter);
};

/** `createFetchWebhookHandler` on a platform. */
export const fetchWebhookHandlerOn = <Key>(platform: WebhookPlatform<Key>) => {
  const makeRoutes = verikitRoutesOn(platform);
  return (options: FetchWebhookOptions): FetchWebhookHandler => fetchWebhookHandlerWith(options, makeRoutes);
};
