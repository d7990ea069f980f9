import type { Deadlines } from './deadlines.js';

/**
 * A Node-style readable (Node's `IncomingMessage`, Fastify's payload), typed by the few members
 * read here, so this module needs no Node built-in and loads on every runtime.
 */
export interface NodeReadableLike {
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  removeListener(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  pause(): unknown;
  readonly readableEnded?: boolean;
  readonly destroyed?: boolean;
  /** Node's `IncomingMessage`: the whole body has arrived (it may still be unread). */
  readonly complete?: boolean;
  /** Node's streams: true once data flows to 'data' listeners, false once paused. */
  readonly readableFlowing?: boolean | null;
}

/** A raw request body still to be read: a Web stream (Hono, Workers) or a Node stream (Express, Fastify). */
export type BodyStream = ReadableStream<Uint8Array> | NodeReadableLike;

/** Reads one kind of body stream within the limits: {@link readWebBody}, or `readNodeBody` for a Node readable. */
export type BodyReader<S> = (stream: S, limits: BodyLimits) => Promise<BodyRead>;

/** Limits for reading a body. */
export interface BodyLimits {
  /** Stop and refuse once more than this many bytes have arrived, whatever Content-Length said. */
  maxBytes: number;
  /** Stop and refuse when the whole body has not arrived within this many ms. */
  timeoutMs: number;
  /** Where the deadline is kept: the route's (the platform's kind), else a timer of the read's own. */
  deadlines?: Deadlines;
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

/** Whether a body stream is a Web stream (else a Node-style readable). */
export const isWebStream = (source: BodyStream): source is ReadableStream<Uint8Array> =>
  typeof (source as ReadableStream<Uint8Array>).getReader === 'function';

/** Collects chunks up to a byte limit; the bytes are joined once, at the end. */
export class Collector {
  readonly #chunks: Uint8Array[] = [];
  readonly #maxBytes: number;
  #size = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Adds a chunk; false once the limit is passed (the chunk is not kept). */
  add(chunk: Uint8Array): boolean {
    this.#size += chunk.byteLength;
    if (this.#size > this.#maxBytes) return false;
    this.#chunks.push(chunk);
    return true;
  }

  bytes(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0] as Uint8Array;
    const out = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }
}

/**
 * Reads a body from a Web stream (a request's, a fetch response's), counting bytes as they arrive
 * and stopping at `maxBytes` or `timeoutMs`, so a chunked or slow body can neither fill memory nor
 * hold a connection. The deadline timer is armed inside the request, where every runtime lets it fire.
 */
export async function readWebBody(stream: ReadableStream<Uint8Array> | null | undefined, limits: BodyLimits): Promise<BodyRead> {
  if (stream === null || stream === undefined) return { kind: 'ok', bytes: new Uint8Array(0) };
  if (stream.locked) return { kind: 'consumed' };
  const reader = stream.getReader();
  const collector = new Collector(limits.maxBytes);
  let timedOut = false;
  const deadline = armDeadline(limits, () => {
    timedOut = true;
    reader.cancel().catch(() => {});
  });
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
    deadline.cancel();
  }
}

/** Arms the read's deadline on the route's deadlines when given, else on a timer of its own. */
export function armDeadline(limits: BodyLimits, onExpire: () => void): { cancel(): void } {
  if (limits.deadlines !== undefined) return limits.deadlines.arm(onExpire);
  const timer = setTimeout(onExpire, limits.timeoutMs);
  return { cancel: () => clearTimeout(timer) };
}
