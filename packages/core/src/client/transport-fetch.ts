import { type BufferedResponse, type StreamingResponse, type Transport, type TransportRequest, withTimeoutSignal } from './transport.js';

/** Transport over a WHATWG `fetch` (the global one, or one the integrator passes). */
export function createFetchTransport(fetchImpl: typeof fetch = globalThis.fetch): Transport {
  const send = (request: TransportRequest, signal: AbortSignal): Promise<Response> =>
    // `manual`: a redirect must never carry the x-api-key header to another origin.
    fetchImpl(request.origin + request.path, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal,
      redirect: 'manual',
    });
  const headerOf = (response: Response) => (name: string) => response.headers.get(name) ?? undefined;
  return {
    request: (request): Promise<BufferedResponse> =>
      withTimeoutSignal(request, async (signal) => {
        const response = await send(request, signal);
        return { status: response.status, header: headerOf(response), text: await response.text() };
      }),
    async open(request): Promise<StreamingResponse> {
      const response = await withTimeoutSignal(request, (signal) => send(request, signal));
      return {
        status: response.status,
        header: headerOf(response),
        body: response.body ?? new ReadableStream({ start: (c) => c.close() }),
      };
    },
    async close() {},
  };
}
