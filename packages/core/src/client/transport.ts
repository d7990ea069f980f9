import {
  AbortedError,
  ConnectionError,
  type ConnectionFailure,
  type RequestContext,
  ResponseTooLargeError,
  type TimeoutError,
} from './errors.js';

/** One HTTP exchange as the client's retry loop sees it, independent of undici or fetch. */
export interface TransportRequest {
  method: 'GET' | 'POST';
  /** `scheme://host[:port]`. */
  origin: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** For `request`: the whole exchange, body included. For `open`: until the headers arrive. */
  timeoutMs: number;
  /** For `request`: the most body bytes read before giving up with {@link TransportTooLarge}. */
  maxResponseBytes: number;
  /** The caller's signal, when there is one (the transport adds no signal of its own on the hot path). */
  signal?: AbortSignal | undefined;
}

/** A fully read answer. */
export interface BufferedResponse {
  status: number;
  header(name: string): string | undefined;
  text: string;
}

/** An answer whose body is still arriving; it must be read to the end or cancelled. */
export interface StreamingResponse {
  status: number;
  header(name: string): string | undefined;
  body: ReadableStream<Uint8Array>;
}

/** The HTTP engine under the client. */
export interface Transport {
  /** Sends a request and reads the whole answer within `timeoutMs`. */
  request(request: TransportRequest): Promise<BufferedResponse>;
  /** Sends a request and hands back the body as a stream once the headers arrive. */
  open(request: TransportRequest): Promise<StreamingResponse>;
  close(): Promise<void>;
}

/** Thrown by a transport when an answer's body is over `maxResponseBytes` (declared or counted). */
export class TransportTooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super('response too large');
  }
}

/** Thrown by a transport whose `timeoutMs` ran out. */
export class TransportTimeout extends Error {
  constructor() {
    super('transport timeout');
  }
}

const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

/**
 * How far a network error got. Only `not-sent` proves the server never saw the request, which is
 * the one case where a POST (creating a case) may be retried.
 */
export function classifyNetworkError(error: unknown): ConnectionFailure {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (NOT_SENT.has(code)) return 'not-sent';
      if (RESET.has(code)) return 'reset';
    }
    current = (current as { cause?: unknown }).cause;
  }
  return 'other';
}

/**
 * Runs `start` with an AbortSignal that fires on the caller's signal or after `timeoutMs`
 * (rejecting with TransportTimeout), and cleans both up when `start` settles.
 */
export async function withTimeoutSignal<T>(request: TransportRequest, start: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TransportTimeout()), request.timeoutMs);
  const onAbort = (): void => controller.abort(request.signal?.reason);
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await start(controller.signal);
  } catch (error) {
    throw controller.signal.reason instanceof TransportTimeout ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A failed exchange as the client's error: the caller's abort first, then the transport's own
 * timeout (which `timeout` names: a per-attempt limit or the overall deadline), an answer over
 * `maxResponseBytes`, else the connection.
 */
export function transportFailure(
  error: unknown,
  signal: AbortSignal | undefined,
  context: RequestContext,
  timeout: () => TimeoutError,
): AbortedError | TimeoutError | ConnectionError | ResponseTooLargeError {
  if (signal?.aborted) return new AbortedError(context, signal.reason);
  if (error instanceof TransportTimeout) return timeout();
  if (error instanceof TransportTooLarge) return new ResponseTooLargeError(error.limitBytes, context);
  return new ConnectionError(classifyNetworkError(error), context, error);
}
