import { ConfigurationError, InvalidArgumentError } from '../errors.js';
import { buildInviteRoutes } from '../invite/routes.js';
import { trackCreation } from '../ledger/tracked-create.js';
import { buildVerificationLink, readTokenExpiry } from '../link/link.js';
import type { KybCaseDetails, KybCreateCaseResponse, KybDocumentFile, KybFlowsResponse, SignedDocumentUrl } from '../schemas/kyb.js';
import type { KycCreateSessionResponse, KycResult } from '../schemas/kyc.js';
import type { KycDecision } from '../schemas/kyc-values.js';
import { VERSION } from '../version.js';
import type { FetchedResult } from '../webhook/handler.js';
import type { EventSubject } from '../webhook/identify.js';
import { SignedUrlCache } from './document-cache.js';
import { type DocumentDownload, openSignedUrl } from './download.js';
import { UnexpectedResponseError } from './errors.js';
import { type CallOptions, Executor } from './execute.js';
import { type ClientOptions, resolveOptions } from './options.js';
import { encodeSegment, resolveApiPath } from './path.js';
import { CLIENT_EXTRAS, type ClientExtras, type ClientWithExtras } from './seam.js';
import type { Transport } from './transport.js';

/** Input of `client.kyb.createCase` (spec 4.1). Business details are collected in the hosted flow, not here. */
export interface CreateKybCaseInput {
  /** Your reference for the business; unique per business; used to read the case later. */
  refId: string;
  /** KYB flow ID (the organization's default when left out). */
  flow?: string;
  /** Country code. */
  country?: string;
  /** State or region (sent as `country_state`). */
  countryState?: string;
}

/** Input of `client.kyc.createSession` (spec 4.5). */
export interface CreateKycSessionInput {
  /** Your reference for the individual, generated and stored before the call. */
  refId: string;
  /** KYC flow ID; optional when the organization has a default flow. */
  flowId?: string;
}

/** A hosted verification link and when its token stops working (when the token says). */
export interface VerificationLink {
  url: string;
  expiresAt: Date | null;
}

/** A document reference: a file from the case details, or anything with its API `url`. */
export type DocumentRef = Pick<KybDocumentFile, 'url'>;

/** KYB operations (spec 4.1-4.4). */
export interface KybApi {
  /** Creates a case: `POST /kyb/case`. The token in the answer is valid 24 h. */
  createCase(input: CreateKybCaseInput, options?: CallOptions): Promise<KybCreateCaseResponse>;
  /** Reads the case details: `GET /kyb/case/{refId}/details`. */
  getCase(refId: string, options?: CallOptions): Promise<KybCaseDetails>;
  /** A short-lived signed download URL for a file, cached until shortly before it expires. */
  getDocumentUrl(file: DocumentRef, options?: CallOptions): Promise<SignedDocumentUrl>;
  /**
   * Opens a file for download as a stream (fetching a fresh signed URL if the cached one is
   * refused). `options.signal` also cancels the transfer after the headers; `writeTo(res)` sends
   * it on and cancels it when `res` closes first.
   */
  downloadDocument(file: DocumentRef, options?: CallOptions): Promise<DocumentDownload>;
  /** `GET /kyb/flows` (answer shape not documented: parsed JSON). */
  listFlows(options?: CallOptions): Promise<KybFlowsResponse>;
  /** `GET /kyb/flows/default` (answer shape not documented: parsed JSON). */
  defaultFlows(options?: CallOptions): Promise<KybFlowsResponse>;
}

/** KYC operations (spec 4.5-4.6). */
export interface KycApi {
  /** Creates a session: `POST /v2/sessions`. The token is valid 30 minutes by default. */
  createSession(input: CreateKycSessionInput, options?: CallOptions): Promise<KycCreateSessionResponse>;
  /** Reads the authoritative result: `GET /v2/users/{refId}`. */
  getResult(refId: string, options?: CallOptions): Promise<KycResult>;
  /** Classifies a status with the client's `kycStatuses` (unknown -> `pending`). */
  classify(status: string): KycDecision;
}

