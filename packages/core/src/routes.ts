import type { VerikitClient } from './client/client.js';
import { ConfigurationError } from './errors.js';
import { createInviteHandler, type InviteHandler, type KybInviteOptions, type KycInviteOptions } from './invite/handler.js';
import { rawHeader } from './util/headers.js';
import type { WebhookHandler, WebhookHandlerOptions } from './webhook/handler.js';
import type { WebhookHeaders } from './webhook/input.js';
import { DEFAULT_MAX_BODY_BYTES } from './webhook/responses.js';

/**
 * The options every adapter takes: the webhook route and the invite routes, each mounted only when
 * its options are given. `Req` is the framework's request type, handed to your callbacks.
 */
export interface VerikitRoutesOptions<Req> {
  /** The API client: used by invites and by `ctx.fetchResult()` in webhooks. */
  client?: VerikitClient;
  /** `POST /webhook`. */
  webhook?: Omit<WebhookHandlerOptions, 'client'>;
  /** `POST /invite/kyb` and `POST /invite/kyc`. */
  invite?: { kyb?: KybInviteOptions<Req>; kyc?: KycInviteOptions<Req> };
}

/** The framework-neutral handlers an adapter mounts. */
export interface VerikitRoutes<Req> {
  webhook?: { handle: WebhookHandler; maxBodyBytes: number };
  inviteKyb?: InviteHandler<Req>;
  inviteKyc?: InviteHandler<Req>;
}

/** Builds the route handlers from adapter options (`makeWebhookHandler` is the platform's). */
export function createRoutesWith<Req>(
  options: VerikitRoutesOptions<Req>,
  makeWebhookHandler: (o: WebhookHandlerOptions) => WebhookHandler,
): VerikitRoutes<Req> {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', 'verikit routes need an options object');
  const { client, webhook, invite } = options;
  if (webhook === undefined && invite?.kyb === undefined && invite?.kyc === undefined) {
    throw new ConfigurationError('options', 'give webhook and/or invite options: with neither there is no route to mount');
  }
  if ((invite?.kyb || invite?.kyc) && client === undefined) throw new ConfigurationError('client', 'invite routes need the client option');
  const routes: VerikitRoutes<Req> = {};
  if (webhook)
    routes.webhook = { handle: makeWebhookHandler({ ...webhook, client }), maxBodyBytes: webhook.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES };
  if (invite?.kyb) routes.inviteKyb = createInviteHandler(client as VerikitClient, { kind: 'kyb', options: invite.kyb });
  if (invite?.kyc) routes.inviteKyc = createInviteHandler(client as VerikitClient, { kind: 'kyc', options: invite.kyc });
  return routes;
}

/** Whether the request's Content-Length already says the body is too large (so it need not be read). */
export function declaredLengthExceeds(headers: WebhookHeaders, limit: number): boolean {
  const value = rawHeader(headers, 'content-length');
  const length = typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(length) && length > limit;
}
