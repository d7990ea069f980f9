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

/** The webhook functions bound to one platform's HMAC engine and deadlines; each build exports them bound to its own. */
export function webhookApi<Key>(engine: HmacEngine<Key>, makeDeadlines: DeadlinesFactory) {
  const createWebhookVerifier = (options: WebhookVerifierOptions): WebhookVerifier => createVerifierWith(options, engine);
  const createWebhookHandler = (options: WebhookHandlerOptions): WebhookHandler =>
    createHandlerWith(options, (o, secretOption) => createDeliveryCheck(o, engine, secretOption), makeDeadlines);
  return {
    createWebhookVerifier,
    verifyWebhook: (input: VerifyWebhookInput): Promise<VerifiedDelivery> => createWebhookVerifier(input).verify(input.headers, input.body),
    createWebhookHandler,
    createVerikitRoutes: <Req>(options: VerikitRoutesOptions<Req>, adapter?: AdapterInfo): VerikitRoutes<Req> =>
      createRoutesWith(options, createWebhookHandler, makeDeadlines, adapter),
    createFetchWebhookHandler: (options: FetchWebhookOptions): FetchWebhookHandler =>
      fetchWebhookHandlerWith(options, (o) => createRoutesWith(o, createWebhookHandler, makeDeadlines)),
  };
}
