import { VerikitError, type VerikitErrorCode } from '../errors.js';

/** Where a failed request was going; never holds headers, bodies sent, or the API key. */
export interface RequestContext {
  /** HTTP method. */
  method: string;
  /** Request path relative to the API origin, refId URL-encoded. */
  path: string;
  /** How many attempts were made (1 = no retry). */
  attempts: number;
}

/**
 * Sets `body` on an error as a property that is there to read (`error.body`) but not enumerable: a
 * log serializer (pino's `err`), `JSON.stringify(error)` and `util.inspect(error)` leave it out, so
 * whatever a service echoed (a name, an address from a result) stays out of log lines and traces.
 */
function keepBodyOffLogs(error: Error, body: unknown): void {
  Object.defineProperty(error, 'body', { value: body, enumerable: false, writable: false, configurable: true });
}

/** Details of an HTTP answer kept on an {@link ApiError}. */
export interface ResponseDetails extends RequestContext {
  /** HTTP status of the last attempt. */
  status: number;
  /** Response body (parsed JSON when it was JSON, else text), secrets redacted, length bounded. */
  body: unknown;
  /** The service's request id header, when it sent one. */
  requestId: string | undefined;
}

/** Any failure of an API call; `method`, `path` and `attempts` say which call. */
export class ClientError extends VerikitError {
  override name = 'ClientError';
  /** HTTP method of the call. */
  readonly method: string;
  /** Path of the call (refId URL-encoded). */
  readonly path: string;
  /** Attempts made before giving up. */
  readonly attempts: number;

  constructor(code: VerikitErrorCode, message: string, context: RequestContext, options?: { cause?: unknown }) {
    super(code, `${message} (${context.method} ${context.path})`, options);
    this.method = context.method;
    this.path = context.path;
    this.attempts = context.attempts;
  }
}

/** The service answered with a non-success HTTP status. */
export class ApiError extends ClientError {
  override name = 'ApiError';
  /** HTTP status. */
  readonly status: number;
  /**
   * Response body, JSON-parsed when possible, secrets redacted. Not enumerable: it may echo personal
   * data, so logs, `JSON.stringify(error)` and `util.inspect(error)` leave it out; read it here.
   */
  declare readonly body: unknown;
  /** The service's request id, when present. */
  readonly requestId: string | undefined;

  constructor(details: ResponseDetails, code: VerikitErrorCode = 'api_error', what = 'request failed') {
    super(code, `${what}: HTTP ${details.status}`, details);
    this.status = details.status;
    keepBodyOffLogs(this, details.body);
    this.requestId = details.requestId;
  }
}

/** 401 or 403: the API key is missing, wrong, for another environment, or lacks product access. */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
  constructor(details: ResponseDetails) {
    super(details, 'authentication', 'the API key was refused');
  }
}

/** 400 (or 422): the service did not accept the request. */
export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
  constructor(details: ResponseDetails) {
    super(details, 'bad_request', 'the service rejected the request');
  }
}

/** 404: no such case, user, or document for this API key's organization. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  constructor(details: ResponseDetails) {
    super(details, 'not_found', 'not found');
  }
}

/** 429: rate limited; `retryAfterMs` carries the service's Retry-After when it sent one. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
  /** Milliseconds the service asked us to wait, when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(details: ResponseDetails, retryAfterMs: number | undefined) {
    super(details, 'rate_limited', 'rate limited');
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx: the service failed. */
export class ServerError extends ApiError {
  override name = 'ServerError';
  constructor(details: ResponseDetails) {
    super(details, 'server_error', 'the service failed');
  }
}

/** Which limit a {@link TimeoutError} hit. */
export type TimeoutKind = 'attempt' | 'deadline';

/** An attempt exceeded `timeoutMs`, or the call as a whole exceeded `deadlineMs`. */
export class TimeoutError extends ClientError {
  override name = 'TimeoutError';
  /** `attempt` (per-attempt timeout) or `deadline` (overall, retries included). */
  readonly kind: TimeoutKind;
  /** The limit that fired, in milliseconds. */
  readonly limitMs: number;

  constructor(kind: TimeoutKind, limitMs: number, context: RequestContext) {
    super('timeout', `${kind === 'attempt' ? 'attempt timed out' : 'deadline exceeded'} after ${limitMs} ms`, context);
    this.kind = kind;
    this.limitMs = limitMs;
  }
}

/** How far a failed connection got, which decides whether a POST may be retried. */
export type ConnectionFailure = 'not-sent' | 'reset' | 'other';

/** The connection failed: refused, DNS, reset, closed early. */
export class ConnectionError extends ClientError {
  override name = 'ConnectionError';
  /** `not-sent`: provably never reached the server (refused, DNS); `reset`: the socket died mid-request. */
  readonly failure: ConnectionFailure;

  constructor(failure: ConnectionFailure, context: RequestContext, cause: unknown) {
    super('connection', `connection failed (${failure}): ${describeCause(cause)}`, context, { cause });
    this.failure = failure;
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends ClientError {
  override name = 'AbortedError';
  constructor(context: RequestContext, cause: unknown) {
    super('aborted', 'request aborted by the caller', context, { cause });
  }
}

/** An answer's body was over `maxResponseBytes`: the read was stopped and the call is not retried. */
export class ResponseTooLargeError extends ClientError {
  override name = 'ResponseTooLargeError';
  /** The limit that was passed, in bytes. */
  readonly limitBytes: number;

  constructor(limitBytes: number, context: RequestContext) {
    super('response_too_large', `response body over maxResponseBytes (${limitBytes} bytes)`, context);
    this.limitBytes = limitBytes;
  }
}

/**
 * The storage behind a signed document URL refused the download (expired or altered URL, most
 * likely). Not an API error: the API key is never sent to storage.
 */
export class StorageRefusedError extends ClientError {
  override name = 'StorageRefusedError';
  /** HTTP status storage answered with. */
  readonly status: number;
  /** The start of storage's answer (at most 16 KiB read), parsed when JSON; not enumerable, as {@link ApiError.body}. */
  declare readonly body: unknown;

  constructor(status: number, body: unknown, context: RequestContext) {
    super('storage_refused', `storage refused the signed document URL: HTTP ${status}`, context);
    this.status = status;
    keepBodyOffLogs(this, body);
  }
}

/** One problem found in a response that breaks the documented shape. */
export interface ResponseIssue {
  /** Dotted path of the field, e.g. `steps.2.fields.0.key`. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

/** A 2xx answer that is not JSON, or whose JSON breaks the documented shape. */
export class UnexpectedResponseError extends ClientError {
  override name = 'UnexpectedResponseError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** `invalid_json`, `invalid_shape` or `unsuccessful` (a 2xx saying `success: false`). */
  readonly reason: 'invalid_json' | 'invalid_shape' | 'unsuccessful';
  /** The fields at fault (for `invalid_shape`). */
  readonly issues: readonly ResponseIssue[];
  /** The service's request id, when present. */
  readonly requestId: string | undefined;

  constructor(
    reason: UnexpectedResponseError['reason'],
    status: number,
    issues: readonly ResponseIssue[],
    context: RequestContext & { requestId: string | undefined },
  ) {
    const first = issues[0];
    const detail =
      reason === 'invalid_json'
        ? 'response is not valid JSON'
        : reason === 'unsuccessful'
          ? 'service answered success: false'
          : `response breaks the documented shape at "${first?.path ?? ''}": ${first?.message ?? ''}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`;
    super('unexpected_response', detail, context);
    this.status = status;
    this.reason = reason;
    this.issues = issues;
    this.requestId = context.requestId;
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}
