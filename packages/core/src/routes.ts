import type { VerikitClient } from './client/client.js';
import { extrasOf } from './client/seam.js';
import { ConfigurationError } from './errors.js';
import type { InviteErrorPage, InviteHandler, KybInviteOptions, KycInviteOptions } from './invite/handler.js';
import type { DeadlinesFactory } from './util/deadlines.js';
import { isPost, rawHeader } from './util/headers.js';
import { type Logger, resolveLogger } from './util/logger.js';
import { positiveNumber } from './util/option-checks.js';
import type { BodyLimits, BodyRead, BodyReader, BodyStream, NodeReadableLike } from './util/read-body.js';
import type {
  InboxWebhookOptions,
  InlineWebhookOptions,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookRequest,
  WebhookResponse,
} from './webhook/handler.js';
import type { WebhookBody, WebhookHeaders } from './webhook/input.js';
import { bodyReadFailure, DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, webhookResponses } from './webhook/responses.js';

/** Options of the webhook route: the handler's (either mode), plus how long the sender gets to deliver the body. */
export type WebhookRouteOptions = (Omit<InlineWebhookOptions, 'client'> | Omit<InboxWebhookOptions, 'client'>) & {
  /**
   * How long the whole body may take to arrive, in ms (default 5 000, well under Svix's 15 s): a
   * sender that stalls gets 408 and the connection is closed, rather than holding it open.
   */
  bodyTimeoutMs?: number;
};

/**
 * The options every adapter takes: the webhook route and the invite routes, each mounted only when
 * its options are given. `Req` is the framework's request type, handed to your callbacks.
 */
export interface VerikitRoutesOptions<Req> {
  /** The API client: used by invites and by `ctx.fetchResult()` in webhooks. */
  client?: VerikitClient;
  /** `POST /webhook`. */
  webhook?: WebhookRouteOptions;
  /** `POST /invite/kyb` and `POST /invite/kyc`. */
  invite?: {
    kyb?: KybInviteOptions<Req>;
    kyc?: KycInviteOptions<Req>;
    /** The HTML page a browser gets when an invite fails (default: a plain page with the message); API callers get JSON. */
    errorPage?: InviteErrorPage;
  };
  /** Where the routes say what failed (default: warnings and errors on `console`; `false` for silence); `webhook.logger` overrides it for the webhook route. */
  logger?: Logger | false;
}

/** Where an adapter finds the raw webhook body. */
export type WebhookBodySource =
  /** The exact bytes are already at hand (kept by the framework or by the host's parser). */
  | { kind: 'bytes'; bytes: WebhookBody }
  /**
   * The body is still on the wire: verikit reads it within the route's size and time limits. A
   * Node readable without its reader is read on Node's build only (a Worker's reads Web streams).
   */
  | { kind: 'stream'; stream: BodyStream | null | undefined; read?: undefined }
  /** A Node readable with its reader, `readNodeBody`: how an adapter for a Node framework hands over the body on every runtime. */
  | { kind: 'stream'; stream: NodeReadableLike | null | undefined; read: BodyReader<NodeReadableLike | null | undefined> }
  /** A host body parser consumed the bytes and kept no copy. */
  | { kind: 'consumed' };

/** A webhook request as an adapter hands it over. */
export interface WebhookArrival {
  method: string;
  headers: WebhookHeaders;
  body: WebhookBodySource;
  /** The runtime's `waitUntil`, where it has one (Workers): see {@link WebhookRequest.waitUntil}. */
  waitUntil?: (promise: Promise<unknown>) => void;
}

/** The framework-neutral webhook route an adapter mounts. */
export interface WebhookRoute {
  /** Reads the body (when it is still a stream) within the limits, then runs the handler. */
  receive(arrival: WebhookArrival): Promise<WebhookResponse>;
  /** The handler itself, for bytes already read. */
  handle: WebhookHandler;
  /** Largest accepted body in bytes. */
  maxBodyBytes: number;
  /** How long the body may take to arrive, in ms. */
  bodyTimeoutMs: number;
}

/** The framework-neutral handlers an adapter mounts. */
export interface VerikitRoutes<Req> {
  webhook?: WebhookRoute;
  inviteKyb?: InviteHandler<Req>;
  inviteKyc?: InviteHandler<Req>;
}

/** What an adapter tells core about its framework. */
export interface AdapterInfo {
  /** How to fix a host setup whose body parser consumes the raw bytes, in the framework's terms. */
  rawBodyFix: string;
}

