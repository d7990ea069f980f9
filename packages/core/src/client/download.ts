import { InvalidArgumentError } from '../errors.js';
import type { SignedDocumentUrl } from '../schemas/kyb.js';
import { readWebBody } from '../util/read-body.js';
import { type RequestContext, StorageRefusedError, TimeoutError } from './errors.js';
import { type Transport, transportFailure } from './transport.js';
import { type WritableLike, type WriteOutcome, writeBody } from './write-to.js';

/** How much of a storage refusal is read: enough for its error message, never a whole file. */
const REFUSAL_BYTES = 16 * 1024;

/**
 * A document being downloaded: a stream, never the whole file in memory. It holds a connection
 * until it is read to the end or cancelled: use {@link DocumentDownload.writeTo} to send it on,
 * or read `body` yourself and cancel it when you stop early. The call's `signal` keeps covering
 * the body after the headers arrived: aborting it cancels the transfer.
 * @example
 * // An Express route: a visitor who goes away cancels the download at once.
 * const download = await client.kyb.downloadDocument(file);
 * res.set('content-type', 'application/pdf');
 * await download.writeTo(res); // { outcome: 'finished' | 'destination-closed', bytes }
 */
export interface DocumentDownload {
  /** The file's bytes; read it to the end or cancel it. */
  body: ReadableStream<Uint8Array>;
  /** Content-Type from the storage answer. */
  contentType: string | undefined;
  /** Content-Length from the storage answer, when sent. */
  contentLength: number | undefined;
  /**
   * Writes the file into a Node writable (an `http.ServerResponse`, a file stream) with
   * backpressure, and ends it. When the destination closes first (the visitor went away) the
   * download is cancelled and its connection freed: the outcome is `destination-closed`. When the
   * download fails midway, the destination is destroyed (a cut-off file never looks complete) and
   * the promise rejects with a `ConnectionError`, or an `AbortedError` after the call's signal.
   * Uses only `write`, `end`, `destroy`, `once` and `off`, so it works on every runtime.
   */
  writeTo(destination: WritableLike): Promise<WriteOutcome>;
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
  const timedOut = () => new TimeoutError('attempt', timeoutMs, context);
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
      const body = signal === undefined ? response.body : cancelledBy(response.body, signal);
      const failure = (error: unknown) => transportFailure(error, signal, context, timedOut);
      return {
        body,
        contentType: response.header('content-type'),
        contentLength: length === undefined ? undefined : Number(length),
        writeTo: (destination) => writeBody(body, destination, failure),
      };
    }
    // A refusal body is read only so far and so long: storage may answer slowly, or endlessly.
    const read = await readWebBody(response.body, { maxBytes: REFUSAL_BYTES, timeoutMs });
    return { refused: new StorageRefusedError(response.status, read.kind === 'ok' ? parsedOrText(read.bytes) : undefined, context) };
  } catch (error) {
    throw transportFailure(error, signal, context, timedOut);
  }
}

/**
 * The body, cancelled (and erroring with the abort reason) when `signal` aborts: the signal covers
 * the transfer, not only the headers. Not `pipeTo(..., { signal })`: its abort waits for the write
 * in flight, which never settles while nobody reads, so the transfer it should cancel stays open.
 */
function cancelledBy(body: ReadableStream<Uint8Array>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let onAbort = (): void => {};
  const stop = (): void => signal.removeEventListener('abort', onAbort);
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onAbort = () => {
          controller.error(signal.reason);
          reader.cancel(signal.reason).catch(() => {});
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (signal.aborted) return;
          if (done) {
            stop();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          stop();
          throw error;
        }
      },
      cancel(reason) {
        stop();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

function parsedOrText(bytes: Uint8Array): unknown {
  const text = new TextDecoder().decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
