import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  buildVerificationLink,
  ConfigurationError,
  clientFromEnv,
  clientOptionsFromEnv,
  createClient,
  createKycStatusClassifier,
  createVerikitRoutes,
  isFinal,
  MemoryIdempotencyStore,
  readTokenExpiry,
  type VerikitClient,
} from '../src/index.node.js';
import { fakeJwt } from './helpers/fixtures.js';

const ok = { apiKey: 'sk_test_1', baseUrl: 'http://127.0.0.1:1' };

describe('client options are checked at creation', () => {
  it.each([
    [{ ...ok, apiKey: '' }, 'apiKey'],
    [{ ...ok, apiKey: 'sk\r\nx-evil: 1' }, 'apiKey'],
    [{ ...ok, baseUrl: 'not a url' }, 'baseUrl'],
    [{ ...ok, baseUrl: 'ftp://x.test' }, 'baseUrl'],
    [{ ...ok, baseUrl: 'https://user:pw@x.test' }, 'baseUrl'],
    [{ ...ok, webUrl: 'nope' }, 'webUrl'],
    [{ ...ok, environment: 'staging' }, 'environment'],
    [{ ...ok, timeoutMs: 0 }, 'timeoutMs'],
    [{ ...ok, deadlineMs: Number.NaN }, 'deadlineMs'],
    [{ ...ok, maxRetries: 1.5 }, 'maxRetries'],
    [{ ...ok, maxRetries: -1 }, 'maxRetries'],
    [{ ...ok, kycStatuses: { approved: ['OK'], rejected: ['OK'] } }, 'kycStatuses'],
  ])('%j -> ConfigurationError on %s', (options, option) => {
    let caught: unknown;
    try {
      createClient(options as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).option).toBe(option);
    expect((caught as Error).message).not.toContain('sk\r\n');
  });

  it('verificationLink without webUrl/publicKey names the missing option', () => {
    const client = createClient(ok);
    expect(() => client.verificationLink('t')).toThrow(/webUrl/);
    void client.close();
  });
});

describe('clientFromEnv', () => {
  it('reads VERIKIT_* variables', async () => {
    const client = clientFromEnv(
      {},
      {
        VERIKIT_API_KEY: 'k1',
        VERIKIT_BASE_URL: 'http://127.0.0.1:9',
        VERIKIT_WEB_URL: 'https://w.test',
        VERIKIT_PUBLIC_KEY: 'pk',
        VERIKIT_ENVIRONMENT: 'production',
      },
    );
    expect(new URL(client.verificationLink('tok').url).searchParams.get('environment')).toBe('Production');
    await client.close();
  });

  it('reads VERIKIT_ENVIRONMENT in any case: the hosted page spelling Sandbox is the SDK sandbox', () => {
    const env = { VERIKIT_API_KEY: 'k', VERIKIT_BASE_URL: 'http://x.test' };
    expect(clientOptionsFromEnv({ ...env, VERIKIT_ENVIRONMENT: 'Sandbox' }).environment).toBe('sandbox');
    expect(clientOptionsFromEnv({ ...env, VERIKIT_ENVIRONMENT: 'PRODUCTION' }).environment).toBe('production');
  });

  it.each([
    [{ VERIKIT_BASE_URL: 'http://x.test' }, 'VERIKIT_API_KEY', /VERIKIT_API_KEY is not set/],
    [{ VERIKIT_API_KEY: 'k' }, 'VERIKIT_BASE_URL', /VERIKIT_BASE_URL is not set/],
    [{ VERIKIT_API_KEY: 'k', VERIKIT_BASE_URL: 'nope' }, 'VERIKIT_BASE_URL', /VERIKIT_BASE_URL is not a valid URL/],
    [{ VERIKIT_API_KEY: 'k', VERIKIT_BASE_URL: 'http://x.test', VERIKIT_WEB_URL: 'x' }, 'VERIKIT_WEB_URL', /VERIKIT_WEB_URL/],
    [
      { VERIKIT_API_KEY: 'k', VERIKIT_BASE_URL: 'http://x.test', VERIKIT_ENVIRONMENT: 'prod' },
      'VERIKIT_ENVIRONMENT',
      /VERIKIT_ENVIRONMENT/,
    ],
  ])('%j -> names %s', (env, variable, message) => {
    expect(() => clientFromEnv({}, env)).toThrow(message);
    try {
      clientFromEnv({}, env);
    } catch (error) {
      expect((error as ConfigurationError).option).toBe(variable);
    }
  });
});

