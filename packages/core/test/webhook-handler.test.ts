import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type ClaimResult,
  ConfigurationError,
  createClient,
  type IdempotencyStore,
  type InlineWebhookOptions,
  MemoryIdempotencyStore,
  type WebhookContext,
} from '../src/index.node.js';
import { builds } from './helpers/builds.js';
import { detailsPayload } from './helpers/fixtures.js';
import { json, startServer, type TestServer } from './helpers/server.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const EVENT = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1","status":"COMPLETED"}}';
const post = (body: string, headers = svixHeaders(body)) => ({ method: 'POST', headers, body });
const parse = (body: string) => JSON.parse(body) as { error: string; reason?: string };

describe.each(builds)('createWebhookHandler, %s', (_name, build) => {
  const make = (overrides: Partial<InlineWebhookOptions> = {}) => {
    const onEvent = vi.fn<(ctx: WebhookContext) => unknown>(async () => {});
    const store = new MemoryIdempotencyStore();
    const handle = build.createWebhookHandler({ secret: SECRET, store, onEvent, logger: false, ...overrides });
    return { handle, onEvent: (overrides.onEvent as typeof onEvent | undefined) ?? onEvent, store };
  };

  it('a valid delivery -> 204 and onEvent once, with the parsed event and identified subject', async () => {
    const { handle, onEvent } = make();
    const response = await handle(post(EVENT, svixHeaders(EVENT, { id: 'msg_a', timestamp: Math.floor(Date.now() / 1000) })));
    expect(response).toEqual({ status: 204, headers: { 'cache-control': 'no-store' }, body: '' });
    expect(onEvent).toHaveBeenCalledTimes(1);
    const ctx = onEvent.mock.calls[0]![0];
    expect(ctx.event).toEqual(JSON.parse(EVENT));
    expect(ctx.id).toBe('msg_a');
    expect(ctx.subject).toEqual({ kind: 'kyb', refId: 'biz-1' });
    expect(ctx.signal.aborted).toBe(false);
  });

  it('a repeat -> 204 without a second call', async () => {
    const { handle, onEvent } = make();
    const delivery = post(EVENT);
    expect((await handle(delivery)).status).toBe(204);
    expect((await handle(delivery)).status).toBe(204);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('accepts the raw body as Buffer, Uint8Array and ArrayBuffer', async () => {
    const { handle, onEvent } = make();
    const bytes = new TextEncoder().encode(EVENT);
    for (const [i, body] of [Buffer.from(EVENT), bytes, bytes.buffer.slice(0)].entries()) {
      const response = await handle({ method: 'POST', headers: svixHeaders(EVENT, { id: `msg_${i}` }), body });
      expect(response.status).toBe(204);
    }
    expect(onEvent).toHaveBeenCalledTimes(3);
  });

  it('not POST -> 405 with Allow', async () => {
    const { handle, onEvent } = make();
    const response = await handle({ method: 'GET', headers: {}, body: undefined });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('oversized -> 413 before anything is hashed', async () => {
    const { handle } = make({ maxBodyBytes: 1024 });
    const big = JSON.stringify({ pad: 'é'.repeat(600) });
    expect((await handle(post(big, { 'svix-id': 'x', 'svix-timestamp': '1', 'svix-signature': 'v1,x' }))).status).toBe(413);
    expect((await handle(post(big))).status).toBe(413);
    const fits = JSON.stringify({ pad: 'e'.repeat(900) });
    expect((await handle(post(fits))).status).toBe(204);
  });

  it('empty body -> 400', async () => {
    const { handle } = make();
    for (const body of ['', undefined, null, new Uint8Array(0)]) {
      const response = await handle({ method: 'POST', headers: svixHeaders(''), body });
      expect(response.status).toBe(400);
      expect(parse(response.body).error).toBe('empty_body');
    }
  });

  it.each([
    [
      'tampered byte',
      (h: Record<string, string>) => ({ headers: h, body: EVENT.replace('COMPLETED', 'COMPLETEE') }),
      'no_matching_signature',
    ],
    [
      'wrong secret',
      () => ({ headers: svixHeaders(EVENT, { secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl' }), body: EVENT }),
      'no_matching_signature',
    ],
    [
      'old timestamp',
      () => ({ headers: svixHeaders(EVENT, { timestamp: Math.floor(Date.now() / 1000) - 3600 }), body: EVENT }),
      'timestamp_too_old',
    ],
    [
      'future timestamp',
      () => ({ headers: svixHeaders(EVENT, { timestamp: Math.floor(Date.now() / 1000) + 3600 }), body: EVENT }),
      'timestamp_too_new',
    ],
    ['no svix-id', (h: Record<string, string>) => ({ headers: { ...h, 'svix-id': '' }, body: EVENT }), 'missing_id'],
    ['no svix-timestamp', (h: Record<string, string>) => ({ headers: { ...h, 'svix-timestamp': '' }, body: EVENT }), 'missing_timestamp'],
    ['no svix-signature', (h: Record<string, string>) => ({ headers: { ...h, 'svix-signature': '' }, body: EVENT }), 'missing_signature'],
  ])('%s -> 400 with a reason, a generic body and no secret', async (_case, change, reason) => {
    const { handle, onEvent } = make();
    const { headers, body } = change(svixHeaders(EVENT));
    const response = await handle({ method: 'POST', headers, body });
    expect(response.status).toBe(400);
    expect(parse(response.body)).toEqual({ error: 'invalid_signature', reason });
    expect(response.body).not.toContain(SECRET.slice(6));
    expect(response.body).not.toContain('COMPLETE');
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a signed body that is not JSON -> 400 invalid_json', async () => {
    const { handle, onEvent } = make();
    const response = await handle(post('not json at all'));
    expect(response.status).toBe(400);
    expect(parse(response.body).error).toBe('invalid_json');
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('a store that throws -> 503 and onEvent is not called', async () => {
    const failing: IdempotencyStore = {
      claim: async () => {
        throw new Error('redis down');
      },
      complete: async () => 'ok',
      release: async () => 'ok',
      extend: async () => 'ok',
    };
    const { handle, onEvent } = make({ store: failing });
    const response = await handle(post(EVENT));
    expect(response.status).toBe(503);
    expect(parse(response.body).error).toBe('store_unavailable');
    expect(response.body).not.toContain('redis');
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('onEvent throwing -> 500, then the redelivery succeeds and it is handled once', async () => {
    let calls = 0;
    const onEvent = vi.fn(async () => {
      calls++;
      if (calls === 1) throw new Error('database timeout with secrets inside');
    });
    const { handle } = make({ onEvent });
    const delivery = post(EVENT);
    const first = await handle(delivery);
    expect(first.status).toBe(500);
    expect(first.body).not.toContain('secrets');
    expect((await handle(delivery)).status).toBe(204);
    expect((await handle(delivery)).status).toBe(204);
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it('a synchronous onEvent: returning completes the id, throwing releases it for the redelivery', async () => {
    let calls = 0;
    const onEvent = vi.fn((): void => {
      calls++;
      if (calls === 1) throw new Error('queue full');
    });
    const { handle, store } = make({ onEvent });
    const delivery = post(EVENT, svixHeaders(EVENT, { id: 'msg_sync' }));
    expect((await handle(delivery)).status).toBe(500);
    expect((await handle(delivery)).status).toBe(204);
    expect(await store.claim('msg_sync', { leaseMs: 1000 })).toEqual<ClaimResult>({ status: 'done' });
    expect((await handle(delivery)).status).toBe(204);
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it.each([
    ['an async', async () => Promise.reject(new Error('nope'))],
    [
      'a synchronous',
      () => {
        throw new Error('nope');
      },
    ],
  ])('%s onEvent failing while the logger and onError throw -> 500 and the id released, never a hang', async (kind, failing) => {
    const boom = () => {
      throw new Error('the log sink is down');
    };
    let calls = 0;
    const onEvent = vi.fn(() => (++calls === 1 ? failing() : undefined));
    const { handle } = make({ onEvent, onError: boom, logger: { error: boom, warn: boom, info: boom, debug: boom } });
    const delivery = post(EVENT, svixHeaders(EVENT, { id: `msg_loud_${kind.split(' ')[1]}` }));
    expect((await handle(delivery)).status).toBe(500);
    expect((await handle(delivery)).status).toBe(204);
    expect(onEvent).toHaveBeenCalledTimes(2);
  });

  it('identify runs when ctx.subject is first read, once; one that throws gives a null subject', async () => {
    const identify = vi.fn(() => ({ kind: 'kyb' as const, refId: 'biz-1' }));
    const seen: unknown[] = [];
    const { handle } = make({ identify, onEvent: (ctx) => void seen.push(ctx.subject, ctx.subject) });
    await handle(post(EVENT, svixHeaders(EVENT, { id: 'msg_read' })));
    expect(seen).toEqual([
      { kind: 'kyb', refId: 'biz-1' },
      { kind: 'kyb', refId: 'biz-1' },
    ]);
    expect(identify).toHaveBeenCalledTimes(1);
    const unread = make({ identify, onEvent: () => {} });
    expect((await unread.handle(post(EVENT, svixHeaders(EVENT, { id: 'msg_unread' })))).status).toBe(204);
    expect(identify).toHaveBeenCalledTimes(1);
    const throwing = make({
      identify: () => {
        throw new Error('unexpected shape');
      },
    });
    await throwing.handle(post(EVENT));
    expect(throwing.onEvent.mock.calls[0]![0].subject).toBeNull();
  });

  it('onEvent slower than the deadline -> 503, lease kept (409), then done once it finishes', async () => {
    let finish!: () => void;
    const onEvent = vi.fn(
      (ctx: WebhookContext) =>
        new Promise<void>((resolve) => {
          finish = resolve;
          ctx.signal.addEventListener('abort', () => {});
        }),
    );
    const { handle } = make({ onEvent, deadlineMs: 50, leaseMs: 10_000 });
    const delivery = post(EVENT);
    const first = await handle(delivery);
    expect(first.status).toBe(503);
    expect(parse(first.body).error).toBe('handler_timeout');
    expect(onEvent.mock.calls[0]![0].signal.aborted).toBe(true);
    const during = await handle(delivery);
    expect(during.status).toBe(409);
    expect(during.headers['retry-after']).toMatch(/^\d+$/);
    finish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await handle(delivery)).status).toBe(204);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('two identical deliveries at the same instant -> one onEvent call', async () => {
    const { handle, onEvent } = make({
      onEvent: vi.fn(async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }),
    });
    const delivery = post(EVENT);
    const answers = await Promise.all([handle(delivery), handle(delivery)]);
    expect(answers.map((a) => a.status).sort()).toEqual([204, 409]);
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('a completion the store fails to record at first is retried, and the answer stays 204', async () => {
    const inner = new MemoryIdempotencyStore();
    let failures = 2;
    const flaky: IdempotencyStore = {
      claim: (id, o) => inner.claim(id, o),
      release: (lease) => inner.release(lease),
      extend: (lease, o) => inner.extend(lease, o),
      complete: async (lease) => {
        if (failures-- > 0) throw new Error('blip');
        return inner.complete(lease);
      },
    };
    const { handle, onEvent } = make({ store: flaky });
    const delivery = post(EVENT);
    expect((await handle(delivery)).status).toBe(204);
    expect(await inner.claim('msg_1', { leaseMs: 1000 })).toEqual<ClaimResult>({ status: 'done' });
    expect(onEvent).toHaveBeenCalledTimes(1);
  });

  it('identify can be overridden for events shaped differently', async () => {
    const { handle, onEvent } = make({ identify: (event) => ({ kind: 'kyc', refId: (event as { who: string }).who }) });
    await handle(post('{"who":"user-9"}'));
    expect(onEvent.mock.calls[0]![0].subject).toEqual({ kind: 'kyc', refId: 'user-9' });
  });

  it('refuses unusable options at creation', () => {
    const onEvent = async () => {};
    const store = new MemoryIdempotencyStore();
    expect(() => build.createWebhookHandler({ store, onEvent } as never)).toThrow(ConfigurationError);
    expect(() => build.createWebhookHandler({ secret: '', store, onEvent })).toThrow(ConfigurationError);
    expect(() => build.createWebhookHandler({ secret: SECRET, onEvent } as never)).toThrow(/store/);
    expect(() => build.createWebhookHandler({ secret: SECRET, store } as never)).toThrow(/onEvent/);
    expect(() => build.createWebhookHandler({ secret: SECRET, store, onEvent, deadlineMs: 5000, leaseMs: 1000 })).toThrow(/leaseMs/);
    expect(() => build.createWebhookHandler({ secret: SECRET, secrets: [SECRET], store, onEvent })).toThrow(/not both/);
  });
});

describe('ctx.fetchResult reads the authoritative result by refId', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('works when onEvent destructures ctx', async () => {
    const client = createClient({ apiKey: 'sk_test', baseUrl: server.url, maxRetries: 0 });
    const seen: unknown[] = [];
    const handle = builds[0][1].createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      client,
      onEvent: async ({ fetchResult, id, signal }) => {
        seen.push(id, signal.aborted, (await fetchResult()).kind);
      },
    });
    server.handle(json(200, detailsPayload({ refId: 'biz-1' })));
    expect((await handle(post(EVENT, svixHeaders(EVENT, { id: 'msg_destructured' })))).status).toBe(204);
    expect(seen).toEqual(['msg_destructured', false, 'kyb']);
    await client.close();
  });

  it.each(builds)('KYB and KYC, %s', async (_name, build) => {
    const client = createClient({ apiKey: 'sk_test', baseUrl: server.url, maxRetries: 0 });
    const results: unknown[] = [];
    const handle = build.createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      client,
      onEvent: async (ctx) => {
        results.push(await ctx.fetchResult());
      },
    });
    server.requests.length = 0;
    server.handle(json(200, detailsPayload({ refId: 'biz-1' })), json(200, { status: 'APPROVED' }));
    await handle(post(EVENT, svixHeaders(EVENT, { id: 'msg_kyb' })));
    const kycEvent = '{"type":"kyc.session.completed","data":{"refId":"user 7"}}';
    await handle(post(kycEvent, svixHeaders(kycEvent, { id: 'msg_kyc' })));
    expect(server.requests.map((r) => r.rawPath)).toEqual(['/kyb/case/biz-1/details', '/v2/users/user%207']);
    expect(results).toMatchObject([
      { kind: 'kyb', refId: 'biz-1', result: { id: 'case_1', status: 'COMPLETED' } },
      { kind: 'kyc', refId: 'user 7', result: { status: 'APPROVED' } },
    ]);
    await client.close();
  });

  it('without a client, for an unidentifiable event, or with a client made by hand, onEvent fails and the delivery is retried', async () => {
    const build = builds[0][1];
    const errors: unknown[] = [];
    const handlerWith = (client: ReturnType<typeof createClient> | undefined) =>
      build.createWebhookHandler({
        secret: SECRET,
        store: new MemoryIdempotencyStore(),
        client,
        onEvent: async (ctx) => {
          await ctx.fetchResult().catch((error: unknown) => {
            errors.push(error);
            throw error;
          });
        },
      });
    const client = createClient({ apiKey: 'sk_test', baseUrl: server.url });
    expect((await handlerWith(undefined)(post(EVENT, svixHeaders(EVENT, { id: 'm1' })))).status).toBe(500);
    expect((await handlerWith(client)(post('{"hello":1}', svixHeaders('{"hello":1}', { id: 'm2' })))).status).toBe(500);
    // The reading comes with the client createClient makes (a webhook-only bundle carries none of it): one made by hand says so.
    const handMade = { kyb: { getCase: async () => ({}) }, kyc: { getResult: async () => ({}) } } as unknown as typeof client;
    expect((await handlerWith(handMade)(post(EVENT, svixHeaders(EVENT, { id: 'm3' })))).status).toBe(500);
    expect(errors.map((e) => (e as { code: string }).code)).toEqual(['invalid_config', 'invalid_argument', 'invalid_config']);
    expect((errors[2] as Error).message).toMatch(/ctx\.fetchResult\(\) needs a client made by createClient or clientFromEnv/);
    await client.close();
  });
});
