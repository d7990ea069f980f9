import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  buildVerificationLink,
  type ClientOptions,
  checkWebhookSecret,
  InvalidArgumentError,
  type KybCaseDetails,
  type KybStatus,
  type KycResult,
} from '@verikit/core';
import { webhookEventFixture } from '../fixtures.js';
import { checkCredential, checkHttpUrl } from './checks.js';
import { type FakeRoute, FaultInjector } from './faults.js';
import type { FakeHistoryEntry } from './history.js';
import { hostedRoute } from './hosted.js';
import { HttpError, parseJsonObject, readBody, sendJson } from './http.js';
import { signJwt } from './jwt.js';
import { type FakeRateLimit, type FakeRequest, maxReadsInWindow, ReadLimiter } from './requests.js';
import { REVIEWER_PATH, reviewerConsole } from './reviewer.js';
import {
  type FakeCredentials,
  type FakeFlow,
  type FakeKycStatuses,
  type FakeOrganization,
  type FakeOrganizationOptions,
  FakeState,
  type KybPrefill,
  type KybSubmission,
  type StatusChange,
} from './state.js';
import { readStateFile, writeStateFile } from './state-file.js';
import {
  type DeliveryAttempt,
  type WebhookBehaviour,
  type WebhookDeliveryOptions,
  WebhookDispatcher,
  type WebhookMessage,
} from './webhooks.js';

/** Options of {@link createFakeService}. */
export interface FakeServiceOptions {
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Credentials of the first organization (generated unless given). */
  organization?: FakeOrganizationOptions;
  /** The environment the hosted page accepts (default `Sandbox`). */
  environment?: 'Sandbox' | 'Production';
  /** KYC status strings (the spec lists none; defaults PENDING, APPROVED, REJECTED, IN_REVIEW). */
  kycStatuses?: Partial<FakeKycStatuses>;
  /** Webhook endpoints of the first organization and the retry schedule. */
  webhooks?: WebhookDeliveryOptions & { endpoints?: readonly string[] };
  /** Lifetime of signed document URLs in seconds (default 300; the spec does not give one). */
  signedUrlTtlSeconds?: number;
  /** Builds the webhook payload of a status change (default {@link webhookEventFixture}'s shape). */
  event?: (change: Omit<StatusChange, 'org'>) => unknown;
  /** Told about every request once answered: method, path (never the query, which can hold a token), status, duration. */
  onRequest?: (entry: FakeRequestLog) => void;
  /**
   * A JSON file that keeps the fake across restarts: its port (reused when `port` is not given),
   * credentials, signing keys, cases, sessions, documents and prefills, so hosted links issued
   * before a restart still open. Written after every change; created when missing. Webhook
   * deliveries still pending are not kept.
   */
  stateFile?: string;
  /**
   * Where the hosted page sends the person back after their decision (a link on the page). Without
   * it, only a page of the fake's own origin (`returnTo`, `Referer`): never a foreign one, which
   * would make the hosted page an open redirect.
   */
  returnUrl?: string;
  /**
   * A rate limit on result reads (`kyb.getCase`, `kyc.getResult`) per organization: beyond
   * `readsPerMinute` in any 60 s, 429 with `Retry-After`. The spec shows none; default: no limit.
   */
  rateLimit?: FakeRateLimit;
}

/** Options of a reviewer's decision. */
export interface FakeDecisionOptions {
  /** Why: a KYC result's `reason`; for KYB, kept in the history only. */
  reason?: string;
  /** The organization (default: the first). */
  apiKey?: string;
}