describe('a feature that needs the link settings fails at start, naming what to set', () => {
  const env = { VERIKIT_API_KEY: 'k', VERIKIT_BASE_URL: 'http://127.0.0.1:9' };
  const invite = { kyb: { resolveBusiness: () => ({ refId: 'b' }) } };

  it.each([
    [env, 'VERIKIT_WEB_URL'],
    [{ ...env, VERIKIT_WEB_URL: 'https://w.test' }, 'VERIKIT_PUBLIC_KEY'],
  ])('invite routes over clientFromEnv(%j) -> ConfigurationError on %s', async (vars, variable) => {
    const client = clientFromEnv({}, vars);
    let caught: unknown;
    try {
      createVerikitRoutes({ client, invite });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).option).toBe(variable);
    expect((caught as Error).message).toBe(`the invite routes: hosted links need ${variable}, which is not set`);
    expect(() => client.verificationLink('t')).toThrow(`${variable}, which is not set`);
    await client.close();
  });

  it('invite routes over createClient without publicKey name the client option', async () => {
    const client = createClient({ ...ok, webUrl: 'https://w.test' });
    expect(() => createVerikitRoutes({ client, invite })).toThrow('the invite routes: hosted links need the client option publicKey');
    await client.close();
  });

  it('a webhook-only route set needs no link settings', async () => {
    const client = clientFromEnv({}, env);
    expect(
      createVerikitRoutes({
        client,
        webhook: { secret: `whsec_${btoa('k'.repeat(24))}`, store: new MemoryIdempotencyStore(), onEvent: () => {} },
      }).webhook,
    ).toBeDefined();
    await client.close();
  });
});

describe('invite routes build their handlers through the client (so a bundle without one carries no invite code)', () => {
  const linked = { ...ok, webUrl: 'https://w.test', publicKey: 'pk' };
  const invite = { kyb: { resolveBusiness: () => null } };
  const asBrowserless = { method: 'POST', headers: {}, request: null };

  it('over a client from createClient, or a copy of one, the invite route answers', async () => {
    const client = createClient(linked);
    for (const given of [client, { ...client, kyb: { ...client.kyb } }]) {
      const routes = createVerikitRoutes<null>({ client: given, invite });
      expect((await routes.inviteKyb?.(asBrowserless))?.status).toBe(401);
    }
    await client.close();
  });

  it('a client from the CommonJS build serves routes of the ESM build (two copies of the package)', async () => {
    const cjs = createRequire(import.meta.url)('../dist/node.cjs') as typeof import('../src/index.node.js');
    const client = cjs.createClient(linked);
    const routes = createVerikitRoutes<null>({ client, invite });
    expect((await routes.inviteKyb?.(asBrowserless))?.status).toBe(401);
    await client.close();
  });

  it('a client made by hand cannot start invite routes: a ConfigurationError at start names the fix', async () => {
    const client = createClient(linked);
    const byHand: VerikitClient = {
      kyb: client.kyb,
      kyc: client.kyc,
      verificationLink: (token) => client.verificationLink(token),
      assertLinksConfigured: (feature) => client.assertLinksConfigured(feature),
      close: () => client.close(),
    };
    let caught: unknown;
    try {
      createVerikitRoutes<null>({ client: byHand, invite });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as ConfigurationError).option).toBe('client');
    expect((caught as Error).message).toMatch(/made by createClient or clientFromEnv/);
    // Webhook routes need no more than they did: the client is only read by ctx.fetchResult().
    const webhook = { secret: `whsec_${btoa('k'.repeat(24))}`, store: new MemoryIdempotencyStore(), onEvent: () => {} };
    expect(createVerikitRoutes<null>({ client: byHand, webhook }).webhook).toBeDefined();
    await client.close();
  });
});

