import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { unreadNodeRequest } from '../src/index.node.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Serves one POST, runs `touch` on its IncomingMessage, and says whether unreadNodeRequest then answers that request. */
async function foundAfter(touch: (req: IncomingMessage) => void): Promise<boolean> {
  let found = false;
  const server = createServer((req, res) => {
    touch(req);
    found = unreadNodeRequest(req) === req;
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  close = () => new Promise((done) => server.close(() => done()));
  const { port } = server.address() as AddressInfo;
  const answer = await request(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{"a":1}' });
  await answer.body.dump();
  return found;
}

describe('unreadNodeRequest', () => {
  it('answers a Node request whose body nobody has started reading', async () => {
    expect(await foundAfter(() => {})).toBe(true);
  });

  it('answers undefined once something reads the body (a data listener, a web stream over it)', async () => {
    expect(await foundAfter((req) => req.on('data', () => {}))).toBe(false);
    expect(await foundAfter((req) => req.resume())).toBe(false);
    expect(await foundAfter((req) => Readable.toWeb(req))).toBe(false);
  });

  it('answers undefined for what is not a Node request (a Workers env binding, nothing)', () => {
    expect(unreadNodeRequest(undefined)).toBeUndefined();
    expect(unreadNodeRequest({ get: () => null, put: () => null })).toBeUndefined();
    expect(unreadNodeRequest('incoming')).toBeUndefined();
  });
});
