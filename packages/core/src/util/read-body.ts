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
}

/** A raw request body still to be read: a Web stream (Hono, Workers) or a Node stream (Express, Fastify). */
export type BodyStream = ReadableStream<Uint8Array> | NodeReadableLike;

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

function readNodeStream(stream: NodeReadableLike, limits: BodyLimits): Promise<BodyRead> {
  if (stream.readableEnded || stream.destroyed) return Promise.resolve({ kind: 'consumed' });
  return new Promise((resolve) => {
    const collector = new Collector(limits.maxBytes);
    let settled = false;
    const finish = (read: BodyRead): void => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      // A stream that ended emits nothing more, so its listeners are left to go with it. One cut
      // short is paused, not destroyed: the answer (413, 408) must still reach the sender.
      if (read.kind !== 'ok') {
        stream.removeListener('data', onData);
        stream.pause();
      }
      resolve(read);
    };
    const onData = (chunk: Uint8Array): void => {
      if (!collector.add(chunk)) finish({ kind: 'too-large' });
    };
    const onFailure = (): void => finish({ kind: 'failed' });
    const deadline = armDeadline(limits, () => finish({ kind: 'timeout' }));
    stream.on('data', onData);
    stream.on('end', () => finish({ kind: 'ok', bytes: collector.bytes() }));
    stream.on('error', onFailure);
    stream.on('close', onFailure);
  });
}

/** Arms the read's deadline on the route's deadlines when given, else on a timer of its own. */
function armDeadline(limits: BodyLimits, onExpire: () => void): { cancel(): void } {
  if (limits.deadlines !== undefined) return limits.deadlines.arm(onExpire);
  const timer = setTimeout(onExpire, limits.timeoutMs);
  return { cancel: () => clearTimeout(timer) };
}