/** One answered request, as `onRequest` hears it. */
export interface FakeRequestLog {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

/** A running fake of the verification service. */
export interface FakeService {
  /** The API base URL ({base_url}). */
  baseUrl: string;
  /** The hosted page address ({web_url}). */
  webUrl: string;
  /** The first organization's credentials. */
  credentials: FakeCredentials;
  /** The environment name the hosted page accepts. */
  environment: 'Sandbox' | 'Production';
  /** Everything `createClient` needs to talk to this fake as its first organization. */
  clientOptions: Required<Pick<ClientOptions, 'apiKey' | 'baseUrl' | 'webUrl' | 'publicKey' | 'environment'>>;
  /** Adds an organization (its cases are invisible to the others). */
  addOrganization(options?: FakeOrganizationOptions): FakeOrganization;
  /** The flows `GET /kyb/flows` lists (mutable). */
  flows: FakeFlow[];
  /**
   * Drive KYB cases as the service and its reviewers would. Every change (after the creation) adds a
   * history version, moves `updatedAt` on and sends a webhook. Unknown refIds throw InvalidArgumentError.
   */
  kyb: {
    get(refId: string, options?: { apiKey?: string }): KybCaseDetails;
    setStatus(refId: string, status: KybStatus, options?: { apiKey?: string }): KybCaseDetails;
    /** The business's submission, as the hosted page makes it (a `submitted` change; the status stays). */
    submit(refId: string, input?: KybSubmission, options?: { apiKey?: string }): KybCaseDetails;
    /** What the hosted page shows first for this business (your app's knowledge of it); the business may change it there. */
    prefill(refId: string, values: KybPrefill, options?: { apiKey?: string }): void;
    /** Reopens steps: records the reopen and moves the case back to `IN_PROGRESS`, as one change. */
    reopen(refId: string, stepIds: string[], reason?: string, options?: { apiKey?: string }): KybCaseDetails;
    /**
     * A reviewer's decision, from any state: `decided`, or `overturned` when it replaces a final one
     * (`COMPLETED` -> `REJECTED`). The reason goes into the history only (the details carry no reviewer notes).
     */
    decide(refId: string, status: 'COMPLETED' | 'REJECTED', options?: FakeDecisionOptions): KybCaseDetails;
    /** The case's versions, oldest first: version 1 is its creation. */
    history(refId: string, options?: { apiKey?: string }): readonly FakeHistoryEntry[];
  };
  /** Drive KYC sessions; every change adds a history version, moves `updatedAt` on and sends a webhook. */
  kyc: {
    get(refId: string, options?: { apiKey?: string }): KycResult;
    setStatus(refId: string, status: string, options?: { apiKey?: string; reason?: string }): KycResult;
    /**
     * A reviewer's decision (`kycStatuses.approved` or `.rejected`), from any state: `decided`, or
     * `overturned` when it replaces a final one. `reason` becomes the result's `reason`.
     */
    decide(refId: string, status: string, options?: FakeDecisionOptions): KycResult;
    /** The session's versions, oldest first: version 1 is its creation. */
    history(refId: string, options?: { apiKey?: string }): readonly FakeHistoryEntry[];
  };
  /** Webhook endpoints, deliveries (perfect or not), and secret rotation. */
  webhooks: {
    addEndpoint(url: string, options?: { apiKey?: string }): void;
    removeEndpoint(url: string): void;
    readonly attempts: readonly DeliveryAttempt[];
    readonly messages: readonly WebhookMessage[];
    /** Resolves once no delivery is pending (dropped messages are never waited for), or rejects after `timeoutMs`. */
    settle(timeoutMs?: number): Promise<void>;
    rotateSecret(options?: { apiKey?: string }): string;
    endRotation(options?: { apiKey?: string }): void;
    /** Drops, duplicates or delays the messages published from now on; settings not given keep theirs. */
    configure(behaviour: WebhookBehaviour): void;
    /**
     * "Endpoint down": every attempt to the organization's endpoints fails as if unreachable (recorded
     * with an error), and the retry schedule goes on, so a long outage ends in `failed`, as with Svix.
     */
    down(options?: { apiKey?: string }): void;
    /** Ends {@link down}: the retries still to come are delivered. */
    up(options?: { apiKey?: string }): void;
  };
  /** Per-route fault injection. */
  faults: Pick<FaultInjector, 'inject' | 'clear'>;
  /**
   * Every API request, in order of arrival: method, route, path (never the query or headers), status,
   * arrival time. The hosted page and the reviewer console are not API requests.
   */
  readonly requests: readonly FakeRequest[];
  /**
   * The largest number of result reads (`kyb.getCase` + `kyc.getResult`, whatever their answer) in any
   * window [t, t + windowMs) (default 60 000): what a read budget is checked against.
   */
  maxReadsInWindow(windowMs?: number): number;
  /** Sets or lifts (undefined) the read rate limit (see `FakeServiceOptions.rateLimit`). */
  setRateLimit(limit: FakeRateLimit | undefined): void;
  /**
   * The reviewer console of the first organization, with its token (`credentials.reviewerToken`): open
   * it once in a browser, which then keeps the token in a cookie. Another organization's console is
   * `${baseUrl}/reviewer?token=${encodeURIComponent(org.reviewerToken)}`.
   */
  reviewerUrl: string;
  /** Builds the hosted link for a token, as an integrator would. */
  link(token: string): string;
  close(): Promise<void>;
}

const KYB_TOKEN_SECONDS = 24 * 60 * 60;
const KYC_TOKEN_SECONDS = 30 * 60;
function checkFields(body: Record<string, unknown>, required: string[], optional: string[]): void {
  for (const field of Object.keys(body)) {
    if (!required.includes(field) && !optional.includes(field)) throw new HttpError(400, `Field "${field}" is not accepted`);
  }
  for (const field of [...required, ...optional]) {
    const value = body[field];
    if (value === undefined && !required.includes(field)) continue;
    if (typeof value !== 'string' || value.length === 0) throw new HttpError(400, `Field "${field}" must be a non-empty string`);
  }
}

/**
 * Starts a stateful fake of the whole verification service on 127.0.0.1: the KYB and KYC
 * endpoints, signed document downloads, the hosted page, Svix-signed webhooks and faults.
 * @example
 * const fake = await createFakeService({ webhooks: { endpoints: [`${app}/webhook`], retryScale: 0.001 } });
 * const client = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl });
 */
export async function createFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
  const environment = options.environment ?? 'Sandbox';
  const returnUrl = options.returnUrl === undefined ? undefined : checkHttpUrl('returnUrl', options.returnUrl);
  const kycStatuses: FakeKycStatuses = {
    initial: 'PENDING',
    approved: 'APPROVED',
    rejected: 'REJECTED',
    review: 'IN_REVIEW',
    ...options.kycStatuses,
  };
  const signedUrlTtl = options.signedUrlTtlSeconds ?? 300;
  const buildEvent = options.event ?? webhookEventFixture;
  const saved = options.stateFile === undefined ? undefined : readStateFile(options.stateFile);
  const jwtKey = saved ? Buffer.from(saved.jwtKey, 'base64') : randomBytes(32);
  const storageKey = saved ? Buffer.from(saved.storageKey, 'base64') : randomBytes(32);
  const dispatcher = new WebhookDispatcher(options.webhooks);
  const faults = new FaultInjector();
  let listening = false;
  let port = 0;
  const save = () => {
    if (options.stateFile === undefined || !listening) return;
    writeStateFile(options.stateFile, {
      version: 1,
      port,
      jwtKey: jwtKey.toString('base64'),
      storageKey: storageKey.toString('base64'),
      state: state.snapshot(),
    });
  };
  const state = new FakeState(kycStatuses, ({ org, ...change }) => dispatcher.publish(org, buildEvent(change)), save);
  const addOrganization = (o?: FakeOrganizationOptions) => {
    // The SDK's own rules, at start: a bad secret fails here, not at the first delivery's signing.
    if (o?.webhookSecret !== undefined) checkWebhookSecret(o.webhookSecret, 'organization.webhookSecret');
    if (o?.apiKey !== undefined) checkCredential('organization.apiKey', o.apiKey);
    if (o?.publicKey !== undefined) checkCredential('organization.publicKey', o.publicKey);
    if (o?.reviewerToken !== undefined) checkCredential('organization.reviewerToken', o.reviewerToken);
    const org = state.addOrganization(o);
    dispatcher.setSecret(org.id, org.webhookSecret);
    return org;
  };
  if (saved) {
    state.restore(saved.state);
    for (const org of state.organizations) dispatcher.setSecret(org.id, org.webhookSecret);
  }
  const first = state.organizations[0] ?? addOrganization(options.organization);
  const orgOf = (control?: { apiKey?: string }) => {
    if (control?.apiKey === undefined) return first.id;
    const org = state.byApiKey(control.apiKey);
    if (!org) throw new InvalidArgumentError('fake service: no organization has that API key');
    return org.id;
  };
  const requests: FakeRequest[] = [];
  const limiter = new ReadLimiter();
  limiter.set(options.rateLimit);
  /** A result read of `org` beyond the rate limit: 429 with Retry-After, as a service's limit would answer. */
  const limitReads = (org: FakeOrganization) => {
    const retryAfter = limiter.take(org.id, Date.now());
    if (retryAfter !== undefined) throw new HttpError(429, 'Too many requests', { 'retry-after': String(retryAfter) });
  };
  for (const url of options.webhooks?.endpoints ?? []) dispatcher.addEndpoint(first.id, url);

