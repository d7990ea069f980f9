import type { Transport, TransportRequest, TransportResponse } from './transport.js';

/** Transport over a WHATWG `fetch` (the global one, or one the integrator passes). */
export function createFetchTransport(fetchImpl: typeof fetch = globalThis.fetch): Transport {
  return {
    async send(request: TransportRequest): Promise<TransportResponse> {
      // `manual`: a redirect must never carry the x-api-key header to another origin.
      const response = await fetchImpl(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
        redirect: 'manual',
      });
      const emptyStream = (): ReadableStream<Uint8Array> => new ReadableStream({ start: (c) => c.close() });
      return {
        status: response.status,
        header: (name) => response.headers.get(name) ?? undefined,
        text: () => response.text(),
        stream: () => response.body ?? emptyStream(),
        discard: async () => {
          await response.body?.cancel().catch(() => undefined);
        },
      };
    },
    async close() {},
  };
}
