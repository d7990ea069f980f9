import {
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  collectDocumentFiles,
  createClient,
  createWebhookVerifier,
  type KybDocumentStep,
  NotFoundError,
  RateLimitError,
  readTokenExpiry,
  ServerError,
  UnexpectedResponseError,
  type VerikitClient,
} from '@verikit/core';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../../../test-support/raw-http.js';
import { createFakeService, type FakeService } from '../src/index.js';
import { startReceiver } from './helpers.js';

let fake: FakeService;
let client: VerikitClient;
const fastRetries = { retrySchedule: [0, 20, 40, 80, 160] };

beforeAll(async () => {
  fake = await createFakeService({ webhooks: fastRetries });
  client = createClient({ ...fake.clientOptions, maxRetries: 0, kycStatuses: { approved: ['APPROVED'], rejected: ['REJECTED'] } });
});
afterEach(() => fake.faults.clear());
afterAll(async () => {
  await client.close();
  await fake.close();
});

const rawPost = (path: string, body: unknown, apiKey = fake.credentials.apiKey) =>
  fetch(`${fake.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify(body),
  });

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type ReceiverOptions = Parameters<typeof startReceiver>[0];

/** Runs `body` with receivers registered as the fake's endpoints, unregistering and closing them after. */
async function withReceivers<const O extends readonly ReceiverOptions[]>(
  options: O,
  body: (receivers: { [K in keyof O]: Receiver }) => Promise<void>,
): Promise<void> {
  const receivers = await Promise.all(options.map((o) => startReceiver(o)));
  for (const r of receivers) fake.webhooks.addEndpoint(r.url);
  try {
    await body(receivers as { [K in keyof O]: Receiver });
  } finally {
    for (const r of receivers) fake.webhooks.removeEndpoint(r.url);
    await Promise.all(receivers.map((r) => r.close()));
  }
}

/** Opens a hosted link and presses a button, as a person would, over plain HTTP. */
async function decide(link: string, decision: 'approve' | 'reject' | 'review', businessName?: string): Promise<string> {
  const page = await fetch(link);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(`data-decision="${decision}"`);
  const url = new URL(link);
  const form = new URLSearchParams({
    authToken: url.searchParams.get('authToken')!,
    publicKey: url.searchParams.get('publicKey')!,
    environment: url.searchParams.get('environment')!,
    decision,
  });
  if (businessName) form.set('businessName', businessName);
  const posted = await fetch(`${fake.webUrl}/decision`, { method: 'POST', body: form, redirect: 'manual' });
  expect(posted.status).toBe(303);
  const after = await fetch(new URL(posted.headers.get('location')!, fake.baseUrl));
  return after.text();
}

describe('the core client against the fake: every endpoint', () => {
  it('KYB lifecycle: create case, link, portal approval, signed webhook, details read', async () => {
    await withReceivers([{ secret: fake.credentials.webhookSecret, client }], async ([receiver]) => {
      const created = await client.kyb.createCase({ refId: 'acme-1', country: 'GB', countryState: 'LND' });
      expect(created.kybCase).toMatchObject({ refId: 'acme-1', status: 'NOT_STARTED', flow: 'flow_kyb_standard' });
      const hoursValid = ((readTokenExpiry(created.token)?.getTime() ?? 0) - Date.now()) / 3_600_000;
      expect(hoursValid).toBeGreaterThan(23.9);
      expect(hoursValid).toBeLessThanOrEqual(24);
      const link = client.verificationLink(created.token);
      const finalPage = await decide(link.url, 'approve', 'Acme Trading Ltd');
      expect(finalPage).toContain('COMPLETED');
      await fake.webhooks.settle();
      // NOT_STARTED -> IN_PROGRESS (portal opened) -> COMPLETED, each a verified, handled delivery.
      expect(receiver.events.map((e) => (e.event as { data: { status: string } }).data.status)).toEqual(['IN_PROGRESS', 'COMPLETED']);
      const fetched = await receiver.events[1]!.fetchResult();
      expect(fetched.kind).toBe('kyb');
      const details = await client.kyb.getCase('acme-1');
      expect(details).toMatchObject({ refId: 'acme-1', status: 'COMPLETED', businessName: 'Acme Trading Ltd', flow: { country: 'GB' } });
      expect(details.steps.map((s) => s.type)).toEqual(['form', 'address', 'document', 'ubo', 'relatedBusinesses']);
      // Spec 2.7: businessRole is `primary` or `related`, and each list holds its own role (the owner is screened as related).
      expect(details.amlScreening.primary.map((a) => a.businessRole)).toEqual(['primary']);
      expect(details.amlScreening.related.map((a) => a.businessRole)).toEqual(['related', 'related']);
      expect(details.websiteAnalysis?.domain).toBe('acme-trading-ltd.test');
      const files = collectDocumentFiles(details.steps.find((s) => s.type === 'document') as KybDocumentStep);
      expect(files).toHaveLength(2);
      const download = await client.kyb.downloadDocument(files[0]!);
      expect(download.contentType).toBe('application/pdf');
      const pdf = Buffer.from(await new Response(download.body).arrayBuffer());
      expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
      expect(pdf.toString('latin1')).toContain('(Company name: Acme Trading Ltd)');
      expect(pdf.length).toBe(files[0]!.size);
    });
  });

  it('KYC lifecycle: session, link, result (approve and reject)', async () => {
    for (const [refId, decision, expected] of [
      ['person-1', 'approve', 'approved'],
      ['person-2', 'reject', 'rejected'],
    ] as const) {
      const session = await client.kyc.createSession({ refId });
      expect(session.success).toBe(true);
      const minutesValid = ((readTokenExpiry(session.token)?.getTime() ?? 0) - Date.now()) / 60_000;
      expect(minutesValid).toBeGreaterThan(29.9);
      expect(client.kyc.classify((await client.kyc.getResult(refId)).status)).toBe('pending');
      await decide(client.verificationLink(session.token).url, decision);
      expect(client.kyc.classify((await client.kyc.getResult(refId)).status)).toBe(expected);
    }
  });

  it('flows and default flows', async () => {
    expect(await client.kyb.listFlows()).toEqual([
      { id: 'flow_kyb_standard', title: 'Standard KYB', country: 'GB' },
      { id: 'flow_kyb_us', title: 'US KYB', country: 'US' },
    ]);
    expect(await client.kyb.defaultFlows()).toEqual([{ id: 'flow_kyb_standard', title: 'Standard KYB', country: 'GB' }]);
  });

  it('a flow the organization does not have -> 404', async () => {
    await expect(client.kyb.createCase({ refId: 'x', flow: 'flow_nope' })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('unknown refIds -> 404 on KYB details and KYC results', async () => {
    await expect(client.kyb.getCase('nobody')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.kyc.getResult('nobody')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refIds with /, ?, #, spaces and unicode round-trip', async () => {
    const refId = 'a/b?c#d e-Zoë-商店';
    await client.kyb.createCase({ refId });
    expect((await client.kyb.getCase(refId)).refId).toBe(refId);
  });

  it('a wrong API key -> 401 on KYB and KYC; the public key as API key -> 403 on KYC', async () => {
    const wrong = createClient({ apiKey: 'sk_wrong', baseUrl: fake.baseUrl, maxRetries: 0 });
    await expect(wrong.kyb.getCase('acme-1')).rejects.toMatchObject({ status: 401 });
    await expect(wrong.kyc.getResult('person-1')).rejects.toMatchObject({ status: 401 });
    const publicAsKey = createClient({ apiKey: fake.credentials.publicKey, baseUrl: fake.baseUrl, maxRetries: 0 });
    await expect(publicAsKey.kyc.createSession({ refId: 'p' })).rejects.toMatchObject({ status: 403 });
    await Promise.all([wrong.close(), publicAsKey.close()]);
    const missing = await fetch(`${fake.baseUrl}/kyb/flows`);
    expect(missing.status).toBe(401);
  });

  it('an organization without KYC -> 403 on KYC calls', async () => {
    const org = fake.addOrganization({ kycEnabled: false });
    const other = createClient({ apiKey: org.apiKey, baseUrl: fake.baseUrl, maxRetries: 0 });
    const error = await other.kyc.createSession({ refId: 'p' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).status).toBe(403);
    await other.close();
  });

  it('cases are scoped to the API key organization', async () => {
    const org = fake.addOrganization();
    const other = createClient({ apiKey: org.apiKey, baseUrl: fake.baseUrl, maxRetries: 0 });
    await client.kyb.createCase({ refId: 'scoped-1' });
    await expect(other.kyb.getCase('scoped-1')).rejects.toBeInstanceOf(NotFoundError);
    await other.kyb.createCase({ refId: 'scoped-1' });
    expect((await other.kyb.getCase('scoped-1')).id).not.toBe((await client.kyb.getCase('scoped-1')).id);
    const doc = collectDocumentFiles(fake.kyb.submit('scoped-1').steps[2] as KybDocumentStep)[0]!;
    await expect(other.kyb.getDocumentUrl(doc)).rejects.toBeInstanceOf(NotFoundError);
    await other.close();
  });

  it('bodies the spec does not accept -> 400 (a business name, prefilled data, a bad type)', async () => {
    for (const body of [{ refId: 'b', businessName: 'Acme' }, { refId: 'b', formData: {} }, { refId: 42 }, {}, []]) {
      expect((await rawPost('/kyb/case', body)).status).toBe(400);
    }
    expect((await rawPost('/v2/sessions', { refId: 'p', name: 'Jane' })).status).toBe(400);
    const notJson = await fetch(`${fake.baseUrl}/kyb/case`, {
      method: 'POST',
      headers: { 'x-api-key': fake.credentials.apiKey },
      body: '{oops',
    });
    expect(notJson.status).toBe(400);
  });

  it('signed document URLs expire and are then refused', async () => {
    const short = await createFakeService({ signedUrlTtlSeconds: 1 });
    try {
      const c = createClient({ apiKey: short.credentials.apiKey, baseUrl: short.baseUrl, maxRetries: 0 });
      await c.kyb.createCase({ refId: 'docs' });
      const file = collectDocumentFiles(short.kyb.submit('docs').steps[2] as KybDocumentStep)[0]!;
      const signed = await c.kyb.getDocumentUrl(file);
      expect(signed.expiresIn).toBe(1);
      expect((await fetch(signed.url)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      expect((await fetch(signed.url)).status).toBe(403);
      const tampered = new URL(signed.url);
      tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 3600));
      expect((await fetch(tampered)).status).toBe(403);
      // The client replaces a refused URL by itself.
      const download = await c.kyb.downloadDocument(file);
      expect((await new Response(download.body).arrayBuffer()).byteLength).toBe(file.size);
      await c.close();
    } finally {
      await short.close();
    }
  });

  it('reopening steps records history, moves the case back to IN_PROGRESS and notifies', async () => {
    await client.kyb.createCase({ refId: 'reopen-1' });
    fake.kyb.submit('reopen-1');
    fake.kyb.setStatus('reopen-1', 'COMPLETED');
    fake.kyb.reopen('reopen-1', ['step_company'], 'Wrong registration number');
    const details = await client.kyb.getCase('reopen-1');
    expect(details.status).toBe('IN_PROGRESS');
    expect(details.reopenHistory).toEqual([
      { stepIds: ['step_company'], reason: 'Wrong registration number', reopenedAt: expect.any(String) },
    ]);
  });
});

describe('webhook delivery', () => {
  it('deliveries are Svix-signed: core verifies them; retried until a 2xx, attempts recorded', async () => {
    await withReceivers([{ secret: fake.credentials.webhookSecret, failFirst: 2 }], async ([receiver]) => {
      await client.kyb.createCase({ refId: 'hooks-1' });
      fake.kyb.setStatus('hooks-1', 'IN_REVIEW');
      await fake.webhooks.settle();
      const attempts = fake.webhooks.attempts.filter((a) => a.endpoint === receiver.url);
      expect(attempts.map((a) => a.status)).toEqual([500, 500, 204]);
      expect(new Set(attempts.map((a) => a.messageId)).size).toBe(1);
      expect(receiver.events).toHaveLength(1);
      const verifier = createWebhookVerifier({ secrets: fake.credentials.webhookSecret });
      for (const { headers, body } of receiver.raw)
        await expect(verifier.verify(headers, body)).resolves.toMatchObject({ id: attempts[0]!.messageId });
      expect(receiver.events[0]!.event).toMatchObject({
        type: 'kyb.case.status_changed',
        data: { refId: 'hooks-1', status: 'IN_REVIEW', previousStatus: 'NOT_STARTED' },
      });
    });
  });

  it('a delivery that never succeeds is given up after the schedule', async () => {
    await withReceivers([{ secret: fake.credentials.webhookSecret, failFirst: 100 }], async ([receiver]) => {
      await client.kyb.createCase({ refId: 'hooks-2' });
      fake.kyb.setStatus('hooks-2', 'IN_REVIEW');
      await fake.webhooks.settle();
      expect(fake.webhooks.attempts.filter((a) => a.endpoint === receiver.url)).toHaveLength(fastRetries.retrySchedule.length);
      expect(fake.webhooks.messages.find((m) => m.endpoint === receiver.url)?.state).toBe('failed');
    });
  });

  it('a settle() that times out lists what the receiver answered each pending delivery', async () => {
    // A receiver with another secret answers every attempt 400, as a misconfigured app would.
    const receiver = await startReceiver({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    const slow = await createFakeService({ webhooks: { endpoints: [receiver.url], retrySchedule: [0, 0, 60_000] } });
    try {
      await createClient({ ...slow.clientOptions, maxRetries: 0 }).kyb.createCase({ refId: 'settle-1' });
      slow.kyb.setStatus('settle-1', 'IN_REVIEW');
      const error = await slow.webhooks.settle(300).catch((e: Error) => e);
      expect(String(error)).toMatch(
        /1 webhook deliveries still pending after 300 ms; answers so far:\n {2}msg_\S+ -> http:\/\/\S+: 400, 400$/,
      );
    } finally {
      await slow.close();
      await receiver.close();
    }
  });

  it('during a secret rotation both the old and the new secret verify; after it, only the new', async () => {
    const oldSecret = fake.credentials.webhookSecret;
    const newSecret = fake.webhooks.rotateSecret();
    await withReceivers([{ secret: oldSecret }, { secret: newSecret }], async ([oldReceiver, newReceiver]) => {
      await client.kyb.createCase({ refId: 'rotate-1' });
      fake.kyb.setStatus('rotate-1', 'IN_PROGRESS');
      await fake.webhooks.settle();
      expect(oldReceiver.raw[0]!.headers['svix-signature']).toMatch(/^v1,\S+ v1,\S+$/);
      expect([oldReceiver.events.length, newReceiver.events.length]).toEqual([1, 1]);
      fake.webhooks.endRotation();
      fake.kyb.setStatus('rotate-1', 'IN_REVIEW');
      await fake.webhooks.settle();
      expect(newReceiver.events).toHaveLength(2);
      expect(oldReceiver.events).toHaveLength(1);
    });
  });
});

describe('fault injection', () => {
  it('latency', async () => {
    fake.faults.inject('kyb.flows', { kind: 'latency', ms: 300 }, { times: 1 });
    const slow = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl, timeoutMs: 100, maxRetries: 0 });
    await expect(slow.kyb.listFlows()).rejects.toMatchObject({ code: 'timeout' });
    await expect(slow.kyb.listFlows()).resolves.toBeDefined();
    await slow.close();
  });

  it('429 with Retry-After, 500 and 503', async () => {
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 429, retryAfter: '7' }, { times: 1 });
    const limited = await client.kyb.getCase('acme-1').catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfterMs).toBe(7000);
    fake.faults.inject('kyc.getResult', { kind: 'status', status: 500 }, { times: 1 });
    await expect(client.kyc.getResult('person-1')).rejects.toBeInstanceOf(ServerError);
    fake.faults.inject('kyb.createCase', { kind: 'status', status: 503 }, { times: 1 });
    await expect(client.kyb.createCase({ refId: 'f' })).rejects.toMatchObject({ status: 503 });
  });

  it('a retrying client rides out a transient 503', async () => {
    const retrying = createClient({
      apiKey: fake.credentials.apiKey,
      baseUrl: fake.baseUrl,
      maxRetries: 2,
      backoff: { baseMs: 1, maxMs: 5 },
    });
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 503 }, { times: 2 });
    await expect(retrying.kyb.getCase('acme-1')).resolves.toMatchObject({ refId: 'acme-1' });
    await retrying.close();
  });

  it('connection reset', async () => {
    fake.faults.inject('kyc.createSession', { kind: 'reset' }, { times: 1 });
    await expect(client.kyc.createSession({ refId: 'reset-1' })).rejects.toBeInstanceOf(ConnectionError);
  });

  it('malformed JSON and a response that breaks the documented shape', async () => {
    fake.faults.inject('kyb.getCase', { kind: 'malformed-json' }, { times: 1 });
    await expect(client.kyb.getCase('acme-1')).rejects.toMatchObject({ reason: 'invalid_json' });
    fake.faults.inject('kyb.getCase', { kind: 'wrong-shape' }, { times: 1 });
    const error = await client.kyb.getCase('acme-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as UnexpectedResponseError).issues.map((i) => i.path)).toContain('refId');
  });

  it('faults on document URLs and storage downloads', async () => {
    const file = collectDocumentFiles((await client.kyb.getCase('acme-1')).steps[2] as KybDocumentStep)[0]!;
    fake.faults.inject('storage.download', { kind: 'status', status: 500 });
    // Storage is not the API: its failures are StorageRefusedError, whatever the status.
    await expect(client.kyb.downloadDocument(file)).rejects.toMatchObject({ name: 'StorageRefusedError', status: 500 });
    fake.faults.clear('storage.download');
    fake.faults.inject('kyb.documentUrl', { kind: 'status', status: 400 }, { times: 1 });
    await expect(client.kyb.getDocumentUrl({ url: '/kyb/documents/other/url' })).rejects.toBeInstanceOf(BadRequestError);
  });
});

describe('the hosted page over plain HTTP', () => {
  it('refuses a bad token, a wrong public key and another environment', async () => {
    const { token } = await client.kyb.createCase({ refId: 'page-1' });
    const link = new URL(client.verificationLink(token).url);
    const variant = (change: (u: URL) => void) => {
      const u = new URL(link);
      change(u);
      return fetch(u);
    };
    expect((await variant((u) => u.searchParams.set('authToken', `${token}x`))).status).toBe(401);
    expect((await variant((u) => u.searchParams.delete('authToken'))).status).toBe(401);
    expect((await variant((u) => u.searchParams.set('publicKey', 'pk_other'))).status).toBe(403);
    expect((await variant((u) => u.searchParams.set('environment', 'Production'))).status).toBe(403);
    expect((await variant((u) => u.searchParams.set('environment', 'production'))).status).toBe(403);
    // What verikit-fake prints as VERIKIT_ENVIRONMENT (the SDK's spelling), put into a link by hand: the same environment.
    expect((await variant((u) => u.searchParams.set('environment', fake.clientOptions.environment))).status).toBe(200);
    const page = await fetch(link);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).toContain('Verify your business');
  });

  it('send for review moves the case to IN_REVIEW', async () => {
    const { token } = await client.kyb.createCase({ refId: 'page-2' });
    await decide(client.verificationLink(token).url, 'review');
    expect((await client.kyb.getCase('page-2')).status).toBe('IN_REVIEW');
  });

  it('reject moves the case to REJECTED', async () => {
    const { token } = await client.kyb.createCase({ refId: 'page-3' });
    await decide(client.verificationLink(token).url, 'reject');
    expect((await client.kyb.getCase('page-3')).status).toBe('REJECTED');
  });
});

describe('the HTTP surface never crashes', () => {
  it('hostile request lines each get a 4xx, and the fake keeps serving (fast-check)', async () => {
    const hostile = await createFakeService();
    const known = [
      '//',
      '///',
      '//x:y',
      '//[::',
      '/\\',
      '/%',
      '/%zz',
      '*',
      'http://x',
      'http://[::1',
      '//hosted',
      '/hosted//',
      '/hosted/?authToken=%',
      '/kyb/case/%E0%A4%A/details',
      '/kyb/case//details',
      '/v2/users/%C0%AF',
      '/storage/%ff?expires=x&signature=y',
      '/kyb/documents/%2e%2e/url',
    ];
    const piece = fc.constantFrom(
      '/',
      '//',
      '%',
      '%2F',
      '%zz',
      ':',
      '@',
      '[',
      ']',
      '?',
      '#',
      '.',
      '..',
      'kyb',
      'case',
      'hosted',
      'v2',
      'users',
      'storage',
      'x',
    );
    const target = fc.oneof(
      fc.constantFrom(...known),
      fc.array(piece, { maxLength: 12 }).map((parts) => `/${parts.join('')}`),
      fc.stringMatching(/^\/[\x21-\x7e]{0,40}$/),
    );
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD', 'BREW');
    await fc.assert(
      fc.asyncProperty(method, target, async (m, t) => {
        const outcome = await rawExchange(hostile.baseUrl, `${m} ${t} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`, {
          chunk: () => undefined,
          maxBytes: 0,
        });
        expect(outcome.status).toBeGreaterThanOrEqual(400);
        expect(outcome.status).toBeLessThan(500);
      }),
      { numRuns: 400 },
    );
    const client = createClient({ ...hostile.clientOptions, maxRetries: 0 });
    await expect(client.kyb.listFlows()).resolves.toBeDefined();
    await client.close();
    await hostile.close();
  }, 60_000);

  it('a webhook secret the SDK would refuse is refused at start, with the SDK rule and the option named', async () => {
    await expect(createFakeService({ organization: { webhookSecret: 'whsec_bad' } })).rejects.toThrow(
      'organization.webhookSecret is not whsec_ followed by base64',
    );
    await expect(createFakeService({ organization: { webhookSecret: 'whsec_AA==' } })).rejects.toThrow(/too short/);
  });
});
