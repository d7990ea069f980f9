import { describe, expect, it } from 'vitest';
import { createClient, createInviteHandler, type VerikitClient } from '../src/index.node.js';
import { fakeJwt } from './helpers/fixtures.js';

const PRIVATE = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

/** A real client whose `fetch` answers every create call with a case carrying `token`. */
function clientIssuing(token: string): VerikitClient {
  return createClient({
    apiKey: 'sk_test_invite',
    baseUrl: 'https://api.example.test',
    webUrl: 'https://verify.example.test',
    publicKey: 'pk_test',
    fetch: async () =>
      new Response(JSON.stringify({ kybCase: { _id: 'c1', refId: 'biz', status: 'NOT_STARTED', flow: 'f' }, token }), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      }),
  });
}

describe('createInviteHandler', () => {
  it('a token whose exp is outside the Date range -> 200 with expiresAt null (the case was created)', async () => {
    const handle = createInviteHandler(clientIssuing(fakeJwt(1e20)), {
      kind: 'kyb',
      options: { resolveBusiness: () => ({ refId: 'biz' }) },
    });
    const answer = await handle({ method: 'POST', headers: {}, request: {} });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject(PRIVATE);
    expect(JSON.parse(answer.body)).toMatchObject({ url: expect.stringContaining('authToken='), expiresAt: null });
  });

  it('anything unexpected still answers a private JSON 500, never a framework error page', async () => {
    const handle = createInviteHandler(clientIssuing(fakeJwt(2e9)), {
      kind: 'kyb',
      options: { resolveBusiness: () => ({ refId: 'biz' }) },
    });
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('headers exploded');
        },
      },
    );
    const answer = await handle({ method: 'POST', headers: hostile, request: {} });
    expect(answer.status).toBe(500);
    expect(answer.headers).toMatchObject(PRIVATE);
    expect(answer.body).not.toContain('exploded');
  });
});