describe('buildVerificationLink', () => {
  it('URL-encodes every value and keeps the web path', () => {
    const url = new URL(
      buildVerificationLink({ webUrl: 'https://verify.test/a?old=1#h', token: 'a.b+c/d=', publicKey: 'pk&x=1', environment: 'Sandbox' }),
    );
    expect(url.pathname).toBe('/a/');
    expect([...url.searchParams.keys()]).toEqual(['authToken', 'publicKey', 'environment']);
    expect(url.searchParams.get('authToken')).toBe('a.b+c/d=');
    expect(url.searchParams.get('publicKey')).toBe('pk&x=1');
    expect(url.hash).toBe('');
  });

  it.each(['staging', 'PRODUCTION', '', undefined])('rejects environment %j', (environment) => {
    expect(() =>
      buildVerificationLink({ webUrl: 'https://v.test', token: 't', publicKey: 'p', environment: environment as never }),
    ).toThrow(/Production.*Sandbox/);
  });

  it('accepts the client spelling of environments', () => {
    expect(buildVerificationLink({ webUrl: 'https://v.test', token: 't', publicKey: 'p', environment: 'production' })).toContain(
      'environment=Production',
    );
  });

  it('rejects a missing token or public key', () => {
    expect(() => buildVerificationLink({ webUrl: 'https://v.test', token: '', publicKey: 'p', environment: 'Sandbox' })).toThrow(/token/);
    expect(() => buildVerificationLink({ webUrl: 'https://v.test', token: 't', publicKey: '', environment: 'Sandbox' })).toThrow(
      /publicKey/,
    );
  });
});

describe('readTokenExpiry', () => {
  it('an exp outside the range of a Date is unreadable (null), not a throw', () => {
    for (const exp of [1e20, -1e20, Number.MAX_VALUE]) expect(readTokenExpiry(fakeJwt(exp))).toBeNull();
  });

  it('reads exp from a 24 h KYB token without verifying it', () => {
    const exp = Math.floor(Date.now() / 1000) + 24 * 3600;
    expect(readTokenExpiry(fakeJwt(exp))?.getTime()).toBe(exp * 1000);
  });

  it.each(['', 'opaque-token', 'a.!!!.c', `a.${Buffer.from('{"exp":"soon"}').toString('base64url')}.c`])('returns null for %j', (token) => {
    expect(readTokenExpiry(token)).toBeNull();
  });
});

describe('status helpers', () => {
  it('isFinal is true only for COMPLETED and REJECTED', () => {
    expect(['NOT_STARTED', 'IN_PROGRESS', 'IN_REVIEW', 'COMPLETED', 'REJECTED', 'NEW'].filter(isFinal)).toEqual(['COMPLETED', 'REJECTED']);
  });

  it('the KYC classifier treats anything unconfigured as pending', () => {
    const classify = createKycStatusClassifier({ approved: ['APPROVED'], rejected: ['DECLINED'] });
    expect(['APPROVED', 'DECLINED', 'approved', 'MANUAL_REVIEW', ''].map(classify)).toEqual([
      'approved',
      'rejected',
      'pending',
      'pending',
      'pending',
    ]);
    expect(createKycStatusClassifier()('APPROVED')).toBe('pending');
  });

  it('the client classifies with its kycStatuses option', async () => {
    const client = createClient({ ...ok, kycStatuses: { approved: ['GREEN'], rejected: ['RED'] } });
    expect([client.kyc.classify('GREEN'), client.kyc.classify('RED'), client.kyc.classify('AMBER')]).toEqual([
      'approved',
      'rejected',
      'pending',
    ]);
    await client.close();
  });
});
