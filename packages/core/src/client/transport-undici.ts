import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import {
  type BufferedResponse,
  type StreamingResponse,
  type Transport,
  type TransportRequest,
  TransportTimeout,
  TransportTooLarge,
  withTimeoutSignal,
} from './transport.js';

/** Pool settings for the client's own undici Agent. */
export interface UndiciTransportOptions {
  /** An undici dispatcher of the integrator's (a ProxyAgent, say); verikit will not close it. */
  dispatcher?: Dispatcher;
  /** Sockets per origin (default 32). */
  connections?: number;
  /** Idle keep-alive lifetime in ms (default 10 s, under common server idle timeouts). */
  keepAliveTimeoutMs?: number;
}

type Headers = Record<string, string | string[] | undefined>;
const headerOf = (headers: Headers) => (name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/**
 * Buffered exchange through `dispatch` with a handler of our own: the timeout and the caller's
 * abort go through undici's controller, because handing undici an AbortSignal per request
 * costs about a third of the client's throughput (measured with bench/client.mjs).
 */
function dispatchBuffered(dispatcher: Dispatcher, request: TransportRequest): Promise<BufferedResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let failure: unknown;
    let status = 0;
    let headers: Headers = {};
    let size = 0;
    const chunks: Buffer[] = [];
    const cleanup = (): void => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: unknown): void => {
      if (failure !== undefined) return;
      failure = error;
      cleanup();
      controller?.abort(error instanceof Error ? error : new Error(String(error)));
      reject(error);
    };
    const timer = setTimeout(() => fail(new TransportTimeout()), request.timeoutMs);
    const onAbort = (): void => fail(request.signal?.reason ?? new Error('aborted'));
    request.signal?.addEventListener('abort', onAbort, { once: true });
    dispatcher.dispatch(
      { origin: request.origin, path: request.path, method: request.method, headers: request.headers, body: request.body },
      {
        onRequestStart(c) {
          controller = c;
          if (failure !== undefined) c.abort(failure instanceof Error ? failure : new Error('aborted'));
        },
        onResponseStart(_c, statusCode, responseHeaders) {
          status = statusCode;
          headers = responseHeaders;
          if (Number(headerOf(headers)('content-length')) > request.maxResponseBytes) fail(new TransportTooLarge(request.maxResponseBytes));
        },
        onResponseData(_c, chunk) {
          // Counted as it arrives, so an endless answer stops at the cap rather than filling memory.
          size += chunk.length;
          if (size > request.maxResponseBytes) fail(new TransportTooLarge(request.maxResponseBytes));
          else chunks.push(chunk);
        },
        onResponseEnd() {
          if (failure !== undefined) return;
          cleanup();
          resolve({ status, header: headerOf(headers), text: Buffer.concat(chunks).toString('utf8') });
        },
        onResponseError(_c, error) {
          fail(error);
        },
      },
    );
  });
}

/** Transport over undici with one keep-alive Agent per client. */
export function createUndiciTransport(options: UndiciTransportOptions = {}): Transport {
  const owned = options.dispatcher === undefined;
  const dispatcher: Dispatcher =
    options.dispatcher ??
    new Agent({
      connections: options.connections ?? 32,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
      keepAliveMaxTimeout: 60_000,
    });
  return {
    request: (request) => dispatchBuffered(dispatcher, request),
    async open(request): Promise<StreamingResponse> {
      const { statusCode, headers, body } = await withTimeoutSignal(request, (signal) =>
        dispatcher.request({ origin: request.origin, path: request.path, method: request.method, headers: request.headers, signal }),
      );
      return { status: statusCode, header: headerOf(headers), body: Readable.toWeb(body) as ReadableStream<Uint8Array> };
    },
    async close() {
      if (owned) await dispatcher.close();
    },
  };
}