const GENERIC_FIX = 'Hand verikit the request before any body parser reads it.';

/** What the routes take from the platform: its deadlines, and how it reads a body stream an adapter hands over. */
export interface RoutePlatform {
  makeDeadlines: DeadlinesFactory;
  readBody: (stream: BodyStream | null | undefined, limits: BodyLimits) => Promise<BodyRead>;
}

/** Builds the route handlers from adapter options (`makeWebhookHandler` is the platform's). */
export function createRoutesWith<Req>(
  options: VerikitRoutesOptions<Req>,
  makeWebhookHandler: (o: WebhookHandlerOptions) => WebhookHandler,
  platform: RoutePlatform,
  adapter: AdapterInfo = { rawBodyFix: GENERIC_FIX },
): VerikitRoutes<Req> {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', 'verikit routes need an options object');
  const { client, webhook, invite } = options;
  if (webhook === undefined && invite?.kyb === undefined && invite?.kyc === undefined) {
    throw new ConfigurationError('options', 'give webhook and/or invite options');
  }
  if ((invite?.kyb || invite?.kyc) && client === undefined) throw new ConfigurationError('client', 'invite routes need the client option');
  const routes: VerikitRoutes<Req> = {};
  if (webhook) {
    const { bodyTimeoutMs, ...handlerOptions } = webhook;
    const timeoutMs = positiveMs('webhook.bodyTimeoutMs', bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS);
    routes.webhook = webhookRoute(
      makeWebhookHandler({ logger: options.logger, ...handlerOptions, client } as WebhookHandlerOptions),
      { maxBytes: webhook.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, timeoutMs, deadlines: platform.makeDeadlines(timeoutMs) },
      platform.readBody,
      adapter.rawBodyFix,
    );
  }
  const logger = resolveLogger(options.logger);
  // Built through the client, so routes without invites (a webhook-only Worker) bundle no invite code.
  if (client !== undefined && (invite?.kyb || invite?.kyc)) {
    Object.assign(routes, extrasOf(client, 'the invite routes').buildInviteRoutes(client, invite, logger));
  }
  return routes;
}

const positiveMs = (option: string, value: number | undefined, fallback: number): number =>
  positiveNumber(option, value, fallback, 'milliseconds');

function webhookRoute(handle: WebhookHandler, limits: BodyLimits, readBody: RoutePlatform['readBody'], fix: string): WebhookRoute {
  return {
    handle,
    maxBodyBytes: limits.maxBytes,
    bodyTimeoutMs: limits.timeoutMs,
    // Not an async function: on the hot path it adds one promise to the chain rather than two.
    receive({ method, headers, body, waitUntil }) {
      if (declaredLengthExceeds(headers, limits.maxBytes)) return Promise.resolve(webhookResponses.payloadTooLarge());
      if (!isPost(method)) {
        // 405 without reading the body; a connection whose body was left unread is not reused.
        return handle({ method, headers, body: undefined }).then((refused) =>
          declaresBody(headers) ? { ...refused, headers: { ...refused.headers, connection: 'close' } } : refused,
        );
      }
      if (body.kind === 'bytes') return handle({ method, headers, body: body.bytes, waitUntil });
      const read =
        body.kind === 'consumed'
          ? Promise.resolve({ kind: 'consumed' } as const)
          : body.read !== undefined
            ? body.read(body.stream, limits)
            : readBody(body.stream, limits);
      return read.then((result) =>
        result.kind === 'ok'
          ? handle({ method, headers, body: result.bytes, waitUntil })
          : bodyReadFailure(result, fix, singleHeader(headers, 'content-type')),
      );
    },
  };
}

function singleHeader(headers: WebhookHeaders, name: string): string | undefined {
  const value = rawHeader(headers, name);
  return typeof value === 'string' ? value : value?.[0];
}

/** The Content-Length a request declares, or NaN when it declares none (or not one readable value). */
function declaredLength(headers: WebhookHeaders): number {
  const value = rawHeader(headers, 'content-length');
  return typeof value === 'string' ? Number(value) : Number.NaN;
}

/** Whether the request says a body follows (chunked, or a positive Content-Length). */
function declaresBody(headers: WebhookHeaders): boolean {
  return rawHeader(headers, 'transfer-encoding') !== undefined || declaredLength(headers) > 0;
}

/** Whether the request's Content-Length already says the body is too large (so it need not be read). */
export function declaredLengthExceeds(headers: WebhookHeaders, limit: number): boolean {
  const length = declaredLength(headers);
  return Number.isFinite(length) && length > limit;
}