/** The verikit API client. */
export interface VerikitClient {
  /** KYB cases. */
  readonly kyb: KybApi;
  /** KYC sessions. */
  readonly kyc: KycApi;
  /** The hosted link for a KYB or KYC token, from the client's `webUrl`, `publicKey` and `environment`. */
  verificationLink(token: string): VerificationLink;
  /** Throws a ConfigurationError naming the first setting hosted links lack (`webUrl`, `publicKey`); `feature` says what needs them. */
  assertLinksConfigured(feature: string): void;
  /** Closes the client's connection pool (not a dispatcher you passed in). */
  close(): Promise<void>;
}

/** What the client parses with: zod and the response schemas (client/parsers.ts). */
export type Parsers = typeof import('./parsers.js');

/**
 * How a build hands the client its parsers: Node's imports them at the first call, so importing the
 * package loads no zod; the Web build imports them statically, so a bundler can tree-shake zod.
 */
export type ParsersSource = () => Parsers | Promise<Parsers>;

/** Parsers imported at the first call, then held. */
export function lazyParsers(load: () => Promise<Parsers>): ParsersSource {
  let parsers: Parsers | undefined;
  let loading: Promise<Parsers> | undefined;
  return () => {
    if (parsers !== undefined) return parsers;
    loading ??= load().then((loaded) => {
      parsers = loaded;
      return loaded;
    });
    return loading;
  };
}

