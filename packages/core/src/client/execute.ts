import type * as z from 'zod/mini';
import type { SpanRecorder } from '../telemetry/tracing.js';
import { errorReason, tell } from '../util/logger.js';
import { safeResponseBody } from '../util/redact.js';
import {
  AbortedError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  type ClientError,
  ConnectionError,
  NotFoundError,
  RateLimitError,
  type RequestContext,
  type ResponseDetails,
  type ResponseIssue,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';
import type { ResolvedOptions } from './options.js';
import { type AttemptOutcome, backoffDelay, isRetryable, parseRetryAfter, type RetryPolicy } from './retry.js';
import { type BufferedResponse, type Transport, transportFailure } from './transport.js';

/** One API call as the endpoint methods describe it. */
export interface Call<T> {
  method: 'GET' | 'POST';
  /** Path below the base URL, already encoded. */
  path: string;
  /** The path's template, for traces (`/kyb/case/{refId}/details`): never the refId itself. */
  route: string;
  body?: Record<string, unknown>;
  schema: z.ZodMiniType<T>;
  signal?: AbortSignal | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
}

/** What a call's span reports of its last attempt. */
interface LastAttempt {
  attempts: number;
  status: number | undefined;
  requestId: string | undefined;
}

/** Per-call overrides every endpoint method accepts. */
export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /**
   * Retries for this call instead of the client's `maxRetries` (0: one attempt). The ledger reads
   * with 0, so every request it makes passes through its read budget.
   */
  maxRetries?: number;
}

