import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransportRequest } from '../src/client/transport.js';
import { createNodeTransport, loadUndici } from '../src/client/transport-undici.js';
import { json, startServer, type TestServer } from './helpers/server.js';

describe('the Node build transport', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    server.handle(json(200, { ok: true }));
  });
  afterAll(() => server.close());

  const get = (): TransportRequest => {
    const url = new URL(server.url);
    return {
      method: 'GET',
      origin: url.origin,
      path: '/thing',
      headers: { accept: 'application/json' },
      timeoutMs: 5_000,
      maxResponseBytes: 1_000,
    };
  };

  it('loads undici where it is installed (here, a dev dependency)', async () => {
    expect(typeof (await loadUndici())?.Agent).toBe('function');
  });

  it.each([
    ['undici loads', loadUndici],
    ['undici is missing, a stub or refused (fetch)', async () => null],
  ])('answers the same when %s', async (_case, load) => {
    const transport = createNodeTransport({}, load);
    const first = await transport.request(get());
    const second = await transport.request(get());
    expect([first.status, JSON.parse(first.text), second.status]).toEqual([200, { ok: true }, 200]);
    await transport.close();
  });

  it('loads undici at the first request, not with the client, and closes without loading it when never used', async () => {
    let loads = 0;
    const counted = () => {
      loads++;
      return loadUndici();
    };
    const unused = createNodeTransport({}, counted);
    await unused.close();
    const used = createNodeTransport({}, counted);
    expect(loads).toBe(0);
    const [first, second] = await Promise.all([used.request(get()), used.request(get())]);
    expect([first.status, second.status, loads]).toEqual([200, 200, 1]);
    await used.close();
  });

  it("uses the integrator's dispatcher without loading undici, and does not close it", async () => {
    const dispatcher = new Agent();
    const transport = createNodeTransport({ dispatcher }, () => {
      throw new Error('must not load undici for a given dispatcher');
    });
    expect((await transport.request(get())).status).toBe(200);
    await transport.close();
    expect(dispatcher.closed).toBe(false);
    await dispatcher.close();
  });
});
