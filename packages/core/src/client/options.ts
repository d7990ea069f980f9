import { ConfigurationError } from '../errors.js';
import type { LedgerEngine } from '../ledger/ledger.js';
import type { ReconcileScheduleOptions } from '../ledger/schedule.js';
import { createKycStatusClassifier, type KycDecision } from '../schemas/kyc-values.js';
import { resolveTracing, type TelemetryOption, TRACER_SCOPE, type Tracing } from '../telemetry/tracing.js';
import { type Logger, resolveLogger } from '../util/logger.js';
import type { VerikitClient } from './client.js';

/** Which credentials set the client talks to; the hosted link carries it as `Sandbox`/`Production`. */
export type Environment = 'sandbox' | 'production';

/** What `onRequest` receives: never headers or bodies. */
export interface RequestEvent {
  method: string;
  path: string;
  attempt: number;
}

/** What `onResponse` receives after each attempt: never headers or bodies. */
export interface ResponseEvent extends RequestEvent {
  /** HTTP status, absent when the attempt failed before an answer. */
  status: number | undefined;
  durationMs: number;
  requestId: string | undefined;
  /** Error code when the attempt failed (timeout, connection, ...). */
  errorCode: string | undefined;
}

/** Options of {@link createClient}. Only `apiKey` and `baseUrl` are required. */
export interface ClientOptions {
  /** The organization's private API key, sent as `x-api-key`; server-side only. */
  apiKey: string;
  /** The service's base address ({base_url}); may carry a path prefix. */
  baseUrl: string;
  /** The hosted verification page ({web_url}); needed for `client.links`. */
  webUrl?: string;
  /** The organization's public SDK key; needed for `client.links`. */
  publicKey?: string;
  /** `sandbox` (default) or `production`. */
  environment?: Environment;
  /** Per-attempt timeout in ms, body included (default 15 000). */
  timeoutMs?: number;
  /** Overall limit for a call in ms, retries and backoff included (default 45 000). */
  deadlineMs?: number;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Backoff base and ceiling in ms (defaults 300 and 5 000). */
  backoff?: { baseMs?: number; maxMs?: number };
  /** A Retry-After longer than this (ms, default 30 000) is not waited for: the error is thrown. */
  maxRetryAfterMs?: number;
  /**
   * Largest API answer body read, in bytes (default 10 MiB); a larger one stops the read with
   * `ResponseTooLargeError` and is not retried.
   */
  maxResponseBytes?: number;
  /** A fetch implementation to use instead of the built-in transport. */
  fetch?: typeof fetch;
  /** Extra text appended to the `User-Agent` (your app's name and version). */
  userAgent?: string;
  /** Response header that carries the service's request id (default `x-request-id`; not in the spec). */
  requestIdHeader?: string;
  /**
   * Which KYC status strings mean approved or rejected. The spec lists none, so by default every
   * status is `pending`: set these from your dashboard's configuration.
   */
  kycStatuses?: { approved?: readonly string[]; rejected?: readonly string[] };
  /** Called before each attempt; a throw from it is ignored (a hook never fails a call). */
  onRequest?: (event: RequestEvent) => void;
  /** Called after each attempt; a throw from it is ignored (the call's outcome stays the service's). */
  onResponse?: (event: ResponseEvent) => void;
  /**
   * Where retries are written (default: `console` for warnings; `false`: nowhere): one warning per
   * failed attempt that is retried, with the method, path, attempt and failure. Never the key or a body.
   */
  logger?: Logger | false;
  /**
   * OpenTelemetry: a span per call (method, route template, status, attempts, request id; never
   * the key or a body). Pass `openTelemetry(otel)` from `@verikit/core/otel`, or `false` for none;
   * on Node it is found by itself when `@opentelemetry/api` is installed (and the raw API is taken too).
   */
  telemetry?: TelemetryOption;
  /**
   * The verification ledger: `kyb.createCase` and `kyc.createSession` record the refId in it
   * before the create call is sent (a crash in between leaves a row the reconciler checks, never a
   * case the ledger does not know), and forget it when the service refuses the call.
   */
  ledger?: LedgerEngine;
  /** The reconciler's schedule, for the first check of a verification created here (default: 1 min after creation). */
  ledgerSchedule?: ReconcileScheduleOptions;
}

/** Options after defaults and checks. */
export interface ResolvedOptions {
  apiKey: string;
  origin: string;
  basePath: string;
  webUrl: string | undefined;
  publicKey: string | undefined;
  environment: Environment;
  timeoutMs: number;
  deadlineMs: number;
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  maxResponseBytes: number;
  userAgent: string;
  requestIdHeader: string;
  classifyKyc: (status: string) => KycDecision;
  onRequest: ((event: RequestEvent) => void) | undefined;
  onResponse: ((event: ResponseEvent) => void) | undefined;
  logger: Logger;
  tracing: Tracing;
}

/** Parses an absolute http(s) URL or throws a ConfigurationError naming `option`. */
export function parseHttpUrl(option: string, value: unknown): URL {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigurationError(option, `${option} is required (an http or https URL)`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError(option, `${option} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(option, `${option} must use http or https, not ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new ConfigurationError(option, `${option} must not carry credentials`);
  }
  return url;
}

function positive(option: string, value: number | undefined, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new ConfigurationError(option, `${option} must be a ${allowZero ? 'non-negative' : 'positive'} finite number`);
  }
  return value;
}