function withoutUndefined(body: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

/** Builds a client over the given transport; the public `createClient` picks the platform's transport. */
export function createClientWithTransport(
  options: ClientOptions,
  transport: Transport,
  platformAgent: string,
  loadParsers: ParsersSource,
): ClientWithExtras {
  const resolved = resolveOptions(options, platformAgent, VERSION);
  const executor = new Executor(resolved, transport);
  const tracked = trackCreation(options.ledger, options.ledgerSchedule);
  const urls = new SignedUrlCache();
  const signal = (o: CallOptions | undefined) => o?.signal;
  const maxRetries = (o: CallOptions | undefined): number | undefined => {
    if (o?.maxRetries === undefined) return undefined;
    if (!Number.isInteger(o.maxRetries) || o.maxRetries < 0) throw new InvalidArgumentError('maxRetries must be a non-negative integer');
    return o.maxRetries;
  };

  const getDocumentUrl = async (file: DocumentRef, o?: CallOptions): Promise<SignedDocumentUrl> => {
    const path = resolveApiPath(file?.url, resolved.origin, resolved.basePath);
    return urls.get(path, async () =>
      executor.run({
        method: 'GET',
        path,
        route: '{document.url}',
        schema: (await loadParsers()).signedDocumentUrlSchema,
        signal: signal(o),
      }),
    );
  };

  const kyb: KybApi = {
    async createCase(input, o) {
      const { checkCreateCaseInput, kybCreateCaseResponseSchema } = await loadParsers();
      const body = checkCreateCaseInput(input);
      return tracked({ kind: 'kyb', refId: body.refId }, () =>
        executor.run({
          method: 'POST',
          path: '/kyb/case',
          route: '/kyb/case',
          body: withoutUndefined({ refId: body.refId, flow: body.flow, country: body.country, country_state: body.countryState }),
          schema: kybCreateCaseResponseSchema,
          signal: signal(o),
        }),
      );
    },
    async getCase(refId, o) {
      const { kybCaseDetailsSchema } = await loadParsers();
      return executor.run({
        method: 'GET',
        path: `/kyb/case/${encodeSegment('refId', refId)}/details`,
        route: '/kyb/case/{refId}/details',
        schema: kybCaseDetailsSchema,
        maxRetries: maxRetries(o),
        signal: signal(o),
      });
    },
    getDocumentUrl,
    async downloadDocument(file, o) {
      const path = resolveApiPath(file?.url, resolved.origin, resolved.basePath);
      const context = { method: 'GET', path: resolved.basePath + path, attempts: 1 };
      for (let attempt = 1; ; attempt++) {
        const signed = await getDocumentUrl(file, o);
        const opened = await openSignedUrl(
          transport,
          signed,
          { ...context, attempts: attempt },
          resolved.timeoutMs,
          resolved.userAgent,
          signal(o),
        );
        if (!('refused' in opened)) return opened;
        // A refused signed URL has most likely expired early: fetch a fresh one, once.
        urls.invalidate(path);
        if (attempt >= 2) throw opened.refused;
      }
    },
    async listFlows(o) {
      const { kybFlowsResponseSchema } = await loadParsers();
      return executor.run({ method: 'GET', path: '/kyb/flows', route: '/kyb/flows', schema: kybFlowsResponseSchema, signal: signal(o) });
    },
    async defaultFlows(o) {
      const { kybFlowsResponseSchema } = await loadParsers();
      return executor.run({
        method: 'GET',
        path: '/kyb/flows/default',
        route: '/kyb/flows/default',
        schema: kybFlowsResponseSchema,
        signal: signal(o),
      });
    },
  };

  const kyc: KycApi = {
    async createSession(input, o) {
      const { checkCreateSessionInput, kycCreateSessionResponseSchema } = await loadParsers();
      const body = checkCreateSessionInput(input);
      const path = '/v2/sessions';
      const created = await tracked({ kind: 'kyc', refId: body.refId }, () =>
        executor.run({
          method: 'POST',
          path,
          route: path,
          body: withoutUndefined({ refId: body.refId, flowId: body.flowId }),
          schema: kycCreateSessionResponseSchema,
          signal: signal(o),
        }),
      );
      if (!created.success) {
        throw new UnexpectedResponseError('unsuccessful', 200, [{ path: 'success', message: 'is false' }], {
          method: 'POST',
          path: resolved.basePath + path,
          attempts: 1,
          requestId: undefined,
        });
      }
      return created;
    },
    async getResult(refId, o) {
      const { kycResultSchema } = await loadParsers();
      return executor.run({
        method: 'GET',
        path: `/v2/users/${encodeSegment('refId', refId)}`,
        route: '/v2/users/{refId}',
        schema: kycResultSchema,
        maxRetries: maxRetries(o),
        signal: signal(o),
      });
    },
    classify: resolved.classifyKyc,
  };

  const assertLinksConfigured = (feature: string): void => {
    if (resolved.webUrl === undefined) throw new ConfigurationError('webUrl', `${feature}: hosted links need the client option webUrl`);
    if (resolved.publicKey === undefined)
      throw new ConfigurationError('publicKey', `${feature}: hosted links need the client option publicKey`);
  };

  return {
    kyb,
    kyc,
    verificationLink(token) {
      assertLinksConfigured('verificationLink');
      const url = buildVerificationLink({
        webUrl: resolved.webUrl as string,
        token,
        publicKey: resolved.publicKey as string,
        environment: resolved.environment,
      });
      return { url, expiresAt: readTokenExpiry(token) };
    },
    assertLinksConfigured,
    close: () => transport.close(),
    [CLIENT_EXTRAS]: EXTRAS,
  };
}

/** The authoritative result behind a webhook's subject, read by refId through `client` (the one the handler was given). */
async function fetchSubjectResult(client: VerikitClient, subject: EventSubject | null): Promise<FetchedResult> {
  if (subject === null)
    throw new InvalidArgumentError('could not tell which case or user this event is about; pass identify to the handler');
  return subject.kind === 'kyb'
    ? { kind: 'kyb', refId: subject.refId, result: await client.kyb.getCase(subject.refId) }
    : { kind: 'kyc', refId: subject.refId, result: await client.kyc.getResult(subject.refId) };
}

const EXTRAS: ClientExtras = { buildInviteRoutes, fetchResult: fetchSubjectResult };
