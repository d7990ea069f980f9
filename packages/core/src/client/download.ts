import { InvalidArgumentError } from '../errors.js';
import type { SignedDocumentUrl } from '../schemas/kyb.js';
import { type ClientError, type RequestContext, TimeoutError } from './errors.js';
import type { Executor } from './execute.js';
import { type Transport, transportFailure } from './transport.js';

/** A document being downloaded: a stream, never the whole file in memory. */
export interface DocumentDownload {
  /** The file's bytes; read it to the end or cancel it. */
  body: ReadableStream<Uint8Array>;
  /** Content-Type from the storage answer. */
  contentType: string | undefined;
  /** Content-Length from the storage answer, when sent. */
  contentLength: number | undefined;
}

/**
 * GETs a signed storage URL (no API key: it is not the API) and hands back the body stream.
 * The timeout covers the wait for the answer's headers, not the transfer.
 */
export async function openSignedUrl(
  transport: Transport,
  executor: Executor,
  signed: SignedDocumentUrl,
  context: RequestContext,
  timeoutMs: number,
  userAgent: string,
  signal: AbortSignal | undefined,
): Promise<DocumentDownload | { refused: ClientError }> {
  let url: URL;
  try {
    url = new URL(signed.url);
  } catch {
    throw new InvalidArgumentError('the service returned a signed URL that is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidArgumentError('signed URL must be http(s)');
  try {
    const response = await transport.open({
      method: 'GET',
      origin: url.origin,
      path: url.pathname + url.search,
      headers: { 'user-agent': userAgent },
      timeoutMs,
      signal,
    });
    if (response.status >= 200 && response.status < 300) {
      const length = response.header('content-length');
      return {
        body: response.body,
        contentType: response.header('content-type'),
        contentLength: length === undefined ? undefined : Number(length),
      };
    }
    const text = await new Response(response.body).text();
    return { refused: executor.httpError(response.status, text, undefined, { ...context, requestId: undefined }) };
  } catch (error) {
    throw transportFailure(error, signal, context, () => new TimeoutError('attempt', timeoutMs, context));
  }
}
