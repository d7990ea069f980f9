import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import {
  createClient,
  type KybParty,
  MemoryIdempotencyStore,
  type VerikitClient,
  type VerikitRoutesOptions,
  type WebhookContext,
} from '@verikit/core';
import { createFakeService, type FakeService, signWebhook } from '@verikit/testing';
import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, rawExchange } from './raw-http.js';

/**
 * How the host app treats bodies before verikit sees them: not at all; a global JSON parser; one
 * that keeps the raw bytes (the README's fix); a form parser beside that; or a middleware that
 * reads the raw request stream itself and keeps nothing.
 */
export type HostParser = 'none' | 'global' | 'global-keeping-raw' | 'global-form' | 'raw-reader';

/** A host app running on 127.0.0.1 with verikit mounted at `/verikit` and a JSON echo route at `/api/echo`. */
export interface RunningApp {
  url: string;
  close(): Promise<void>;
}

/** What each adapter's test file provides: how to read a header, and how to start its server. */
export interface AdapterUnderTest<Req> {
  name: string;
  header(request: Req, name: string): string | undefined;
  start(options: VerikitRoutesOptions<Req>, host: { parser: HostParser }): Promise<RunningApp>;
  /** Mounts two route sets, `first` under `/one` and `second` under `/two` (two endpoints, two secrets). */
  startTwo(first: VerikitRoutesOptions<Req>, second: VerikitRoutesOptions<Req>): Promise<RunningApp>;
  /** Whether a global parser without kept raw bytes leaves the route unable to verify (then: 500 naming the fix). */
  globalParserLosesRawBody: boolean;
}

const MAX_BODY = 64 * 1024;
const BODY_TIMEOUT_MS = 400;
const PRIVATE_HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };
const otherSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The status an answer on a raw socket gave (if any), and whether the server closed the connection. */
function watchSocket(socket: Socket, ms: number): Promise<{ status: number | undefined; closed: boolean }> {
  return new Promise((resolve) => {
    let data = '';
    const status = () => {
      const code = /^HTTP\/1\.1 (\d{3})/.exec(data)?.[1];
      return code === undefined ? undefined : Number(code);
    };
    const timer = setTimeout(() => resolve({ status: status(), closed: false }), ms);
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ status: status(), closed: true });
    });
  });
}

