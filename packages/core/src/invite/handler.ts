import type { CreateKybCaseInput, CreateKycSessionInput, VerikitClient } from '../client/client.js';
import { ConfigurationError } from '../errors.js';
import { type HeaderSource, isPost, rawHeader } from '../util/headers.js';
import { type Logger, resolveLogger } from '../util/logger.js';

/** The signed-in business an invite is for: your refId, and optionally the flow and country. */
export type KybParty = CreateKybCaseInput;
/** The signed-in person an invite is for. */
export type KycParty = CreateKycSessionInput;

type MaybePromise<T> = T | Promise<T>;

/** Options of a KYB invite route. `Req` is your framework's request type. */
export interface KybInviteOptions<Req> {
  /** Maps the request to the signed-in business, or `null` (-> 401). The token goes only to this party. */
  resolveBusiness(request: Req): MaybePromise<KybParty | null>;
}

/** Options of a KYC invite route. */
export interface KycInviteOptions<Req> {
  /** Maps the request to the signed-in person, or `null` (-> 401). */
  resolveUser(request: Req): MaybePromise<KycParty | null>;
}

/** What an invite route receives from the adapter. */
export interface InviteRequest<Req> {
  method: string;
  headers: HeaderSource;
  /** The framework's own request, handed to your resolve callback. */
  request: Req;
}

/** The answer for the adapter to send. */
export interface InviteResponse {
  status: 200 | 303 | 401 | 405 | 500 | 502 | 503;
  headers: Record<string, string>;
  body: string;
}

/** `(request) => response`, the same for every framework. */
export type InviteHandler<Req> = (request: InviteRequest<Req>) => Promise<InviteResponse>;

/** Why an invite could not start, as a browser's error page shows it: the answer's status, its stable code, a message for the person. */
export interface InviteFailure {
  status: InviteResponse['status'];
  /** `unauthorized` (nobody signed in), `verification_unavailable` (busy or unreachable: try again), `verification_failed`, ... */
  code: string;
  /** Written for the person who pressed the button; never a token, key or upstream body. */
  message: string;
}

/** Renders the HTML page a browser gets when an invite fails (a form post expects a page, not JSON). */
export type InviteErrorPage = (failure: InviteFailure) => string;

/** Options every invite route shares. */
export interface InviteHandlerOptions {
  /** Where failures are written (default `console`; `false`: nowhere). A call that throws is ignored. */
  logger?: Logger | false;
  /** The page a browser gets when an invite fails (default: a plain page with the message); API callers always get JSON. */
  errorPage?: InviteErrorPage;
}

const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

function reply(status: InviteResponse['status'], body: Record<string, unknown>, headers: Record<string, string> = {}): InviteResponse {
  return { status, headers: { 'content-type': 'application/json', ...PRIVATE, ...headers }, body: JSON.stringify(body) };
}