/** Runs API calls with the client's retry, timeout, deadline and hook rules. */
export class Executor {
  private readonly retry: RetryPolicy;
  private readonly baseHeaders: Record<string, string>;
  private readonly serverAddress: string;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly transport: Transport,
    random: () => number = Math.random,
  ) {
    this.retry = {
      maxRetries: options.maxRetries,
      baseDelayMs: options.baseDelayMs,
      maxDelayMs: options.maxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs,
      random,
    };
    this.serverAddress = new URL(options.origin).hostname;
    this.baseHeaders = { 'x-api-key': options.apiKey, 'user-agent': options.userAgent, accept: 'application/json' };
  }

  /** Performs the call (in a span, when tracing is on) and returns its validated body. */
  run<T>(call: Call<T>): Promise<T> {
    const { tracing } = this.options;
    if (!tracing.enabled()) return this.attempts(call, undefined);
    // With the API but nothing recording (no SDK), the span hands over no recorder: straight to the attempts.
    return tracing.span(`verikit ${call.method} ${call.route}`, 'client', undefined, (span) =>
      span === undefined ? this.attempts(call, undefined) : this.recorded(call, span),
    );
  }

  /** The attempts of a call whose span records: what it learns goes onto the span. */
  private async recorded<T>(call: Call<T>, span: SpanRecorder): Promise<T> {
    const last: LastAttempt = { attempts: 0, status: undefined, requestId: undefined };
    try {
      return await this.attempts(call, last);
    } catch (error) {
      span.set({ 'error.type': errorReason(error) });
      throw error;
    } finally {
      span.set({
        'http.request.method': call.method,
        'url.template': call.route,
        'server.address': this.serverAddress,
        'http.response.status_code': last.status,
        'verikit.attempts': last.attempts,
        'verikit.request_id': last.requestId,
      });
    }
  }

  /** The call's attempts; `last` (when traced) learns the last attempt's status and request id. */
  private async attempts<T>(call: Call<T>, last: LastAttempt | undefined): Promise<T> {
    const { options } = this;
    const fullPath = options.basePath + call.path;
    const headers = call.body === undefined ? this.baseHeaders : { ...this.baseHeaders, 'content-type': 'application/json' };
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const deadlineAt = Date.now() + options.deadlineMs;
    let freeResetRetry = call.method === 'GET';
    const maxRetries = call.maxRetries ?? this.retry.maxRetries;
    for (let attempt = 1; ; attempt++) {
      const context: RequestContext = { method: call.method, path: fullPath, attempts: attempt };
      if (last) last.attempts = attempt;
      const remaining = deadlineAt - Date.now();
      if (remaining <= 0) throw new TimeoutError('deadline', options.deadlineMs, context);
      if (call.signal?.aborted) throw new AbortedError(context, call.signal.reason);
      const result = await this.exchange(call, context, { headers, body, remaining });
      if ('response' in result) {
        const { response, requestId } = result;
        if (last) {
          last.status = response.status;
          last.requestId = requestId;
        }
        if (response.status >= 200 && response.status < 300)
          return this.parse(call.schema, response.status, response.text, answered(context, requestId));
      }
      const { failure, outcome } =
        'response' in result ? this.classifyStatus(result.response, answered(context, result.requestId)) : result;
      if (!isRetryable(call.method, outcome)) throw failure;
      // A GET whose keep-alive socket the server had already closed is retried once even with retries off.
      const useFreeRetry = attempt > maxRetries && freeResetRetry && outcome.kind === 'network' && outcome.failure === 'reset';
      if (attempt > maxRetries && !useFreeRetry) throw failure;
      if (useFreeRetry) freeResetRetry = false;
      const retryAfterMs = outcome.kind === 'status' ? outcome.retryAfterMs : undefined;
      if (retryAfterMs !== undefined && retryAfterMs > this.retry.maxRetryAfterMs) throw failure;
      const delay = useFreeRetry ? 0 : (retryAfterMs ?? backoffDelay(attempt - 1, this.retry));
      if (Date.now() + delay >= deadlineAt) throw failure;
      options.logger.warn(
        { method: call.method, path: fullPath, attempt, retryInMs: Math.round(delay), err: failure },
        'API call failed; retrying',
      );
      await sleep(delay, call.signal, context);
    }
  }

  /**
   * One attempt on the wire: an answer, or a classified failure. Aborts and deadline expiry throw.
   * A promise chain rather than an async function: one hop less on every call's hot path.
   */
  private exchange(
    call: Call<unknown>,
    context: RequestContext,
    request: { headers: Record<string, string>; body: string | undefined; remaining: number },
  ): Promise<{ response: BufferedResponse; requestId: string | undefined } | { failure: ClientError; outcome: AttemptOutcome }> {
    const { options } = this;
    tell(options.onRequest, { method: call.method, path: context.path, attempt: context.attempts });
    const started = Date.now();
    // Only the exchange itself is in the rejection handler: a bug elsewhere must not pass for a network failure.
    return this.transport
      .request({
        method: call.method,
        origin: options.origin,
        path: context.path,
        headers: request.headers,
        body: request.body,
        timeoutMs: Math.min(options.timeoutMs, request.remaining),
        maxResponseBytes: options.maxResponseBytes,
        signal: call.signal,
      })
      .then(
        (response) => {
          const requestId = response.header(options.requestIdHeader);
          this.report(context, started, response.status, requestId, undefined);
          return { response, requestId };
        },
        (error: unknown) => {
          const failure = transportFailure(error, call.signal, context, () =>
            request.remaining < options.timeoutMs
              ? new TimeoutError('deadline', options.deadlineMs, context)
              : new TimeoutError('attempt', options.timeoutMs, context),
          );
          this.report(context, started, undefined, undefined, failure.code);
          if (failure instanceof ConnectionError) return { failure, outcome: { kind: 'network', failure: failure.failure } };
          if (failure instanceof TimeoutError && failure.kind === 'attempt') return { failure, outcome: { kind: 'timeout' } };
          throw failure;
        },
      );
  }

  private classifyStatus(
    response: BufferedResponse,
    context: RequestContext & { requestId: string | undefined },
  ): { failure: ClientError; outcome: AttemptOutcome } {
    const retryAfterMs = parseRetryAfter(response.header('retry-after'), Date.now());
    return {
      failure: this.httpError(response.status, response.text, retryAfterMs, context),
      outcome: { kind: 'status', status: response.status, retryAfterMs },
    };
  }

  private report(
    context: RequestContext,
    started: number,
    status: number | undefined,
    requestId: string | undefined,
    errorCode: string | undefined,
  ): void {
    tell(this.options.onResponse, {
      method: context.method,
      path: context.path,
      attempt: context.attempts,
      status,
      durationMs: Date.now() - started,
      requestId,
      errorCode,
    });
  }

  private parse<T>(schema: z.ZodMiniType<T>, status: number, text: string, context: RequestContext & { requestId: string | undefined }): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UnexpectedResponseError('invalid_json', status, [], context);
    }
    const result = schema.safeParse(json);
    if (result.success) return result.data;
    throw new UnexpectedResponseError('invalid_shape', status, flattenIssues(result.error.issues, []), context);
  }

  /** Maps an HTTP failure to its error class, with the body redacted and bounded. */
  private httpError(
    status: number,
    text: string,
    retryAfterMs: number | undefined,
    context: RequestContext & { requestId: string | undefined },
  ): ApiError {
    const details: ResponseDetails = { ...context, status, body: safeResponseBody(text, [this.options.apiKey]) };
    if (status === 401 || status === 403) return new AuthenticationError(details);
    if (status === 400 || status === 422) return new BadRequestError(details);
    if (status === 404) return new NotFoundError(details);
    if (status === 429) return new RateLimitError(details, retryAfterMs);
    if (status >= 500) return new ServerError(details);
    return new ApiError(details);
  }
}

/**
 * Zod issues as field paths. A union failure is reported through its first branch, which in our
 * schemas is always the documented shape (the second only admits values the spec does not know).
 */
function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[]): ResponseIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    const branch = issue.code === 'invalid_union' ? issue.errors[0] : undefined;
    if (branch !== undefined && branch.length > 0) return flattenIssues(branch, path);
    return [{ path: path.map(String).join('.'), message: issue.message }];
  });
}

/**
 * The attempt's context with the answer's request id. Spelled out: on Node 20 the spread
 * (`{ ...context, requestId }`) cost about 2 µs a call, a twentieth of a whole request.
 */
function answered(context: RequestContext, requestId: string | undefined): RequestContext & { requestId: string | undefined } {
  return { method: context.method, path: context.path, attempts: context.attempts, requestId };
}

function sleep(ms: number, signal: AbortSignal | undefined, context: RequestContext): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError(context, signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
