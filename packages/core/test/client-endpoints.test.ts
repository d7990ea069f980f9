import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  createClient,
  type NodeClientOptions,
  StorageRefusedError,
  VERSION,
  type VerikitClient,
} from '../src/index.node.js';
import { detailsPayload, fakeJwt } from './helpers/fixtures.js';
import { json, startServer, type TestServer } from './helpers/server.js';

const API_KEY = 'sk_test_0123456789abcdef';

// Every endpoint, through both transports: undici on Node, and fetch as on edge runtimes.
describe.each([
  ['undici', {}],
  ['fetch', { fetch: globalThis.fetch }],
] as const)('endpoints over %s', (_name, transportOptions: Partial<NodeClientOptions>) => {
  let server: TestServer;
  let client: VerikitClient;

  beforeAll(async () => {
    server = await startServer();
    client = createClient({ apiKey: API_KEY, baseUrl: server.url, maxRetries: 0, ...transportOptions });
  });
  afterEach(() => {
    server.requests.length = 0;
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  function expectCommonHeaders(index = 0): void {
    const headers = server.requests[index]!.headers;
    expect(headers['x-api-key']).toBe(API_KEY);
    expect(headers['user-agent']).toMatch(new RegExp(`^verikit/${VERSION.replace(/\./g, '\\.')} `));
    expect(headers['user-agent']).toContain(`(node/${process.versions.node})`);
  }

  it('kyb.createCase POSTs /kyb/case with refId, flow, country and country_state', async () => {
    server.handle(json(200, { kybCase: { _id: 'c1', refId: 'biz-1', status: 'NOT_STARTED', flow: 'f1' }, token: 'tok' }));
    const created = await client.kyb.createCase({ refId: 'biz-1', flow: 'f1', country: 'US', countryState: 'CA' });
    expect(created.kybCase).toEqual({ _id: 'c1', refId: 'biz-1', status: 'NOT_STARTED', flow: 'f1' });
    expect(created.token).toBe('tok');
    const [sent] = server.requests;
    expect(sent!.method).toBe('POST');
    expect(sent!.rawPath).toBe('/kyb/case');
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent!.body)).toEqual({ refId: 'biz-1', flow: 'f1', country: 'US', country_state: 'CA' });
    expectCommonHeaders();
  });

  it('kyb.createCase leaves out optional fields that were not given', async () => {
    server.handle(json(200, { kybCase: { _id: 'c1', refId: 'biz-1', status: 'NOT_STARTED', flow: 'f1' }, token: 'tok' }));
    await client.kyb.createCase({ refId: 'biz-1' });
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ refId: 'biz-1' });
  });

  it('kyb.getCase GETs /kyb/case/{refId}/details without a body and parses every documented part', async () => {
    server.handle(json(200, detailsPayload()));
    const details = await client.kyb.getCase('biz-1');
    const [sent] = server.requests;
    expect(sent!.method).toBe('GET');
    expect(sent!.rawPath).toBe('/kyb/case/biz-1/details');
    expect(sent!.body).toBe('');
    expect(sent!.headers['content-type']).toBeUndefined();
    expectCommonHeaders();
    expect(details.status).toBe('COMPLETED');
    expect(details.steps.map((s) => s.type)).toEqual(['form', 'address', 'document', 'ubo', 'relatedBusinesses']);
    expect(details.amlScreening.primary[0]!.businessRole).toBe('primary');
    expect(details.websiteAnalysis?.domain).toBe('acme.test');
    expect(details.reopenHistory[0]!.stepIds).toEqual(['s1']);
  });

  it('kyb.getDocumentUrl GETs the file url path and caches the signed URL', async () => {
    server.handle(json(200, { url: 'https://storage.test/doc_1?sig=abc', expiresIn: 300 }));
    const file = { url: '/kyb/documents/doc_1/url' };
    const first = await client.kyb.getDocumentUrl(file);
    const second = await client.kyb.getDocumentUrl(file);
    expect(first).toEqual({ url: 'https://storage.test/doc_1?sig=abc', expiresIn: 300 });
    expect(second).toEqual(first);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.method).toBe('GET');
    expect(server.requests[0]!.rawPath).toBe('/kyb/documents/doc_1/url');
    expectCommonHeaders();
  });

  it('kyb.getDocumentUrl fetches a fresh URL once the cached one has expired', async () => {
    server.handle(json(200, { url: 'https://storage.test/doc_9?sig=1', expiresIn: 0 }));
    const file = { url: '/kyb/documents/doc_9/url' };
    await client.kyb.getDocumentUrl(file);
    await client.kyb.getDocumentUrl(file);
    expect(server.requests).toHaveLength(2);
  });

  it('kyb.downloadDocument streams the file from the signed URL without the API key', async () => {
    const content = 'x'.repeat(100_000);
    server.handle(json(200, { url: `${server.url}/storage/doc_2?sig=1`, expiresIn: 300 }), (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(content.length) });
      res.end(content);
    });
    const download = await client.kyb.downloadDocument({ url: '/kyb/documents/doc_2/url' });
    expect(download.contentType).toBe('image/png');
    expect(download.contentLength).toBe(content.length);
    const text = await new Response(download.body).text();
    expect(text).toBe(content);
    expect(server.requests[1]!.rawPath).toBe('/storage/doc_2?sig=1');
    expect(server.requests[1]!.headers['x-api-key']).toBeUndefined();
  });

  it('a download cancelled unread ends quietly (no uncaught error from the stream)', async () => {
    // A small file, sent with its headers: it has arrived, unread, when the reader cancels.
    const file = '%PDF-1.4 '.repeat(100);
    server.handle(json(200, { url: `${server.url}/storage/doc_4`, expiresIn: 300 }), (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(file.length) }).end(file),
    );
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const download = await client.kyb.downloadDocument({ url: '/kyb/documents/doc_4/url' });
      await download.body.cancel();
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  });

  it('kyb.downloadDocument replaces a signed URL the storage refuses, once', async () => {
    server.handle(
      json(200, { url: `${server.url}/storage/old`, expiresIn: 300 }),
      json(403, { error: 'expired' }),
      json(200, { url: `${server.url}/storage/new`, expiresIn: 300 }),
      (_req, res) => res.end('fresh'),
    );
    const download = await client.kyb.downloadDocument({ url: '/kyb/documents/doc_3/url' });
    expect(await new Response(download.body).text()).toBe('fresh');
    expect(server.requests.map((r) => r.rawPath)).toEqual([
      '/kyb/documents/doc_3/url',
      '/storage/old',
      '/kyb/documents/doc_3/url',
      '/storage/new',
    ]);
  });

  it('a storage refusal is its own error, read only so far and so long, even when its body never ends', async () => {
    const endless = (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      const tick = setInterval(() => (res.destroyed ? clearInterval(tick) : res.write('refused '.repeat(4096))), 5);
    };
    server.handle(
      json(200, { url: `${server.url}/storage/a`, expiresIn: 300 }),
      endless,
      json(200, { url: `${server.url}/storage/b`, expiresIn: 300 }),
      (_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"SignatureDoesNotMatch"}'),
    );
    const short = createClient({ apiKey: 'sk_test', baseUrl: server.url, timeoutMs: 500, maxRetries: 0 });
    const started = Date.now();
    const error = await short.kyb.downloadDocument({ url: '/kyb/documents/doc_9/url' }).catch((e: unknown) => e);
    await short.close();
    expect(error).toBeInstanceOf(StorageRefusedError);
    expect(error).not.toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'storage_refused', status: 403, body: { error: 'SignatureDoesNotMatch' }, attempts: 2 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('kyb.listFlows and kyb.defaultFlows GET their paths and return the JSON as given', async () => {
    server.handle(json(200, [{ id: 'f1', title: 'EU' }]), json(200, { flows: ['f1'] }));
    expect(await client.kyb.listFlows()).toEqual([{ id: 'f1', title: 'EU' }]);
    expect(await client.kyb.defaultFlows()).toEqual({ flows: ['f1'] });
    expect(server.requests.map((r) => `${r.method} ${r.rawPath}`)).toEqual(['GET /kyb/flows', 'GET /kyb/flows/default']);
    expectCommonHeaders(1);
  });

  it('kyc.createSession POSTs /v2/sessions with refId and flowId', async () => {
    server.handle(json(200, { success: true, token: 'kyc-token' }));
    const session = await client.kyc.createSession({ refId: 'user-7', flowId: 'kf1' });
    expect(session).toEqual({ success: true, token: 'kyc-token' });
    const [sent] = server.requests;
    expect(`${sent!.method} ${sent!.rawPath}`).toBe('POST /v2/sessions');
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent!.body)).toEqual({ refId: 'user-7', flowId: 'kf1' });
    expectCommonHeaders();
  });

  it('kyc.createSession treats success: false as a typed failure', async () => {
    server.handle(json(200, { success: false, token: '' }));
    await expect(client.kyc.createSession({ refId: 'user-7' })).rejects.toMatchObject({
      code: 'unexpected_response',
      reason: 'unsuccessful',
    });
  });

  it('kyc.getResult GETs /v2/users/{refId} and keeps every field', async () => {
    server.handle(json(200, { status: 'SOMETHING_NEW', score: 0.9, checks: { selfie: 'ok' } }));
    const result = await client.kyc.getResult('user-7');
    expect(`${server.requests[0]!.method} ${server.requests[0]!.rawPath}`).toBe('GET /v2/users/user-7');
    expect(result).toEqual({ status: 'SOMETHING_NEW', score: 0.9, checks: { selfie: 'ok' } });
    expect(client.kyc.classify(result.status)).toBe('pending');
  });

  it.each([
    ['a/b', '/kyb/case/a%2Fb/details'],
    ['../admin', '/kyb/case/..%2Fadmin/details'],
    ['x?y=1', '/kyb/case/x%3Fy%3D1/details'],
    ['x#frag', '/kyb/case/x%23frag/details'],
    ['two words', '/kyb/case/two%20words/details'],
    ['Zoë-商店', '/kyb/case/Zo%C3%AB-%E5%95%86%E5%BA%97/details'],
  ])('refId %j reaches exactly its own path', async (refId, expectedPath) => {
    server.handle(json(200, detailsPayload({ refId })));
    await client.kyb.getCase(refId);
    expect(server.requests[0]!.rawPath).toBe(expectedPath);
    const segment = expectedPath.split('/')[3]!;
    expect(decodeURIComponent(segment)).toBe(refId);
  });

  it.each(['.', '..', ''])('refId %j is refused before anything is sent', async (refId) => {
    await expect(client.kyb.getCase(refId)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(client.kyc.getResult(refId)).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(server.requests).toHaveLength(0);
  });

  it('a refId with special characters also reaches the KYC result path', async () => {
    server.handle(json(200, { status: 'x' }));
    await client.kyc.getResult('../../kyb/flows?x#y');
    expect(server.requests[0]!.rawPath).toBe('/v2/users/..%2F..%2Fkyb%2Fflows%3Fx%23y');
  });

  it('verificationLink builds the hosted link with the token expiry', async () => {
    const linked = createClient({
      apiKey: API_KEY,
      baseUrl: server.url,
      webUrl: 'https://verify.test/start',
      publicKey: 'pk+1/=',
      environment: 'production',
      ...transportOptions,
    });
    const exp = Math.floor(Date.now() / 1000) + 86_400;
    const link = linked.verificationLink(fakeJwt(exp));
    const url = new URL(link.url);
    expect(url.origin + url.pathname).toBe('https://verify.test/start/');
    expect(url.searchParams.get('authToken')).toBe(fakeJwt(exp));
    expect(url.searchParams.get('publicKey')).toBe('pk+1/=');
    expect(url.searchParams.get('environment')).toBe('Production');
    expect(link.expiresAt?.getTime()).toBe(exp * 1000);
    await linked.close();
  });
});

describe('base URL with a path prefix', () => {
  it('prefixes every endpoint path and resolves document paths under it', async () => {
    const server = await startServer();
    const client = createClient({ apiKey: API_KEY, baseUrl: `${server.url}/api/`, maxRetries: 0 });
    server.handle(
      json(200, detailsPayload()),
      json(200, { url: 'https://s.test/x', expiresIn: 60 }),
      json(200, { url: 'https://s.test/y', expiresIn: 60 }),
    );
    await client.kyb.getCase('b1');
    await client.kyb.getDocumentUrl({ url: '/api/kyb/documents/d1/url' });
    await client.kyb.getDocumentUrl({ url: 'kyb/documents/d2/url' });
    expect(server.requests.map((r) => r.rawPath)).toEqual([
      '/api/kyb/case/b1/details',
      '/api/kyb/documents/d1/url',
      '/api/kyb/documents/d2/url',
    ]);
    await client.close();
    await server.close();
  });
});
