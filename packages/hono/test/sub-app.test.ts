import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { MemoryIdempotencyStore, type WebhookContext } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import { Hono } from 'hono';
import { Hono as TinyHono } from 'hono/tiny';
import { afterEach, describe, expect, it } from 'vitest';
import { verikitApp } from '../src/index.js';

// The conformance suite mounts verikitApp into a default-preset host; this covers the other ways
// an app meets it: on hono/tiny, and served by itself (its own router, not the host's).
const SECRET = `whsec_${btoa('verikit-sub-app-test-key')}`;
const servers: Array<ReturnType<typeof serve>> = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((done) => server.close(() => done()))));
});

async function listen(fetch: (request: Request) => Response | Promise<Response>): Promise<string> {
  const server = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  servers.push(server);
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function subApp(events: WebhookContext[]) {
  return verikitApp({
    webhook: { secret: SECRET, store: new MemoryIdempotencyStore(), logger: false, onEvent: (ctx) => void events.push(ctx) },
  });
}

const deliver = (url: string, signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.updated', data: { refId: 'b-1' } } })) =>
  fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });

describe('verikitApp, however the app meets it', () => {
  it.each([
    ['mounted on hono/tiny', (sub: Hono) => new TinyHono().route('/verikit', sub), '/verikit'],
    ['mounted on the default preset', (sub: Hono) => new Hono().route('/verikit', sub), '/verikit'],
    ['served by itself', (sub: Hono) => sub, ''],
  ])('%s: POST /webhook is handled once, a repeat is 204 without a second run, and other paths are 404', async (_how, host, prefix) => {
    const events: WebhookContext[] = [];
    const url = await listen(host(subApp(events)).fetch);
    const signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.updated', data: { refId: 'b-1' } } });
    expect((await deliver(`${url}${prefix}/webhook`, signed)).status).toBe(204);
    expect((await deliver(`${url}${prefix}/webhook`, signed)).status).toBe(204);
    expect(events.map((ctx) => ctx.id)).toEqual([signed.id]);
    expect((await fetch(`${url}${prefix}/webhook`)).status).toBe(405);
    expect((await deliver(`${url}${prefix}/webhooks`)).status).toBe(404);
    expect((await deliver(`${url}${prefix}/invite/kyb`)).status).toBe(404);
  });

  it('served by itself, routes and middleware added to the sub-app work too', async () => {
    const sub = subApp([]);
    sub.get('/health', (c) => c.text('ok'));
    const seen: string[] = [];
    sub.use(async (c, next) => {
      seen.push(c.req.path);
      await next();
    });
    const url = await listen(sub.fetch);
    expect(await (await fetch(`${url}/health`)).text()).toBe('ok');
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    expect(seen).toEqual(['/elsewhere']);
  });
});
