import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient as createWebClient } from '../src/index.default.js';
import {
  AbortedError,
  ConnectionError,
  createClient,
  type DocumentDownload,
  type VerikitClient,
  type WriteOutcome,
} from '../src/index.node.js';
import { json, startServer, type TestServer } from './helpers/server.js';

const CHUNK = Buffer.alloc(64 * 1024, 7);
/** A whole file, read to the end. */
const SIZE = 8 * 1024 * 1024;
/** Far more than every buffer on the way holds: a transfer that stops early is still sending when it stops. */
const HUGE = 256 * 1024 * 1024;

/** One transfer as the storage server saw it: finished, or cut off before the end. */
interface Transfer {
  state: 'sending' | 'finished' | 'cut';
}

/** Storage that sends `size` bytes with backpressure, or `failAfter` bytes and then drops the connection. */
function storage(transfers: Transfer[], size: number, failAfter?: number) {
  return (_req: unknown, res: ServerResponse) => {
    const transfer: Transfer = { state: 'sending' };
    transfers.push(transfer);
    res.on('close', () => {
      transfer.state = res.writableFinished ? 'finished' : 'cut';
    });
    res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(size) });
    let sent = 0;
    const pump = (): void => {
      while (sent < size && !res.destroyed) {
        if (failAfter !== undefined && sent >= failAfter) {
          res.socket?.destroy();
          return;
        }
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };
}

/**
 * A server whose one route downloads the document and `writeTo`s its response, keeping each outcome;
 * given `gone`, it aborts it when the response closes, as a route that passes a signal does.
 */
async function relayServer(download: () => Promise<DocumentDownload>, gone?: AbortController) {
  const outcomes: Array<WriteOutcome | Error> = [];
  const server: Server = createServer((_req, res) => {
    res.once('close', () => gone?.abort());
    download()
      .then((d) => {
        res.writeHead(200, { 'content-type': d.contentType ?? 'application/octet-stream' });
        return d.writeTo(res);
      })
      .then(
        (outcome) => outcomes.push(outcome),
        (error: Error) => outcomes.push(error),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    outcomes,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// The Node build over undici and over fetch, and the Web build (no Node built-in, global fetch).
describe.each([
  ['Node build, undici', (baseUrl: string) => createClient({ apiKey: 'sk_test', baseUrl, maxRetries: 0 })],
  ['Node build, fetch', (baseUrl: string) => createClient({ apiKey: 'sk_test', baseUrl, maxRetries: 0, fetch: globalThis.fetch })],
  ['Web build', (baseUrl: string) => createWebClient({ apiKey: 'sk_test', baseUrl, maxRetries: 0 })],
] as const)('document downloads that stop early, %s', (_name, makeClient: (baseUrl: string) => VerikitClient) => {
  let server: TestServer;
  let client: VerikitClient;
  let transfers: Transfer[];
  let documents = 0;
  const file = () => ({ url: `/kyb/documents/doc_${++documents}/url` });

  beforeAll(async () => {
    server = await startServer();
    client = makeClient(server.url);
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  function serve(size = HUGE, failAfter?: number): void {
    transfers = [];
    server.handle(json(200, { url: `${server.url}/storage/doc?sig=1`, expiresIn: 300 }), storage(transfers, size, failAfter));
  }

  it("aborting the call's signal after the headers cancels the transfer and frees its connection", async () => {
    serve();
    const controller = new AbortController();
    const download = await client.kyb.downloadDocument(file(), { signal: controller.signal });
    const reader = download.body.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort(new Error('the visitor left'));
    await expect.poll(() => transfers[0]?.state, { timeout: 10_000 }).toBe('cut');
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return 'ended as if complete';
      })(),
    ).rejects.toThrow();
  });

  it('writeTo sends the whole file into a Node response with backpressure, and ends it', async () => {
    serve(SIZE);
    const relay = await relayServer(() => client.kyb.downloadDocument(file()));
    try {
      const answer = await request(relay.url);
      let received = 0;
      for await (const chunk of answer.body) received += (chunk as Buffer).length;
      expect(received).toBe(SIZE);
      await expect.poll(() => relay.outcomes.length).toBe(1);
      expect(relay.outcomes[0]).toEqual({ outcome: 'finished', bytes: SIZE });
      expect(transfers[0]?.state).toBe('finished');
    } finally {
      await relay.close();
    }
  });

  it.each([
    ['without a signal', false],
    ['with a signal aborted as it closes (the way a route passes one)', true],
  ])('writeTo %s: a destination that closes first (the visitor went away) cancels the transfer at once', async (_how, withSignal) => {
    serve();
    const gone = withSignal ? new AbortController() : undefined;
    const relay = await relayServer(() => client.kyb.downloadDocument(file(), gone ? { signal: gone.signal } : {}), gone);
    try {
      const answer = await request(relay.url);
      answer.body.on('error', () => {}).destroy(); // the headers, then the socket is gone
      await expect.poll(() => transfers[0]?.state, { timeout: 10_000 }).toBe('cut');
      await expect.poll(() => relay.outcomes.length).toBe(1);
      expect(relay.outcomes[0]).toMatchObject({ outcome: 'destination-closed' });
    } finally {
      await relay.close();
    }
  });

  it('writeTo: a transfer cut off upstream destroys the destination (no cut file looks complete) and rejects with ConnectionError', async () => {
    serve(HUGE, 1024 * 1024);
    const relay = await relayServer(() => client.kyb.downloadDocument(file()));
    try {
      const answer = await request(relay.url);
      await expect(
        (async () => {
          for await (const _chunk of answer.body);
        })(),
      ).rejects.toThrow();
      await expect.poll(() => relay.outcomes.length).toBe(1);
      expect(relay.outcomes[0]).toBeInstanceOf(ConnectionError);
    } finally {
      await relay.close();
    }
  });

  it("writeTo after the call's signal aborted midway rejects with AbortedError and cancels the transfer", async () => {
    serve();
    const controller = new AbortController();
    const relay = await relayServer(() => client.kyb.downloadDocument(file(), { signal: controller.signal }));
    try {
      const answer = await request(relay.url); // headers only: the rest waits on backpressure
      controller.abort();
      await expect.poll(() => relay.outcomes.length, { timeout: 10_000 }).toBe(1);
      expect(relay.outcomes[0]).toBeInstanceOf(AbortedError);
      await expect.poll(() => transfers[0]?.state, { timeout: 10_000 }).toBe('cut');
      await answer.body.dump().catch(() => {});
    } finally {
      await relay.close();
    }
  });
});
