import { describe, expect, it } from 'vitest';
import { createFetchWebhookHandler, MemoryIdempotencyStore } from '../src/index.node.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';

describe('createFetchWebhookHandler', () => {
  const seen: string[] = [];
  const handle = createFetchWebhookHandler({
    secret: SECRET,
    store: new MemoryIdempotencyStore(),
    maxBodyBytes: 1_000,
    logger: false,
    onEvent: (ctx) => {
      seen.push(ctx.id);
    },
  });
  const post = (body: BodyInit, headers: Record<string, string>) =>
    handle(new Request('http://localhost/webhook', { method: 'POST', headers, body }));

  it('a signed delivery runs onEvent once and answers 204 with no body; a repeat changes nothing', async () => {
    const headers = svixHeaders(BODY, { id: 'msg_fetch' });
    const first = await post(BODY, headers);
    const again = await post(BODY, headers);
    expect([first.status, again.status]).toEqual([204, 204]);
    expect(first.body).toBeNull();
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(seen).toEqual(['msg_fetch']);
  });

  it('a bad signature is a 400 with its reason as JSON', async () => {
    const response = await post(BODY, { ...svixHeaders(BODY), 'svix-signature': 'v1,AAAA' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_signature' });
  });

  it('a streamed body over maxBodyBytes is refused with 413 as it arrives', async () => {
    const big = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i++) controller.enqueue(new Uint8Array(400));
        controller.close();
      },
    });
    const response = await handle(
      new Request('http://localhost/webhook', { method: 'POST', headers: svixHeaders(BODY), body: big, duplex: 'half' } as RequestInit),
    );
    expect(response.status).toBe(413);
  });

  it('a GET is 405', async () => {
    const response = await handle(new Request('http://localhost/webhook'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});
