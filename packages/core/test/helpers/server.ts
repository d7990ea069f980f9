import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as it arrived on the wire. */
export interface Recorded {
  method: string;
  /** The raw request target, exactly as sent (no decoding). */
  rawPath: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, recorded: Recorded) => void;

/** A real HTTP server on 127.0.0.1 whose behaviour each test scripts, recording every request. */
export interface TestServer {
  url: string;
  requests: Recorded[];
  /** Handler for the next requests; the last one given keeps answering. */
  handle(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const requests: Recorded[] = [];
  let queue: Handler[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: Recorded = {
        method: req.method ?? '',
        rawPath: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const handler = queue.length > 1 ? queue.shift() : queue[0];
      if (handler === undefined) {
        res.writeHead(500).end('no handler');
        return;
      }
      handler(req, res, recorded);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (...handlers) => {
      queue = handlers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers JSON with the given status and extra headers. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** Never answers (the socket stays open until the server closes). */
export const hang: Handler = () => {};

/** Destroys the connection without an answer. */
export const reset: Handler = (req) => {
  req.socket.destroy();
};
