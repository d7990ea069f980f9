/**
 * A Node-style readable (Node's `IncomingMessage`, Fastify's payload), typed by the few members
 * read here, so this module needs no Node built-in and loads on every runtime.
 */
export interface NodeReadableLike {
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  pause(): unknown;
  readonly readableEnded?: boolean;
  readonly destroyed?: boolean;
}

/** A raw request body still to be read: a Web stream (Hono, Workers) or a Node stream (Express, Fastify). */
export type BodyStream = ReadableStream<Uint8Array> | NodeReadableLike;

/** Limits for reading a webhook body. */
export interface BodyLimits {
  /** Stop and refuse once more than this many bytes have arrived, whatever Content-Length said. */
  maxBytes: number;
  /** Stop and refuse when the whole body has not arrived within this many ms. */
  timeoutMs: number;
}

/** How reading a body ended; anything but `ok` means the bytes are not usable. */
export type BodyRead =
  | { kind: 'ok'; bytes: Uint8Array }
  | { kind: 'too-large' }
  | { kind: 'timeout' }
  /** Another reader (a host body parser) got to the stream first. */
  | { kind: 'consumed' }
  /** The stream failed (the sender went away). */
  | { kind: 'failed' };

const isWebStream = (source: BodyStream): source is ReadableStream<Uint8Array> =>
  typeof (source as ReadableStream<Uint8Array>).getReader === 'function';

/** Collects chunks up to a byte limit; the bytes are joined once, at the end. */
class Collector {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  /** Adds a chunk; false once the limit is passed (the chunk is not kept). */
  add(chunk: Uint8Array): boolean {
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) return false;
    this.chunks.push(chunk);
    return true;
  }

  bytes(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0] as Uint8Array;
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }
}

/**
 * Reads a request body, counting bytes as they arrive and stopping at `maxBytes` or `timeoutMs`,
 * so a chunked or slow body can neither fill memory nor hold a connection. The deadline timer is
 * armed inside the request, where every runtime lets it fire.
 */
export function readBody(source: BodyStream | null | undefined, limits: BodyLimits): Promise<BodyRead> {
  if (source === null || source === undefined) return Promise.resolve({ kind: 'ok', bytes: new Uint8Array(0) });
  return isWebStream(source) ? readWebStream(source, limits) : readNodeStream(source, limits);
}

async function readWebStream(stream: ReadableStream<Uint8Array>, limits: BodyLimits): Promise<BodyRead> {
  if (stream.locked) return { kind: 'consumed' };
  const reader = stream.getReader();
  const collector = new Collector(limits.maxBytes);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    reader.cancel().catch(() => {});
  }, limits.timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return timedOut ? { kind: 'timeout' } : { kind: 'ok', bytes: collector.bytes() };
      if (!collector.add(value)) {
        reader.cancel().catch(() => {});
        return { kind: 'too-large' };
      }
    }
  } catch {
    return timedOut ? { kind: 'timeout' } : { kind: 'failed' };
  } finally {
    clearTimeout(timer);
  }
}

function readNodeStream(stream: NodeReadableLike, limits: BodyLimits): Promise<BodyRead> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve({ kind: 'consumed' });
  return new Promise((resolve) => {
    const collector = new Collector(limits.maxBytes);
    const finish = (read: BodyRead): void => {
      clearTimeout(timer);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
      // Paused, not destroyed: the answer (413, 408) must still reach the sender before the socket closes.
      if (read.kind !== 'ok') stream.pause();
      resolve(read);
    };
    const onData = (chunk: Uint8Array): void => {
      if (!collector.add(chunk)) finish({ kind: 'too-large' });
    };
    const onEnd = (): void => finish({ kind: 'ok', bytes: collector.bytes() });
    const onError = (): void => finish({ kind: 'failed' });
    const onClose = (): void => finish({ kind: 'failed' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), limits.timeoutMs);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}