  const now = () => Math.floor(Date.now() / 1000);
  const issueToken = (org: string, kind: 'kyb' | 'kyc', refId: string) =>
    signJwt(
      { sub: refId, org, kind, iat: now(), exp: now() + (kind === 'kyb' ? KYB_TOKEN_SECONDS : KYC_TOKEN_SECONDS), jti: randomUUID() },
      jwtKey,
    );
  const storageSignature = (docId: string, expires: string) =>
    createHmac('sha256', storageKey).update(`${docId}.${expires}`).digest('base64url');
  let origin = '';

  const authenticate = (req: IncomingMessage, kyc: boolean): FakeOrganization => {
    const apiKey = req.headers['x-api-key'];
    const value = typeof apiKey === 'string' ? apiKey : undefined;
    const org = state.byApiKey(value);
    if (kyc && state.isPublicKey(value)) throw new HttpError(403, 'The public key cannot be used from a server');
    if (!org) throw new HttpError(401, 'Unauthorized');
    if (kyc && !org.kycEnabled) throw new HttpError(403, 'KYC is not enabled for this organization');
    return org;
  };

  /** Applies the armed faults; true when one of them answered (or dropped) the request. */
  const applyFaults = async (route: FakeRoute, res: ServerResponse, req: IncomingMessage): Promise<boolean> => {
    for (const fault of faults.take(route)) {
      if (fault.kind === 'latency') await new Promise((resolve) => setTimeout(resolve, fault.ms));
      else if (fault.kind === 'reset') {
        req.socket.destroy();
        return true;
      } else if (fault.kind === 'status') {
        sendJson(
          res,
          fault.status,
          fault.body ?? { statusCode: fault.status, message: 'Injected fault' },
          fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
        );
        return true;
      } else if (fault.kind === 'malformed-json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "broken", "steps": [');
        return true;
      } else {
        sendJson(res, 200, { unexpected: true, status: 42 });
        return true;
      }
    }
    return false;
  };

  const segments = (rawPath: string) => rawPath.split('/').slice(1);
  const decode = (segment: string) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new HttpError(400, 'Malformed path');
    }
  };

  /** Logs an API request once its route is known (at arrival; its status when answered), then applies that route's faults. */
  const enter = (name: FakeRoute, req: IncomingMessage, res: ServerResponse, rawPath: string, at: number): Promise<boolean> => {
    const entry: FakeRequest = { method: req.method ?? 'GET', route: name, path: rawPath, status: 0, at };
    requests.push(entry);
    res.once('finish', () => {
      entry.status = res.statusCode;
    });
    return applyFaults(name, res, req);
  };

  async function api(req: IncomingMessage, res: ServerResponse, url: URL, rawPath: string, at: number): Promise<void> {
    const method = req.method ?? 'GET';
    const parts = segments(rawPath);
    const route = (name: FakeRoute) => enter(name, req, res, rawPath, at);

    if (method === 'POST' && rawPath === '/kyb/case') {
      if (await route('kyb.createCase')) return;
      const org = authenticate(req, false);
      const body = parseJsonObject(await readBody(req));
      checkFields(body, ['refId'], ['flow', 'country', 'country_state']);
      const flow = state.flowFor(body.flow as string | undefined);
      if (!flow) throw new HttpError(404, 'Flow not found');
      const details = state.createCase(org.id, {
        refId: body.refId as string,
        flow,
        country: body.country as string | undefined,
        countryState: body.country_state as string | undefined,
      });
      return sendJson(res, 200, {
        kybCase: { _id: details.id, refId: details.refId, status: details.status, flow: details.flow.id },
        token: issueToken(org.id, 'kyb', details.refId),
      });
    }
    if (method === 'GET' && parts.length === 4 && parts[0] === 'kyb' && parts[1] === 'case' && parts[3] === 'details') {
      if (await route('kyb.getCase')) return;
      const org = authenticate(req, false);
      limitReads(org);
      const details = state.getCase(org.id, decode(parts[2]!));
      if (!details) throw new HttpError(404, 'Case not found');
      return sendJson(res, 200, details);
    }
    if (method === 'GET' && parts.length === 4 && parts[0] === 'kyb' && parts[1] === 'documents' && parts[3] === 'url') {
      if (await route('kyb.documentUrl')) return;
      const org = authenticate(req, false);
      const doc = state.document(org.id, decode(parts[2]!));
      if (!doc) throw new HttpError(404, 'Document not found');
      const expires = String(now() + signedUrlTtl);
      return sendJson(res, 200, {
        url: `${origin}/storage/${encodeURIComponent(doc.file.id)}?expires=${expires}&signature=${storageSignature(doc.file.id, expires)}`,
        expiresIn: signedUrlTtl,
      });
    }
    if (method === 'GET' && (rawPath === '/kyb/flows' || rawPath === '/kyb/flows/default')) {
      const isDefault = rawPath.endsWith('/default');
      if (await route(isDefault ? 'kyb.defaultFlows' : 'kyb.flows')) return;
      authenticate(req, false);
      const flows = isDefault ? state.flows.filter((f) => f.default) : state.flows;
      return sendJson(
        res,
        200,
        flows.map(({ id, title, country }) => ({ id, title, country })),
      );
    }
    if (method === 'POST' && rawPath === '/v2/sessions') {
      if (await route('kyc.createSession')) return;
      const org = authenticate(req, true);
      const body = parseJsonObject(await readBody(req));
      checkFields(body, ['refId'], ['flowId']);
      const session = state.createSession(org.id, body.refId as string, body.flowId as string | undefined);
      return sendJson(res, 200, { success: true, token: issueToken(org.id, 'kyc', session.refId) });
    }
    if (method === 'GET' && parts.length === 3 && parts[0] === 'v2' && parts[1] === 'users') {
      if (await route('kyc.getResult')) return;
      const org = authenticate(req, true);
      limitReads(org);
      const session = state.getSession(org.id, decode(parts[2]!));
      if (!session) throw new HttpError(404, 'User not found');
      return sendJson(res, 200, session.result);
    }
    if (method === 'GET' && parts.length === 2 && parts[0] === 'storage') {
      if (await route('storage.download')) return;
      const id = decode(parts[1]!);
      const expires = url.searchParams.get('expires') ?? '';
      const given = Buffer.from(url.searchParams.get('signature') ?? '');
      const expected = Buffer.from(storageSignature(id, expires));
      const valid = given.length === expected.length && timingSafeEqual(given, expected) && Number(expires) > now();
      const doc = state.documentById(id);
      if (!valid || !doc) return sendJson(res, 403, { statusCode: 403, message: 'Signed URL invalid or expired' });
      res.writeHead(200, {
        'content-type': doc.file.mimeType,
        'content-length': doc.content.length,
        'content-disposition': `attachment; filename="${doc.file.originalName.replace(/"/g, '')}"`,
      });
      res.end(doc.content);
      return;
    }
    throw new HttpError(404, 'Not found');
  }

  const hosted = hostedRoute({ state, jwtKey, environment, returnUrl, origin: () => origin });
  const reviewer = reviewerConsole(state, dispatcher);

  /** Routes one request; everything that can throw, parsing the target included, runs inside the promise. */
  async function route(req: IncomingMessage, res: ServerResponse, at: number): Promise<void> {
    const target = req.url ?? '/';
    const rawPath = target.split('?')[0] ?? '/';
    let url: URL;
    try {
      // A target such as `//` or `//x:y` reads as a URL with a host part and fails to parse: bad input, not a crash.
      url = new URL(target.startsWith('/') ? `http://fake.invalid${target}` : target, 'http://fake.invalid');
    } catch {
      throw new HttpError(400, 'Malformed request target');
    }
    if (rawPath === '/hosted' || rawPath.startsWith('/hosted/')) return hosted(req, res, url);
    if (rawPath === REVIEWER_PATH || rawPath.startsWith(`${REVIEWER_PATH}/`)) return reviewer(req, res, url);
    return api(req, res, url, rawPath, at);
  }

  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const at = Date.now();
    if (options.onRequest !== undefined) {
      const onRequest = options.onRequest;
      const started = performance.now();
      res.on('finish', () =>
        onRequest({
          method: req.method ?? '',
          path: (req.url ?? '/').split('?')[0] ?? '/',
          status: res.statusCode,
          durationMs: performance.now() - started,
        }),
      );
    }
    route(req, res, at).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      if (error instanceof HttpError) sendJson(res, error.status, { statusCode: error.status, message: error.message }, error.headers);
      else sendJson(res, 500, { statusCode: 500, message: error instanceof Error ? error.message : 'Internal error' });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const wanted = options.port ?? saved?.port ?? 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE' && saved !== undefined && options.port === undefined
          ? new Error(
              `fake service: port ${wanted}, kept in ${options.stateFile} so that links issued before stay valid, is in use; free it or remove the file`,
            )
          : error,
      ),
    );
    server.listen(wanted, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  listening = true;
  save();
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  origin = `http://${host}:${address.port}`;
  const webUrl = `${origin}/hosted`;

  return {
    baseUrl: origin,
    webUrl,
    credentials: {
      apiKey: first.apiKey,
      publicKey: first.publicKey,
      webhookSecret: first.webhookSecret,
      reviewerToken: first.reviewerToken,
    },
    environment,
    clientOptions: {
      apiKey: first.apiKey,
      baseUrl: origin,
      webUrl,
      publicKey: first.publicKey,
      environment: environment === 'Production' ? 'production' : 'sandbox',
    },
    addOrganization,
    flows: state.flows,
    kyb: {
      get: (refId, o) => state.findCase(refId, orgOf(o)).details,
      setStatus: (refId, status, o) => state.setCaseStatus(refId, status, orgOf(o)),
      submit: (refId, input, o) => state.submitCase(refId, input, orgOf(o)),
      prefill: (refId, values, o) => state.prefill(orgOf(o), refId, values),
      reopen: (refId, stepIds, reason, o) => state.reopenCase(refId, stepIds, reason, orgOf(o)),
      decide: (refId, status, o) => {
        if (status !== 'COMPLETED' && status !== 'REJECTED')
          throw new InvalidArgumentError(`fake service: a KYB decision is "COMPLETED" or "REJECTED", not ${JSON.stringify(status)}`);
        return state.decideCase(refId, status, o?.reason, orgOf(o));
      },
      history: (refId, o) => state.history('kyb', refId, orgOf(o)),
    },
    kyc: {
      get: (refId, o) => state.findSession(refId, orgOf(o)).result,
      setStatus: (refId, status, o) => state.setSessionStatus(refId, status, orgOf(o), o?.reason === undefined ? {} : { reason: o.reason }),
      decide: (refId, status, o) => state.decideSession(refId, status, o?.reason, orgOf(o)),
      history: (refId, o) => state.history('kyc', refId, orgOf(o)),
    },
    webhooks: {
      addEndpoint: (url, o) => dispatcher.addEndpoint(orgOf(o), url),
      removeEndpoint: (url) => dispatcher.removeEndpoint(url),
      attempts: dispatcher.attempts,
      messages: dispatcher.messages,
      settle: (timeoutMs) => dispatcher.settle(timeoutMs),
      rotateSecret: (o) => dispatcher.rotate(orgOf(o)),
      endRotation: (o) => dispatcher.endRotation(orgOf(o)),
      configure: (behaviour) => dispatcher.configure(behaviour),
      down: (o) => dispatcher.setDown(orgOf(o), true),
      up: (o) => dispatcher.setDown(orgOf(o), false),
    },
    faults,
    requests,
    maxReadsInWindow: (windowMs = 60_000) => maxReadsInWindow(requests, windowMs),
    setRateLimit: (limit) => limiter.set(limit),
    reviewerUrl: `${origin}${REVIEWER_PATH}?token=${encodeURIComponent(first.reviewerToken)}`,
    link: (token) => buildVerificationLink({ webUrl, token, publicKey: first.publicKey, environment }),
    close: () =>
      new Promise<void>((resolve) => {
        dispatcher.close();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
