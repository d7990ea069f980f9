import type { AddressInfo } from 'node:net';
import { MemoryIdempotencyStore } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import express from 'express';
import { request } from 'undici';
import { afterAll, expect, it } from 'vitest';
import { verikitRouter } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const servers: Array<{ close(cb: () => void): void }> = [];
afterAll(() => Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))));

/** A host with a global express.json() that keeps the raw bytes, with or without the README's limit. */
async function host(jsonOptions: Parameters<typeof express.json>[0]) {
  const handled: string[] = [];
  const app = express();
  app.use(express.json({ ...jsonOptions, verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }));
  app.use(
    '/verikit',
    verikitRouter({ webhook: { secret: SECRET, store: new MemoryIdempotencyStore(), onEvent: (ctx) => void handled.push(ctx.id) } }),
  );
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/verikit/webhook`, handled };
}

it("the README's verify fix needs the limit: a signed 300 KiB delivery passes with limit '1mb', and the host's 100 kB default refuses it", async () => {
  const signed = signWebhook({
    secret: SECRET,
    payload: { type: 'kyb.case.status_changed', data: { refId: 'b', pad: 'x'.repeat(300 * 1024) } },
  });
  const withLimit = await host({ limit: '1mb' });
  const accepted = await request(withLimit.url, { method: 'POST', headers: signed.headers, body: signed.body });
  await accepted.body.dump();
  expect(accepted.statusCode).toBe(204);
  expect(withLimit.handled).toEqual([signed.id]);

  const withoutLimit = await host({});
  const refused = await request(withoutLimit.url, { method: 'POST', headers: signed.headers, body: signed.body });
  await refused.body.dump();
  expect(refused.statusCode).toBe(413);
  expect(withoutLimit.handled).toEqual([]);
});
