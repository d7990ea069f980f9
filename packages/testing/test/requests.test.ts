import { ConfigurationError, createClient, NotFoundError, RateLimitError } from '@verikit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeRequest, maxReadsInWindow } from '../src/fake/requests.js';
import { createFakeService } from '../src/index.js';

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function start(options: Parameters<typeof createFakeService>[0] = {}) {
  const fake = await createFakeService(options);
  const client = createClient({ ...fake.clientOptions, maxRetries: 0 });
  opened.push(async () => {
    await client.close();
    await fake.close();
  });
  return { fake, client };
}

const read = (at: number, route: FakeRequest['route'] = 'kyb.getCase'): FakeRequest => ({
  method: 'GET',
  route,
  path: '/x',
  status: 200,
  at,
});

describe('the request log', () => {
  it('logs every API request with its route, path (never the query), status and arrival time', async () => {
    const { fake, client } = await start();
    const before = Date.now();
    await client.kyb.createCase({ refId: 'logged/1' });
    await client.kyb.getCase('logged/1');
    await expect(client.kyc.getResult('nobody')).rejects.toBeInstanceOf(NotFoundError);
    await fetch(`${fake.baseUrl}/kyb/flows?token=secret-in-query`, { headers: { 'x-api-key': 'sk_wrong' } });
    fake.faults.inject('kyb.getCase', { kind: 'reset' }, { times: 1 });
    const reset = await fetch(`${fake.baseUrl}/kyb/case/logged%2F1/details`, { headers: { 'x-api-key': fake.credentials.apiKey } }).catch(
      (e: unknown) => e,
    );
    expect(reset).toBeInstanceOf(TypeError);
    await fetch(`${fake.baseUrl}/not/a/route`);
    expect(fake.requests.map(({ method, route, path, status }) => ({ method, route, path, status }))).toEqual([
      { method: 'POST', route: 'kyb.createCase', path: '/kyb/case', status: 200 },
      { method: 'GET', route: 'kyb.getCase', path: '/kyb/case/logged%2F1/details', status: 200 },
      { method: 'GET', route: 'kyc.getResult', path: '/v2/users/nobody', status: 404 },
      { method: 'GET', route: 'kyb.flows', path: '/kyb/flows', status: 401 },
      // Reset before any answer: logged, status 0.
      { method: 'GET', route: 'kyb.getCase', path: '/kyb/case/logged%2F1/details', status: 0 },
    ]);
    expect(JSON.stringify(fake.requests)).not.toContain('secret-in-query');
    expect(fake.requests.every((r) => r.at >= before && r.at <= Date.now())).toBe(true);
    // Three result reads (KYB details twice, a KYC result), whatever their answers.
    expect(fake.maxReadsInWindow()).toBe(3);
  });

  it('maxReadsInWindow: the most result reads in any half-open window [t, t + w), other routes left out', () => {
    const requests = [
      read(60_001),
      read(0),
      read(10),
      read(59_999),
      read(60_000, 'kyc.getResult'),
      read(120_000),
      read(5, 'kyb.createCase'),
    ];
    // [10, 60 010) holds 10, 59 999, 60 000 and 60 001; [0, 60 000) only three: 60 000 is outside.
    expect(maxReadsInWindow(requests, 60_000)).toBe(4);
    expect(maxReadsInWindow(requests, 1)).toBe(1);
    expect(maxReadsInWindow(requests, 120_001)).toBe(6);
    expect(maxReadsInWindow([], 60_000)).toBe(0);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => maxReadsInWindow(requests, bad)).toThrow(ConfigurationError);
  });
});

describe('the read rate limit', () => {
  it('answers 429 with Retry-After beyond readsPerMinute, per organization, and counts the refused reads too', async () => {
    const { fake, client } = await start({ rateLimit: { readsPerMinute: 3 } });
    await client.kyb.createCase({ refId: 'limited' });
    await client.kyc.createSession({ refId: 'limited' });
    for (let i = 0; i < 3; i++) await (i % 2 === 0 ? client.kyb.getCase('limited') : client.kyc.getResult('limited'));
    const limited = await client.kyb.getCase('limited').catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    // Until the first read leaves the minute: at most 60 s, at least 1 s.
    expect((limited as RateLimitError).retryAfterMs).toBeGreaterThanOrEqual(1000);
    expect((limited as RateLimitError).retryAfterMs).toBeLessThanOrEqual(60_000);
    // Creating is not a read; another organization has its own budget.
    await expect(client.kyb.createCase({ refId: 'another' })).resolves.toBeDefined();
    const org = fake.addOrganization();
    const other = createClient({ ...fake.clientOptions, apiKey: org.apiKey, maxRetries: 0 });
    await other.kyb.createCase({ refId: 'theirs' });
    await expect(other.kyb.getCase('theirs')).resolves.toBeDefined();
    await other.close();
    expect(fake.requests.filter((r) => r.status === 429).map((r) => r.route)).toEqual(['kyb.getCase']);
    expect(fake.maxReadsInWindow()).toBe(5);

    fake.setRateLimit({ readsPerMinute: 3, retryAfterSeconds: 7 });
    const fixed = await client.kyc.getResult('limited').catch((e: unknown) => e);
    expect((fixed as RateLimitError).retryAfterMs).toBe(7000);
    fake.setRateLimit(undefined);
    await expect(client.kyb.getCase('limited')).resolves.toMatchObject({ refId: 'limited' });
  });

  it('a limit it cannot use is refused, naming the field', async () => {
    await expect(createFakeService({ rateLimit: { readsPerMinute: 0 } })).rejects.toMatchObject({
      code: 'invalid_config',
      option: 'rateLimit.readsPerMinute',
    });
    const { fake } = await start();
    expect(() => fake.setRateLimit({ readsPerMinute: 10, retryAfterSeconds: 1.5 })).toThrow(
      'rateLimit.retryAfterSeconds must be a positive integer',
    );
  });
});
