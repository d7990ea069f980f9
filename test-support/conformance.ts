import {
  createClient,
  type KybParty,
  MemoryIdempotencyStore,
  type VerikitClient,
  type VerikitRoutesOptions,
  type WebhookContext,
} from '@verikit/core';
import { createFakeService, type FakeService, signWebhook } from '@verikit/testing';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** How the host app parses JSON: not at all, globally before verikit, or globally while keeping the raw bytes. */
export type HostParser = 'none' | 'global' | 'global-keeping-raw';

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
  /** Whether a global parser without kept raw bytes leaves the route unable to verify (then: 500 naming the fix). */
  globalParserLosesRawBody: boolean;
}

const MAX_BODY = 64 * 1024;

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
            onEvent: async (ctx) => {
              await setup.onEvent?.(ctx);
              events.push(ctx);
            },
          },
          invite: { kyb: { resolveBusiness: party }, kyc: { resolveUser: party } },
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
          message: expect.stringContaining('before express.json()'),
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
  });
}