/** Rejects a value that would be unusable (or a header injection) as a credential. */
export function checkCredential(option: string, value: unknown, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.length === 0) {
    throw new ConfigurationError(option, `${option} is required and must be a non-empty string`);
  }
  if (/[\s\u0000-\u001f\u007f]/.test(value)) {
    throw new ConfigurationError(option, `${option} contains whitespace or control characters`);
  }
  return value;
}

/** Checks every option once, at creation, and fills defaults. */
export function resolveOptions(options: ClientOptions, platformAgent: string, version: string): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('options', 'createClient needs an options object');
  }
  const apiKey = checkCredential('apiKey', options.apiKey, true) as string;
  const base = parseHttpUrl('baseUrl', options.baseUrl);
  if (base.search || base.hash) throw new ConfigurationError('baseUrl', 'baseUrl must not carry a query or fragment');
  const webUrl = options.webUrl === undefined ? undefined : parseHttpUrl('webUrl', options.webUrl).toString();
  const environment = options.environment ?? 'sandbox';
  if (environment !== 'sandbox' && environment !== 'production') {
    throw new ConfigurationError('environment', 'environment must be "sandbox" or "production"');
  }
  const maxRetries = positive('maxRetries', options.maxRetries, 2, true);
  if (!Number.isInteger(maxRetries)) throw new ConfigurationError('maxRetries', 'maxRetries must be an integer');
  const extraAgent = options.userAgent === undefined ? '' : ` ${options.userAgent.replace(/[\r\n]/g, ' ')}`;
  return {
    apiKey,
    origin: base.origin,
    basePath: base.pathname.replace(/\/+$/, ''),
    webUrl,
    publicKey: checkCredential('publicKey', options.publicKey, false),
    environment,
    timeoutMs: positive('timeoutMs', options.timeoutMs, 15_000),
    deadlineMs: positive('deadlineMs', options.deadlineMs, 45_000),
    maxRetries,
    baseDelayMs: positive('backoff.baseMs', options.backoff?.baseMs, 300, true),
    maxDelayMs: positive('backoff.maxMs', options.backoff?.maxMs, 5_000, true),
    maxRetryAfterMs: positive('maxRetryAfterMs', options.maxRetryAfterMs, 30_000, true),
    maxResponseBytes: positive('maxResponseBytes', options.maxResponseBytes, 10 * 1024 * 1024),
    userAgent: `verikit/${version} (${platformAgent})${extraAgent}`,
    requestIdHeader: (options.requestIdHeader ?? 'x-request-id').toLowerCase(),
    classifyKyc: createKycStatusClassifier(options.kycStatuses),
    onRequest: options.onRequest,
    logger: resolveLogger(options.logger),
    tracing: resolveTracing(options.telemetry, TRACER_SCOPE, version),
    onResponse: options.onResponse,
  };
}

/** The `VERIKIT_*` variables {@link clientOptionsFromEnv} reads. */
export const ENV_VARIABLES = {
  apiKey: 'VERIKIT_API_KEY',
  baseUrl: 'VERIKIT_BASE_URL',
  webUrl: 'VERIKIT_WEB_URL',
  publicKey: 'VERIKIT_PUBLIC_KEY',
  environment: 'VERIKIT_ENVIRONMENT',
} as const;

/**
 * Client options from `VERIKIT_*` variables; a missing or malformed one throws a
 * ConfigurationError whose `option` is the variable's name (and whose message never holds its value).
 */
export function clientOptionsFromEnv(env: Record<string, string | undefined>): ClientOptions {
  const read = (name: string, required: boolean): string | undefined => {
    const value = env[name];
    if (value === undefined || value === '') {
      if (required) throw new ConfigurationError(name, `${name} is not set`);
      return undefined;
    }
    return value;
  };
  // Any case: the hosted page spells it `Sandbox`, the SDK `sandbox`, and both are the same environment.
  const environment = read(ENV_VARIABLES.environment, false)?.toLowerCase();
  if (environment !== undefined && environment !== 'sandbox' && environment !== 'production') {
    throw new ConfigurationError(ENV_VARIABLES.environment, `${ENV_VARIABLES.environment} must be "sandbox" or "production" (any case)`);
  }
  const options: ClientOptions = {
    apiKey: read(ENV_VARIABLES.apiKey, true) as string,
    baseUrl: read(ENV_VARIABLES.baseUrl, true) as string,
    webUrl: read(ENV_VARIABLES.webUrl, false),
    publicKey: read(ENV_VARIABLES.publicKey, false),
    environment: environment as Environment | undefined,
  };
  // Checked here so the error names the variable to fix rather than the option it feeds.
  namingVariables(() => resolveOptions(options, '', ''));
  return options;
}

/** Runs `work`, turning a ConfigurationError about a client option into one that names its `VERIKIT_*` variable. */
function namingVariables<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    const variable = error instanceof ConfigurationError ? ENV_VARIABLES[error.option as keyof typeof ENV_VARIABLES] : undefined;
    if (variable === undefined) throw error;
    const { option, message } = error as ConfigurationError;
    const unset = `the client option ${option}`;
    throw new ConfigurationError(
      variable,
      message.includes(unset) ? message.replace(unset, `${variable}, which is not set`) : message.replace(option, variable),
    );
  }
}

/** A client built from `VERIKIT_*` variables: its configuration errors name the variable to set, not the option. */
export function withVariableNames(client: VerikitClient): VerikitClient {
  return {
    ...client,
    verificationLink: (token) => namingVariables(() => client.verificationLink(token)),
    assertLinksConfigured: (feature) => namingVariables(() => client.assertLinksConfigured(feature)),
  };
}
