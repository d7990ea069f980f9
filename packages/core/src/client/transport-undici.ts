import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { Transport, TransportRequest, TransportResponse } from './transport.js';

/** Pool settings for the client's own undici Agent. */
export interface UndiciTransportOptions {
  /** An undici dispatcher of the integrator's (a ProxyAgent, say); verikit will not close it. */
  dispatcher?: Dispatcher;
  /** Sockets per origin (default 32). */
  connections?: number;
  /** Idle keep-alive lifetime in ms (default 10 s, under common server idle timeouts). */
  keepAliveTimeoutMs?: number;
}

/** Transport over undici's `request()` with one keep-alive Agent per client. */
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
    async send(request: TransportRequest): Promise<TransportResponse> {
      const { statusCode, headers, body } = await dispatcher.request({
        origin: request.url.origin,
        path: request.url.pathname + request.url.search,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      });
      return {
        status: statusCode,
        header: (name) => {
          const value = headers[name];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        text: () => body.text(),
        stream: () => Readable.toWeb(body) as ReadableStream<Uint8Array>,
        discard: async () => {
          await body.dump().catch(() => undefined);
        },
      };
    },
    async close() {
      if (owned) await dispatcher.close();
    },
  };
}