/** The one conformance suite every adapter passes, test for test. */
export function conformanceSuite<Req>(adapter: AdapterUnderTest<Req>): void {
  describe(`${adapter.name} adapter conformance`, () => {
    let fake: FakeService;
    let client: VerikitClient;
    let secret: string;
    const apps: RunningApp[] = [];

    beforeAll(async () => {
      fake = await createFakeService({ webhooks: { retrySchedule: [0, 20, 50, 100, 200, 400] } });
      secret = fake.credentials.webhookSecret;
      client = createClient({ ...fake.clientOptions, maxRetries: 0 });
    });
    afterAll(async () => {
      await Promise.all(apps.map((a) => a.close()));
      await client.close();
      await fake.close();
    });

    async function start(setup: { parser?: HostParser; onEvent?: (ctx: WebhookContext) => unknown } = {}) {
      const events: WebhookContext[] = [];
      const party = (req: Req): KybParty | null => {
        const user = adapter.header(req, 'x-test-user');
        return user ? { refId: user } : null;
      };
      const app = await adapter.start(
        {
          client,
          webhook: {
            secret,
            store: new MemoryIdempotencyStore(),
            maxBodyBytes: MAX_BODY,
            bodyTimeoutMs: BODY_TIMEOUT_MS,
            // onEvent fails on purpose in several cases (hundreds of property runs): the assertions say what matters.
            logger: false,
            onEvent: async (ctx) => {
              await setup.onEvent?.(ctx);
              events.push(ctx);
            },
          },
          invite: {
            kyb: { resolveBusiness: party },
            kyc: { resolveUser: party },
            errorPage: ({ status, code, message }) => `<main data-status="${status}" data-code="${code}">${message}</main>`,
          },
        },
        { parser: setup.parser ?? 'none' },
      );
      apps.push(app);
      const post = async (path: string, body: string | Buffer, headers: Record<string, string> = {}) => {
        const response = await request(`${app.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
        return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
      };
      const deliver = (payload: string, options: { id?: string; timestamp?: number; secret?: string } = {}) => {
        const signed = signWebhook({ secret: options.secret ?? secret, payload, id: options.id, timestamp: options.timestamp });
        return {
          signed,
          send: (changes: { body?: string; headers?: Record<string, string | undefined> } = {}) => {
            const headers = Object.fromEntries(
              Object.entries({ ...signed.headers, ...changes.headers }).filter(([, v]) => v !== undefined),
            ) as Record<string, string>;
            return post('/verikit/webhook', changes.body ?? signed.body, headers);
          },
        };
      };
      return { app, events, post, deliver };
    }

    const EVENT = '{ "type": "kyb.case.status_changed",\n  "data": { "refId": "Zoë\\/商店", "note": "https:\\/\\/x.test\\/a" } }\n';

    it('a valid delivery -> 204 and onEvent once', async () => {
      const { deliver, events } = await start();
      const response = await deliver(EVENT).send();
      expect(response.status).toBe(204);
      expect(events).toHaveLength(1);
      expect(events[0]!.event).toEqual(JSON.parse(EVENT));
    });

    it('a repeat -> 204 without a second call', async () => {
      const { deliver, events } = await start();
      const d = deliver(EVENT);
      expect((await d.send()).status).toBe(204);
      expect((await d.send()).status).toBe(204);
      expect(events).toHaveLength(1);
    });

    it('a tampered byte -> 400', async () => {
      const { deliver, events } = await start();
      const response = await deliver(EVENT).send({ body: EVENT.replace('商店', '商家') });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toEqual({ error: 'invalid_signature', reason: 'no_matching_signature' });
      expect(events).toHaveLength(0);
    });

    it('the wrong secret -> 400', async () => {
      const { deliver } = await start();
      expect((await deliver(EVENT, { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl' }).send()).status).toBe(400);
    });

    it('old and future timestamps -> 400', async () => {
      const { deliver } = await start();
      const now = Math.floor(Date.now() / 1000);
      expect((await deliver(EVENT, { timestamp: now - 600 }).send()).status).toBe(400);
      expect((await deliver(EVENT, { timestamp: now + 600 }).send()).status).toBe(400);
    });

    it.each(['svix-id', 'svix-timestamp', 'svix-signature'])('a missing %s -> 400', async (name) => {
      const { deliver, events } = await start();
      expect((await deliver(EVENT).send({ headers: { [name]: undefined } })).status).toBe(400);
      expect(events).toHaveLength(0);
    });

    it('an oversized body -> 413', async () => {
      const { deliver } = await start();
      const big = JSON.stringify({ pad: 'x'.repeat(MAX_BODY + 10) });
      const response = await deliver(big).send();
      expect(response.status).toBe(413);
      expect(JSON.parse(response.text).error).toBe('payload_too_large');
    });

    it('a signed body that is not JSON -> 400', async () => {
      const { deliver } = await start();
      const response = await deliver('definitely not json').send({ headers: { 'content-type': 'text/plain' } });
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text).error).toBe('invalid_json');
    });

    it('GET -> 405', async () => {
      const { app } = await start();
      const response = await request(`${app.url}/verikit/webhook`);
      expect(response.statusCode).toBe(405);
      await response.body.dump();
    });

    it("onEvent failing -> 5xx, then the fake service's retry succeeds", async () => {
      let failures = 1;
      const { app, events } = await start({
        onEvent: () => {
          if (failures-- > 0) throw new Error('first attempt fails');
        },
      });
      const endpoint = `${app.url}/verikit/webhook`;
      fake.webhooks.addEndpoint(endpoint);
      try {
        const refId = `retry-${adapter.name}`;
        await client.kyb.createCase({ refId });
        fake.kyb.setStatus(refId, 'IN_REVIEW');
        await fake.webhooks.settle();
        expect(fake.webhooks.attempts.filter((a) => a.endpoint === endpoint).map((a) => a.status)).toEqual([500, 204]);
        expect(events).toHaveLength(1);
      } finally {
        fake.webhooks.removeEndpoint(endpoint);
      }
    });

    it('concurrent duplicates -> one onEvent call', async () => {
      const { deliver, events } = await start({ onEvent: () => new Promise((resolve) => setTimeout(resolve, 30)) });
      const d = deliver(EVENT);
      const statuses = (await Promise.all([d.send(), d.send(), d.send()])).map((r) => r.status);
      expect(statuses.filter((s) => s === 204).length).toBeGreaterThanOrEqual(1);
      expect(statuses.every((s) => s === 204 || s === 409)).toBe(true);
      expect(events).toHaveLength(1);
    });

    it('a global JSON parser that keeps the raw bytes -> still verified', async () => {
      const { deliver, events } = await start({ parser: 'global-keeping-raw' });
      expect((await deliver(EVENT).send()).status).toBe(204);
      expect(events).toHaveLength(1);
    });

    it('a global JSON parser that drops the raw bytes -> still verified, or a 500 that names the fix', async () => {
      const { deliver, events } = await start({ parser: 'global' });
      const response = await deliver(EVENT).send();
      if (adapter.globalParserLosesRawBody) {
        expect(response.status).toBe(500);
        expect(JSON.parse(response.text)).toMatchObject({
          error: 'raw_body_unavailable',
          message: expect.stringMatching(/before express\.json\(\).*limit/),
        });
        expect(events).toHaveLength(0);
      } else {
        expect(response.status).toBe(204);
        expect(events).toHaveLength(1);
      }
    });

    it("the host app's other JSON routes keep working", async () => {
      for (const parser of ['none', 'global', 'global-keeping-raw'] as const) {
        const { post } = await start({ parser });
        const response = await post('/api/echo', JSON.stringify({ hello: 'world', n: 1 }));
        expect(response.status).toBe(200);
        expect(JSON.parse(response.text)).toEqual({ echoed: { hello: 'world', n: 1 } });
      }
    });

    it('invite routes -> 401 without a signed-in party', async () => {
      const { post } = await start();
      for (const path of ['/verikit/invite/kyb', '/verikit/invite/kyc']) {
        const response = await post(path, '');
        expect(response.status).toBe(401);
        expect(response.headers['cache-control']).toBe('no-store');
      }
    });

    it('a browser whose invite fails gets the error page, with the status and headers; an API caller keeps JSON', async () => {
      const { post } = await start();
      const browser = await post('/verikit/invite/kyb', '', {
        accept: 'text/html,application/xhtml+xml',
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(browser.status).toBe(401);
      expect(browser.headers['content-type']).toMatch(/^text\/html/);
      expect(browser.headers['cache-control']).toBe('no-store');
      expect(browser.text).toBe('<main data-status="401" data-code="unauthorized">Sign in to start a verification.</main>');
      const api = await post('/verikit/invite/kyb', '');
      expect(api.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(api.text)).toMatchObject({ error: 'unauthorized' });
    });

    it('the KYB invite gives a working hosted link that leads to a completed case', async () => {
      const { post } = await start();
      const refId = `invite-${adapter.name}`;
      const response = await post('/verikit/invite/kyb', '', { 'x-test-user': refId });
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      const { url, expiresAt } = JSON.parse(response.text) as { url: string; expiresAt: string };
      expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
      const page = await request(url);
      expect(page.statusCode).toBe(200);
      expect(await page.body.text()).toContain('data-decision="approve"');
      const link = new URL(url);
      const form = new URLSearchParams({ decision: 'approve' });
      for (const key of ['authToken', 'publicKey', 'environment']) form.set(key, link.searchParams.get(key)!);
      const decided = await request(`${fake.webUrl}/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(decided.statusCode).toBe(303);
      await decided.body.dump();
      expect((await client.kyb.getCase(refId)).status).toBe('COMPLETED');
    });

    it('the KYC invite answers JSON to API callers and a 303 to a browser form', async () => {
      const { post } = await start();
      const json = await post('/verikit/invite/kyc', '', { 'x-test-user': `person-${adapter.name}` });
      expect(json.status).toBe(200);
      expect(JSON.parse(json.text).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hosted\/\?authToken=/);
      const browser = await post('/verikit/invite/kyc', '', {
        'x-test-user': `person-${adapter.name}`,
        accept: 'text/html,application/xhtml+xml',
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(browser.status).toBe(303);
      expect(browser.headers.location).toMatch(/\/hosted\/\?authToken=/);
      expect(browser.headers['cache-control']).toBe('no-store');
    });

    const webhookHead = (framing: string) =>
      `POST /verikit/webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nsvix-id: msg_raw\r\nsvix-timestamp: ${Math.floor(Date.now() / 1000)}\r\nsvix-signature: v1,AAAA\r\n${framing}\r\n`;

    it('a chunked body over the limit -> 413 long before the sender is done', async () => {
      const { app, events } = await start();
      const piece = Buffer.alloc(64 * 1024, 'a');
      const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
      const outcome = await rawExchange(app.url, webhookHead('Transfer-Encoding: chunked\r\n'), {
        chunk: () => chunk,
        maxBytes: 256 * 1024 * 1024,
      });
      expect(outcome.status).toBe(413);
      // A server that buffered everything would have taken all 256 MiB before answering.
      expect(outcome.sent).toBeLessThan(64 * 1024 * 1024);
      expect(events).toHaveLength(0);
    });

    it('a Content-Length that lies low -> a 4xx for the bytes it declared, and the server carries on', async () => {
      const { app, deliver } = await start();
      const junk = Buffer.alloc(1024 * 1024, 'x');
      const pieces = [junk];
      const outcome = await rawExchange(app.url, webhookHead('Content-Length: 64\r\n'), {
        chunk: () => pieces.shift(),
        maxBytes: junk.length,
      });
      expect(outcome.status).toBeGreaterThanOrEqual(400);
      expect(outcome.status).toBeLessThan(500);
      expect((await deliver(EVENT).send()).status).toBe(204);
    });

    it('slow senders get 408 at the body deadline and their connections are closed', async () => {
      const { app, deliver } = await start();
      const sockets = await Promise.all(Array.from({ length: 24 }, () => openSocket(app.url)));
      const outcomes = sockets.map((socket) => watchSocket(socket, BODY_TIMEOUT_MS * 10));
      for (const [i, socket] of sockets.entries()) {
        socket.write(
          i % 2 === 0
            ? `${webhookHead('Content-Length: 1000\r\n')}{"partial":`
            : `${webhookHead('Transfer-Encoding: chunked\r\n')}5\r\n{"a":\r\n`,
        );
      }
      const results = await Promise.all(outcomes);
      for (const socket of sockets) socket.destroy();
      expect(results.every((r) => r.closed)).toBe(true);
      expect(results.every((r) => r.status === undefined || r.status === 408)).toBe(true);
      expect(results.filter((r) => r.status === 408).length).toBeGreaterThan(0);
      expect((await deliver(EVENT).send()).status).toBe(204);
    });

    it('a host middleware that read the raw stream -> JSON 500 naming the fix for JSON, 400 for a form', async () => {
      const { deliver, post, events } = await start({ parser: 'raw-reader' });
      const response = await deliver(EVENT).send();
      expect(response.status).toBe(500);
      expect(response.headers['content-type']).toMatch(/application\/json/);
      expect(JSON.parse(response.text)).toMatchObject({ error: 'raw_body_unavailable', message: expect.stringContaining('verikit') });
      const form = await post('/verikit/webhook', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(form.status).toBe(400);
      expect(events).toHaveLength(0);
    });

    it("an unsigned form post through the host's form parser -> 400; signed JSON still verifies", async () => {
      const { deliver, post, events } = await start({ parser: 'global-form' });
      const form = await post('/verikit/webhook', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(form.status).toBe(400);
      expect((await deliver(EVENT).send()).status).toBe(204);
      expect(events).toHaveLength(1);
    });

    it('two registrations (two endpoints, two secrets) under two prefixes both work', async () => {
      const second = otherSecret();
      const seen: string[] = [];
      const webhook = (which: string, key: string) => ({
        secret: key,
        store: new MemoryIdempotencyStore(),
        onEvent: (ctx: WebhookContext) => void seen.push(`${which}:${ctx.id}`),
      });
      const app = await adapter.startTwo({ client, webhook: webhook('one', secret) }, { client, webhook: webhook('two', second) });
      apps.push(app);
      const send = async (prefix: string, key: string, id: string) => {
        const signed = signWebhook({ secret: key, payload: EVENT, id });
        const response = await request(`${app.url}${prefix}/webhook`, { method: 'POST', headers: signed.headers, body: signed.body });
        await response.body.dump();
        return response.statusCode;
      };
      expect(await send('/one', secret, 'msg_one')).toBe(204);
      expect(await send('/two', second, 'msg_two')).toBe(204);
      expect(await send('/one', second, 'msg_cross')).toBe(400);
      expect(seen).toEqual(['one:msg_one', 'two:msg_two']);
    });

    it('every invite answer carries no-store and no-referrer, errors included', async () => {
      const { app, post } = await start();
      for (const path of ['/verikit/invite/kyb', '/verikit/invite/kyc']) {
        const answers = [
          await post(path, ''),
          await post(path, '', { 'x-test-user': `headers-${adapter.name}` }),
          await post(path, 'x'.repeat(MAX_BODY * 2), { 'content-type': 'text/plain' }),
        ];
        const get = await request(`${app.url}${path}`);
        await get.body.dump();
        expect(get.statusCode).toBe(405);
        for (const headers of [...answers.map((a) => a.headers), get.headers]) expect(headers).toMatchObject(PRIVATE_HEADERS);
        expect(answers.map((a) => a.status)).toEqual([401, 200, 401]);
      }
    });

    it('hammered with 1,000 random requests: never a 5xx for bad input, never a 2xx before onEvent succeeded, memory bounded', async () => {
      const { app, events } = await start({
        onEvent: (ctx) => {
          if ((ctx.event as { fail?: boolean }).fail === true) throw new Error('integrator failure');
        },
      });
      const signedJson = fc.record({ fail: fc.boolean(), n: fc.integer(), text: fc.string({ maxLength: 200 }) });
      const bytes = fc.uint8Array({ maxLength: 4096 });
      const delivery = fc.oneof(
        { weight: 3, arbitrary: fc.record({ kind: fc.constant('valid' as const), payload: signedJson }) },
        { weight: 2, arbitrary: fc.record({ kind: fc.constant('tampered' as const), payload: signedJson }) },
        {
          weight: 2,
          arbitrary: fc.record({ kind: fc.constant('unsigned' as const), body: fc.oneof(fc.string({ maxLength: 2000 }), bytes) }),
        },
        {
          weight: 1,
          arbitrary: fc.record({ kind: fc.constant('huge' as const), bytes: fc.integer({ min: MAX_BODY + 1, max: 4 * 1024 * 1024 }) }),
        },
      );
      const headerValue = fc.oneof(
        fc.string({ maxLength: 40 }).map((v) => v.replace(/[\r\n\0]/g, '')),
        fc.constant(undefined),
      );
      const randomRequest = fc.record({
        method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
        delivery,
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=latin1',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/octet-stream',
          undefined,
        ),
        contentEncoding: fc.constantFrom(undefined, 'gzip', 'deflate', 'br', 'identity'),
        chunked: fc.boolean(),
        svixTwins: fc.boolean(),
        junkHeaders: fc.record({ 'svix-id': headerValue, 'svix-timestamp': headerValue, 'svix-signature': headerValue }),
      });
      const rssBefore = process.memoryUsage().rss;
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(randomRequest, async (r) => {
          runs++;
          const id = `msg_prop_${runs}_${Math.random().toString(36).slice(2)}`;
          let headers: Record<string, string | undefined> = { 'content-type': r.contentType, 'content-encoding': r.contentEncoding };
          let body: string | Uint8Array;
          if (r.delivery.kind === 'valid' || r.delivery.kind === 'tampered') {
            const signed = signWebhook({ secret, payload: JSON.stringify(r.delivery.payload), id });
            body = r.delivery.kind === 'valid' ? signed.body : `${signed.body} `;
            const svix = r.svixTwins
              ? Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.replace(/^svix-/, 'webhook-'), v]))
              : signed.headers;
            headers = { ...svix, ...headers, 'content-type': r.contentType };
          } else {
            body = r.delivery.kind === 'huge' ? new Uint8Array(r.delivery.bytes) : r.delivery.body;
            headers = { ...headers, ...r.junkHeaders };
          }
          const sendsBody = r.method !== 'GET' && r.method !== 'HEAD';
          const payload = Buffer.from(body);
          let status: number | undefined;
          try {
            const response = await request(`${app.url}/verikit/webhook`, {
              method: r.method,
              headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>,
              body: !sendsBody
                ? undefined
                : r.chunked
                  ? Readable.from(
                      (function* () {
                        for (let at = 0; at < payload.length; at += 16 * 1024) yield payload.subarray(at, at + 16 * 1024);
                      })(),
                    )
                  : payload,
            });
            status = response.statusCode;
            await response.body.dump();
          } catch (error) {
            // Only an oversized body may see its connection closed before the answer is read.
            if (r.delivery.kind !== 'huge') throw error;
          }
          const validPost = r.method === 'POST' && r.delivery.kind === 'valid';
          if (status !== undefined && status >= 500) {
            // The one 5xx that is not bad input: the integrator's onEvent failed, and the sender retries.
            expect(validPost && r.delivery.kind === 'valid' && r.delivery.payload.fail).toBe(true);
          }
          if (status !== undefined && status >= 200 && status < 300) {
            expect(validPost).toBe(true);
            expect(events.some((e) => e.id === id)).toBe(true);
          }
          // Oversized (413, checked first when declared) and other methods (405) are refused before anything is hashed.
          if (status !== undefined && r.delivery.kind === 'huge' && sendsBody)
            expect(status).toBe(r.method === 'POST' || !r.chunked ? 413 : 405);
          else if (status !== undefined && r.method !== 'POST') expect(status).toBe(405);
        }),
        { numRuns: 1000 },
      );
      const grownMiB = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      expect(grownMiB).toBeLessThan(256);
    }, 180_000);
  });
}
