import { connect, createServer, type Socket } from 'node:net';

/** A TCP proxy in front of a real server that can stall the way a network partition does. */
export interface StallingProxy {
  /** The target's URL with the proxy's host and port in it. */
  url: string;
  /**
   * From now on nothing gets through. Open connections become black holes for good: what either
   * side sends is dropped, as when a partition outlives their packets. New connections are held.
   */
  stall(): void;
  /** Held and new connections flow again; those stalled while open stay black holes. */
  heal(): void;
  /** Stops listening and destroys every connection. */
  stop(): Promise<void>;
}

/**
 * Starts a proxy on 127.0.0.1 to `targetUrl`'s host and port. Either side closing closes the other,
 * black hole or not, so a connection its client gives up on ends on the server too (a PostgreSQL
 * backend then rolls back what it had open).
 */
export async function startStallingProxy(targetUrl: string): Promise<StallingProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const blackHoles = new Set<() => void>();
  let held: Array<() => void> = [];
  let stalled = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const link = (client: Socket) => {
    if (client.destroyed) return;
    const upstream = connect(Number(target.port), target.hostname);
    track(upstream);
    let dropping = false;
    const blackHole = () => {
      dropping = true;
    };
    blackHoles.add(blackHole);
    client.on('data', (chunk: Buffer) => dropping || upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => dropping || client.write(chunk));
    client.on('close', () => {
      blackHoles.delete(blackHole);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
    client.resume();
  };
  const server = createServer((client) => {
    track(client);
    // Paused until linked: what it sends meanwhile waits in the socket, as in a stalled network.
    client.pause();
    if (stalled) held.push(() => link(client));
    else link(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    stall() {
      stalled = true;
      for (const blackHole of blackHoles) blackHole();
      blackHoles.clear();
    },
    heal() {
      stalled = false;
      const waiting = held;
      held = [];
      for (const start of waiting) start();
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
