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

/** A real client whose every create call meets `answer` (a Response, or a thrown transport failure). */
function clientMeeting(answer: () => Response): VerikitClient {
  return createClient({
    apiKey: 'sk_test_invite',
    baseUrl: 'https://api.example.test',
    webUrl: 'https://verify.example.test',
    publicKey: 'pk_test',
    maxRetries: 0,
    fetch: async () => answer(),
  });
}

describe('createInviteHandler', () => {
  it.each([
    [
      '429 with Retry-After',
      () => new Response('{}', { status: 429, headers: { 'retry-after': '7' } }),
      503,
      'verification_unavailable',
      '7',
    ],
    [
      'a connection failure',
      () => {
        throw new TypeError('fetch failed');
      },
      503,
      'verification_unavailable',
      undefined,
    ],
    ['401', () => new Response('{}', { status: 401 }), 502, 'verification_misconfigured', undefined],
    ['500', () => new Response('{}', { status: 500 }), 502, 'verification_failed', undefined],
    ['404', () => new Response('{}', { status: 404 }), 502, 'verification_failed', undefined],
  ])('an upstream %s -> %s %s, private, naming no key', async (_what, answer, status, code, retryAfter) => {
    const handle = createInviteHandler(
      clientMeeting(answer),
      { kind: 'kyb', options: { resolveBusiness: () => ({ refId: 'biz' }) } },
      { logger: { debug() {}, info() {}, warn() {}, error() {} } },
    );
    const reply = await handle({ method: 'POST', headers: {}, request: {} });
    expect(reply.status).toBe(status);
    expect(reply.headers).toMatchObject(PRIVATE);
    expect(reply.headers['retry-after']).toBe(retryAfter);
    expect(JSON.parse(reply.body).error).toBe(code);
    if (code === 'verification_failed') expect(JSON.parse(reply.body).message).toMatch(/answered (500|404)/);
    expect(reply.body).not.toContain('sk_test_invite');
  });

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

describe('a browser whose invite fails', () => {
  const browser = { accept: 'text/html,application/xhtml+xml' };
  const silent = { debug() {}, info() {}, warn() {}, error() {} };

  it('gets a plain page by default: the message escaped, the status and private headers kept', async () => {
    const handle = createInviteHandler(
      clientMeeting(() => new Response('{}', { status: 429, headers: { 'retry-after': '7' } })),
      {
        kind: 'kyc',
        options: { resolveUser: () => ({ refId: 'person' }) },
      },
      { logger: silent },
    );
    const reply = await handle({ method: 'POST', headers: browser, request: {} });
    expect(reply.status).toBe(503);
    expect(reply.headers).toMatchObject({ ...PRIVATE, 'content-type': 'text/html; charset=utf-8', 'retry-after': '7' });
    expect(reply.body).toMatch(/^<!doctype html>/);
    expect(reply.body).toContain('The verification service is busy or unreachable; try again shortly.');
  });

  it('gets the errorPage it was given, and the plain page when that one throws', async () => {
    const errors: string[] = [];
    const logger = { ...silent, error: (_fields: unknown, message: string) => void errors.push(message) };
    const make = (errorPage: (f: { code: string; message: string }) => string) =>
      createInviteHandler(
        clientMeeting(() => new Response('{}')),
        { kind: 'kyb', options: { resolveBusiness: () => null } },
        { logger, errorPage },
      );
    const custom = await make(({ code, message }) => `<p class="${code}">${message}</p>`)({
      method: 'POST',
      headers: browser,
      request: {},
    });
    expect(custom.body).toBe('<p class="unauthorized">Sign in to start a verification.</p>');
    const broken = await make(() => {
      throw new Error('template broke');
    })({ method: 'POST', headers: browser, request: {} });
    expect(broken.status).toBe(401);
    expect(broken.body).toContain('Sign in to start a verification.');
    expect(errors).toEqual(['invite errorPage failed; answered the plain page']);
  });

  it('a message never becomes markup in the plain page', async () => {
    const handle = createInviteHandler(
      clientMeeting(() => new Response('{}')),
      {
        kind: 'kyb',
        options: {
          resolveBusiness: () => {
            throw new Error('<script>alert(1)</script>');
          },
        },
      },
      { logger: silent },
    );
    const reply = await handle({ method: 'POST', headers: browser, request: {} });
    expect(reply.status).toBe(500);
    expect(reply.body).not.toContain('<script>');
  });
});
