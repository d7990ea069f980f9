import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import {
  type BufferedResponse,
  type StreamingResponse,
  type Transport,
  type TransportRequest,
  TransportTimeout,
  TransportTooLarge,
  withTimeoutSignal,
} from './transport.js';
import { createFetchTransport } from './transport-fetch.js';

/**
 * An undici dispatcher (`Agent`, `ProxyAgent`, `Pool`, ...), typed by the members verikit calls so
 * that its types never require undici, an optional peer.
 */
export interface DispatcherLike {
  dispatch(options: never, handler: never): boolean;
  request(options: never): Promise<unknown>;
  close(): Promise<void>;
}

/** Pool settings for the client's own undici Agent. */
export interface UndiciTransportOptions {
  /** An undici dispatcher of the integrator's (a ProxyAgent, say); verikit will not close it. */
  dispatcher?: DispatcherLike;
  /** Sockets per origin (default 32). */
  connections?: number;
  /** Idle keep-alive lifetime in ms (default 10 s, under common server idle timeouts). */
  keepAliveTimeoutMs?: number;
}

type Headers = Record<string, string | string[] | undefined>;
const headerOf = (headers: Headers) => (name: string) => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/**
 * Buffered exchange through `dispatch` with a handler of our own: the timeout and the caller's
 * abort go through undici's controller, because handing undici an AbortSignal per request
 * costs about a third of the client's throughput (measured with bench/client.mjs). A class, not
 * closures: one object per request instead of a closure for each callback and helper.
 */
class BufferedHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private failure: unknown;
  private status = 0;
  private headers: Headers = {};
  private size = 0;
  private readonly chunks: Buffer[] = [];
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly onAbort: (() => void) | undefined;

  constructor(
    private readonly request: TransportRequest,
    private readonly resolve: (response: BufferedResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.timer = setTimeout(() => this.fail(new TransportTimeout()), request.timeoutMs);
    const { signal } = request;
    if (signal !== undefined) {
      this.onAbort = () => this.fail(signal.reason ?? new Error('aborted'));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.failure !== undefined) controller.abort(this.failure instanceof Error ? this.failure : new Error('aborted'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Headers): void {
    this.status = statusCode;
    this.headers = headers;
    if (Number(headerOf(headers)('content-length')) > this.request.maxResponseBytes)
      this.fail(new TransportTooLarge(this.request.maxResponseBytes));
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    // Counted as it arrives, so an endless answer stops at the cap rather than filling memory.
    this.size += chunk.length;
    if (this.size > this.request.maxResponseBytes) this.fail(new TransportTooLarge(this.request.maxResponseBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.failure !== undefined) return;
    this.cleanup();
    const { chunks } = this;
    // One chunk (the common small answer) is decoded where it lies, without a copy.
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    this.resolve({ status: this.status, header: headerOf(this.headers), text: body.toString('utf8') });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.cleanup();
    this.controller?.abort(error instanceof Error ? error : new Error(String(error)));
    this.reject(error);
  }

  private cleanup(): void {
    clearTimeout(this.timer);
    if (this.onAbort !== undefined) this.request.signal?.removeEventListener('abort', this.onAbort);
  }
}

function dispatchBuffered(dispatcher: Dispatcher, request: TransportRequest): Promise<BufferedResponse> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(
      { origin: request.origin, path: request.path, method: request.method, headers: request.headers, body: request.body },
      new BufferedHandler(request, resolve, reject),
    );
  });
}

/** What verikit takes from the undici module. */
export interface UndiciModule {
  Agent: new (options: { connections: number; keepAliveTimeout: number; keepAliveMaxTimeout: number }) => DispatcherLike;
}

// A variable specifier, so bundlers leave undici (an optional peer) to the runtime.
const UNDICI_MODULE = 'undici';
let undiciLoad: Promise<UndiciModule | null> | undefined;

/**
 * undici when this runtime can load a working one, else null: not installed, Bun's stub (an Agent
 * without `dispatch`), an import that throws, or Deno, whose undici reads env variables on the
 * first request (refused without --allow-env). Loaded once.
 */
export function loadUndici(): Promise<UndiciModule | null> {
  if ((globalThis as { Deno?: unknown }).Deno !== undefined) return Promise.resolve(null);
  undiciLoad ??= import(/* webpackIgnore: true */ /* @vite-ignore */ UNDICI_MODULE).then(
    (module: { Agent?: unknown; default?: { Agent?: unknown } }) => {
      const Agent = module.Agent ?? module.default?.Agent;
      return typeof Agent === 'function' && typeof Agent.prototype?.dispatch === 'function' ? ({ Agent } as UndiciModule) : null;
    },
    () => null,
  );
  return undiciLoad;
}

/**
 * A Node body as a web stream, read as its reader asks. Not `Readable.toWeb`: on Node 20, cancelling
 * that stream with bytes already buffered threw "Controller is already closed" as an uncaught
 * exception, which ended the process of anyone who cancelled a document download unread.
 */
function webStreamOf(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value as Uint8Array);
      },
      // Ends the iteration, which destroys the body: the rest of the file is never read.
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Transport over one undici dispatcher (closed with the client only when `owned`). */
export function createUndiciTransport(dispatcher: DispatcherLike, owned: boolean): Transport {
  const undici = dispatcher as unknown as Dispatcher;
  return {
    request: (request) => dispatchBuffered(undici, request),
    async open(request): Promise<StreamingResponse> {
      const { statusCode, headers, body } = await withTimeoutSignal(request, (signal) =>
        undici.request({ origin: request.origin, path: request.path, method: request.method, headers: request.headers, signal }),
      );
      return { status: statusCode, header: headerOf(headers), body: webStreamOf(body) };
    },
    async close() {
      if (owned) await undici.close();
    },
  };
}

/**
 * The Node build's transport: your dispatcher if given; else one keep-alive undici Agent per client
 * where undici loads; else the runtime's own `fetch` (Node's is undici inside, without pool settings).
 */
export function createNodeTransport(
  options: UndiciTransportOptions = {},
  load: () => Promise<UndiciModule | null> = loadUndici,
): Transport {
  if (options.dispatcher !== undefined) return createUndiciTransport(options.dispatcher, false);
  let chosen: Transport | undefined;
  let ready: Promise<Transport> | undefined;
  // At the first request, not with the client: a process that builds a client but never calls it
  // (a webhook route kept for `ctx.fetchResult()`, say) does not load undici at start.
  const choose = (): Promise<Transport> =>
    (ready ??= load().then((undici) => {
      chosen =
        undici === null
          ? createFetchTransport()
          : createUndiciTransport(
              new undici.Agent({
                connections: options.connections ?? 32,
                keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
                keepAliveMaxTimeout: 60_000,
              }),
              true,
            );
      return chosen;
    }));
  // Once chosen, calls go straight through: no promise per request for the choice.
  return {
    request: (request) => (chosen ? chosen.request(request) : choose().then((t) => t.request(request))),
    open: (request) => (chosen ? chosen.open(request) : choose().then((t) => t.open(request))),
    close: async () => {
      if (ready !== undefined) await (await ready).close();
    },
  };
}