function header(headers: HeaderSource, name: string): string {
  const value = rawHeader(headers, name);
  return typeof value === 'string' ? value : (value?.join(',') ?? '');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The default page for a browser whose invite failed: the message, and nothing of the app's own. */
const plainErrorPage: InviteErrorPage = ({ message }) =>
  `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Verification not started</title><p>${escapeHtml(message)}`;

/** A browser form post (Accept led by text/html) gets a 303 to the link, or an error page; API callers get JSON. */
function wantsRedirect(headers: HeaderSource): boolean {
  const accept = header(headers, 'accept').toLowerCase();
  const html = accept.indexOf('text/html');
  const json = accept.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}

/** Client errors that say the service was busy or out of reach: worth a retry by the user. */
const UNAVAILABLE = new Set(['rate_limited', 'timeout', 'connection', 'aborted']);
/** Client errors carrying the service's HTTP answer. */
const ANSWERED = new Set(['bad_request', 'not_found', 'server_error', 'api_error']);

/**
 * Upstream failures as answers for the signed-in user: what happened, never a token or a key.
 * Read by the errors' stable codes, so routes without a client (a webhook-only Worker) bundle no client code.
 */
function upstreamFailure(error: unknown): InviteResponse {
  const { code, status, retryAfterMs } = (error ?? {}) as { code?: unknown; status?: unknown; retryAfterMs?: unknown };
  if (typeof code === 'string' && UNAVAILABLE.has(code)) {
    const retryAfter: Record<string, string> =
      typeof retryAfterMs === 'number' ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
    return reply(
      503,
      { error: 'verification_unavailable', message: 'The verification service is busy or unreachable; try again shortly.' },
      retryAfter,
    );
  }
  if (code === 'authentication')
    return reply(502, { error: 'verification_misconfigured', message: 'The verification service refused this server’s credentials.' });
  if (typeof code === 'string' && ANSWERED.has(code) && typeof status === 'number')
    return reply(502, { error: 'verification_failed', message: `The verification service answered ${status}.` });
  if (error instanceof ConfigurationError)
    return reply(500, { error: 'verification_misconfigured', message: `verikit is missing the option ${error.option}.` });
  return reply(502, { error: 'verification_failed', message: 'The verification could not be started.' });
}

/**
 * The framework-neutral invite route: who is signed in (your callback), create the case or
 * session, answer the hosted link as `{ url, expiresAt }` or a 303 to it.
 */
export function createInviteHandler<Req>(
  client: VerikitClient,
  invite: { kind: 'kyb'; options: KybInviteOptions<Req> } | { kind: 'kyc'; options: KycInviteOptions<Req> },
  { logger: loggerOption, errorPage = plainErrorPage }: InviteHandlerOptions = {},
): InviteHandler<Req> {
  const logger = resolveLogger(loggerOption);
  if (typeof errorPage !== 'function')
    throw new ConfigurationError('invite.errorPage', 'invite.errorPage must be a function returning HTML');
  const resolve = invite.kind === 'kyb' ? invite.options?.resolveBusiness : invite.options?.resolveUser;
  if (typeof resolve !== 'function') {
    throw new ConfigurationError(
      invite.kind === 'kyb' ? 'invite.kyb.resolveBusiness' : 'invite.kyc.resolveUser',
      'an invite route needs the callback that tells who is signed in',
    );
  }
  const answer = async ({ method, request }: InviteRequest<Req>, browser: boolean): Promise<InviteResponse> => {
    if (!isPost(method)) return reply(405, { error: 'method_not_allowed' }, { allow: 'POST' });
    let party: KybParty | KycParty | null;
    try {
      party = await resolve(request);
    } catch (error) {
      return failed(reply(500, { error: 'resolve_failed', message: 'Could not tell who is signed in.' }), error);
    }
    if (party === null || party === undefined) return reply(401, { error: 'unauthorized', message: 'Sign in to start a verification.' });
    if (typeof party !== 'object' || typeof party.refId !== 'string' || party.refId === '') {
      return failed(reply(500, { error: 'invalid_party', message: 'The signed-in party has no refId.' }), undefined);
    }
    let token: string;
    try {
      token =
        invite.kind === 'kyb'
          ? (await client.kyb.createCase(party as KybParty)).token
          : (await client.kyc.createSession(party as KycParty)).token;
    } catch (error) {
      return failed(upstreamFailure(error), error, party.refId);
    }
    let link: { url: string; expiresAt: Date | null };
    try {
      link = client.verificationLink(token);
    } catch (error) {
      return failed(upstreamFailure(error), error, party.refId);
    }
    if (browser) return { status: 303, headers: { location: link.url, ...PRIVATE }, body: '' };
    return reply(200, { url: link.url, expiresAt: link.expiresAt?.toISOString() ?? null });
  };
  // The sender sees a short code; the log gets the cause (a busy service is a warning: the user can retry).
  const failed = (response: InviteResponse, error: unknown, refId?: string): InviteResponse => {
    const code = (JSON.parse(response.body) as { error: string }).error;
    logger[response.status === 503 ? 'warn' : 'error'](
      { kind: invite.kind, refId, status: response.status, code, err: error },
      'invite failed',
    );
    return response;
  };
  /** A failure as a browser sees it: the same status and headers, the integrator's page (or a plain one) for the body. */
  const asPage = (response: InviteResponse): InviteResponse => {
    const { error, message } = JSON.parse(response.body) as { error: string; message?: string };
    let body: string;
    const failure = { status: response.status, code: error, message: message ?? 'The verification could not be started.' };
    try {
      body = errorPage(failure);
    } catch (pageError) {
      logger.error({ kind: invite.kind, err: pageError }, 'invite errorPage failed; answered the plain page');
      body = plainErrorPage(failure);
    }
    return { status: response.status, headers: { ...response.headers, 'content-type': 'text/html; charset=utf-8' }, body };
  };
  // Whatever goes wrong, the answer stays private: no cache, no referrer, never the framework's error page.
  const unexpected = (error: unknown) =>
    failed(reply(500, { error: 'invite_failed', message: 'The verification could not be started.' }), error);
  return async (request) => {
    let browser: boolean;
    try {
      browser = wantsRedirect(request.headers);
    } catch (error) {
      return unexpected(error);
    }
    const response = await answer(request, browser).catch(unexpected);
    return response.status >= 400 && browser ? asPage(response) : response;
  };
}
