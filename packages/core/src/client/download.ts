import { InvalidArgumentError } from '../errors.js';
import type { SignedDocumentUrl } from '../schemas/kyb.js';
import { readBody } from '../util/read-body.js';
import { type RequestContext, StorageRefusedError, TimeoutError } from './errors.js';
import { type Transport, transportFailure } from './transport.js';

/** How much of a storage refusal is read: enough for its error message, never a whole file. */
const REFUSAL_BYTES = 16 * 1024;

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
  signed: SignedDocumentUrl,
  context: RequestContext,
  timeoutMs: number,
  userAgent: string,
  signal: AbortSignal | undefined,
): Promise<DocumentDownload | { refused: StorageRefusedError }> {
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
      maxResponseBytes: REFUSAL_BYTES,
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
    // A refusal body is read only so far and so long: storage may answer slowly, or endlessly.
    const read = await readBody(response.body, { maxBytes: REFUSAL_BYTES, timeoutMs });
    return { refused: new StorageRefusedError(response.status, read.kind === 'ok' ? parsedOrText(read.bytes) : undefined, context) };
  } catch (error) {
    throw transportFailure(error, signal, context, () => new TimeoutError('attempt', timeoutMs, context));
  }
}

function parsedOrText(bytes: Uint8Array): unknown {
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
