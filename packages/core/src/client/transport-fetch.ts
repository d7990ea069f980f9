import { readWebBody } from '../util/read-body.js';
import {
  type BufferedResponse,
  type StreamingResponse,
  type Transport,
  type TransportRequest,
  TransportTooLarge,
  withTimeoutSignal,
} from './transport.js';

const decoder = new TextDecoder();

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
        const tooLarge = new TransportTooLarge(request.maxResponseBytes);
        if (Number(response.headers.get('content-length')) > request.maxResponseBytes) {
          await response.body?.cancel().catch(() => {});
          throw tooLarge;
        }
        // Counted as it arrives, so an endless answer stops at the cap rather than filling memory.
        const read = await readWebBody(response.body, { maxBytes: request.maxResponseBytes, timeoutMs: request.timeoutMs });
        if (read.kind === 'too-large') throw tooLarge;
        if (read.kind !== 'ok') throw signal.reason ?? new Error(`response body ${read.kind}`);
        return { status: response.status, header: headerOf(response), text: decoder.decode(read.bytes) };
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
