import type { ConnectionFailure } from './errors.js';

/** One HTTP exchange as the client's retry loop sees it, independent of undici or fetch. */
export interface TransportRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** The answer; the body must be read, streamed or discarded exactly once. */
export interface TransportResponse {
  status: number;
  header(name: string): string | undefined;
  text(): Promise<string>;
  stream(): ReadableStream<Uint8Array>;
  discard(): Promise<void>;
}

/** The HTTP engine under the client. */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
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
