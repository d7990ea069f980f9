import { connect, type Socket } from 'node:net';

/** What came back on a raw connection: the status line's code (if any answer came) and whether the server closed it. */
export interface RawOutcome {
  status: number | undefined;
  /** Bytes of body this side managed to write before the answer (or the close). */
  sent: number;
  closedByServer: boolean;
}

/** Opens a TCP connection to an `http://127.0.0.1:port` URL. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Sends a request head as written (so its framing can lie), then body chunks from `chunk` until the
 * server answers, closes, or `maxBytes` have been written. Honours backpressure, so a server that
 * stops reading stops the writing too.
 */
export async function rawExchange(
  url: string,
  head: string,
  body: { chunk: () => Buffer | undefined; maxBytes: number; settleMs?: number },
): Promise<RawOutcome> {
  const socket = await openSocket(url);
  let answer = '';
  let closedByServer = false;
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (answer.includes('\r\n')) resolve();
    });
    socket.on('close', () => {
      closedByServer = true;
      resolve();
    });
    socket.on('error', () => resolve());
  });
  let done = false;
  void answered.then(() => {
    done = true;
  });
  socket.write(head);
  let sent = 0;
  while (!done && sent < body.maxBytes) {
    const next = body.chunk();
    if (next === undefined) break;
    sent += next.length;
    const flushed = socket.write(next);
    if (!flushed) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), answered]);
  }
  await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, body.settleMs ?? 10_000))]);
  const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
  socket.destroy();
  return { status: status === undefined ? undefined : Number(status), sent, closedByServer };
}
