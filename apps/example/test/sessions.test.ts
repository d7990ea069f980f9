import { type FakeService, signWebhook, webhookEventFixture } from '@verikit/testing';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInTempFolder, type TestExample } from './support/example.js';
import { Visitor } from './support/visitor.js';

const OPERATOR_SECRET = 'operator-secret-for-tests-0123456789';
const HOUR = 60 * 60_000;
let clock = Date.now();
let running: TestExample;
let fake: FakeService;

beforeAll(async () => {
  running = await startInTempFolder({
    env: { VERIKIT_EXAMPLE_OPERATOR_SECRET: OPERATOR_SECRET, VERIKIT_EXAMPLE_TRUST_PROXY: 'loopback' },
    sessions: { now: () => clock },
  });
  fake = running.example.fake as FakeService;
});
afterAll(async () => {
  await running?.stop();
});

const visitor = () => new Visitor(running.example.url);
const signedIn = async (visitor: Visitor) => (await visitor.get('/dashboard')).status === 200;
/** What a browser sends with a form post made by a page of another site. */
const FROM_ANOTHER_SITE = { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' };

describe('cross-site requests (CSRF) are refused on every post that changes state', () => {
  it('a sign-in posted by another site is refused, and signs no one in (login CSRF)', async () => {
    const victim = visitor();
    const answer = await victim.post('/signin', { name: 'Mallory', business: 'Attacker Ltd' }, FROM_ANOTHER_SITE);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('This request came from another site');
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(await signedIn(victim)).toBe(false);
  });

  it.each([
    ['a sibling subdomain', { origin: 'http://evil.127.0.0.1.nip.io', 'sec-fetch-site': 'same-site' }],
    ['an older browser (Origin only)', { origin: 'http://attacker.example', 'sec-fetch-site': undefined }],
    ['a sandboxed frame (Origin: null)', { origin: 'null', 'sec-fetch-site': undefined }],
  ])('from %s too', async (_from, headers) => {
    const answer = await visitor().post('/signin', { name: 'Mallory', business: 'Attacker Ltd' }, headers);
    expect(answer.status).toBe(403);
    expect(answer.headers['set-cookie']).toBeUndefined();
  });

  it("sign-out, both invites and the operator's posts refuse another site too; the signed-in session is untouched", async () => {
    const person = visitor();
    await person.signIn('Victor Victim', 'Victim Ltd');
    const operator = visitor();
    await operator.post('/operations/signin', { secret: OPERATOR_SECRET });
    for (const [who, path, form] of [
      [person, '/verikit/invite/kyb', {}],
      [person, '/verikit/invite/kyc', {}],
      [person, '/signout', {}],
      [operator, '/operations/signin', { secret: OPERATOR_SECRET }],
      [operator, '/operations/dead-letters/msg_1/replay', {}],
      [operator, '/operations/signout', {}],
    ] as const) {
      const answer = await who.post(path, form, FROM_ANOTHER_SITE);
      expect([path, answer.status]).toEqual([path, 403]);
    }
    expect(await signedIn(person)).toBe(true);
    expect((await operator.get('/operations')).text).toContain('Signed in as the operator');
  });

  it("the same posts from the app's own pages work, and so does a client that is no browser page (no Origin, no Sec-Fetch-Site)", async () => {
    const person = visitor();
    await person.signIn('Olivia Own', 'Own Pages Ltd');
    expect((await person.post('/verikit/invite/kyb')).status).toBe(303);
    // An older browser: no Sec-Fetch-Site, an Origin of this very host.
    expect((await person.post('/verikit/invite/kyb', {}, { 'sec-fetch-site': undefined })).status).toBe(303);
    const script = await request(`${running.example.url}/verikit/invite/kyc`, {
      method: 'POST',
      headers: { accept: 'application/json', cookie: [...person.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    expect(script.statusCode).toBe(200);
    expect(((await script.body.json()) as { url: string }).url).toContain('authToken=');
  });

  it('the webhook route is not behind the check: a signed delivery is taken whatever Origin it carries', async () => {
    const person = visitor();
    await person.signIn('Wendy Webhook', 'Webhook Ltd');
    const refId = await person.startVerification('kyb');
    const { headers, body } = signWebhook({
      secret: fake.credentials.webhookSecret,
      payload: webhookEventFixture({ kind: 'kyb', refId, status: 'NOT_STARTED' }),
    });
    const answer = await request(`${running.example.url}/verikit/webhook`, {
      method: 'POST',
      headers: { ...headers, ...FROM_ANOTHER_SITE },
      body,
    });
    expect(answer.statusCode).toBe(204);
    await answer.body.dump();
  });
});

describe('the session cookie', () => {
  it('over HTTPS (a proxy that ends TLS, trusted by VERIKIT_EXAMPLE_TRUST_PROXY) it is __Host- and Secure', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const person = visitor();
    const answer = await person.post('/signin', { name: 'Sean Secure', business: 'TLS Ltd' }, https);
    expect(answer.status).toBe(303);
    const cookie = answer.headers['set-cookie'] as string;
    expect(cookie).toMatch(
      /^__Host-verikit_example_session=[\w-]+; Max-Age=43200; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect((await person.get('/dashboard', https)).status).toBe(200);
    // The same value under the plain name (as a plain-HTTP page could plant it) is not read over HTTPS.
    const value = person.cookies.get('__Host-verikit_example_session') as string;
    const planted = await request(`${running.example.url}/dashboard`, {
      headers: { ...https, cookie: `verikit_example_session=${value}` },
    });
    expect(planted.statusCode).toBe(303);
    await planted.body.dump();
  });

  it('over plain HTTP (a local run) it has the plain name and no Secure flag, as browsers require', async () => {
    const answer = await visitor().post('/signin', { name: 'Paul Plain', business: 'Loopback Ltd' });
    expect(answer.headers['set-cookie']).toMatch(
      /^verikit_example_session=[\w-]+; Max-Age=43200; Path=\/; Expires=[^;]+; HttpOnly; SameSite=Lax$/,
    );
  });
});

describe('sessions end on the server', () => {
  it('after an hour unused, even when the browser still sends the cookie', async () => {
    const person = visitor();
    await person.signIn('Ivy Idle', 'Idle Ltd');
    clock += 59 * 60_000;
    expect(await signedIn(person)).toBe(true);
    clock += 59 * 60_000; // used a minute before its hour ran out: still alive
    expect(await signedIn(person)).toBe(true);
    clock += HOUR + 60_000;
    expect(await signedIn(person)).toBe(false);
    expect((await person.get('/dashboard')).headers.location).toBe('/');
  });

  it('twelve hours after sign-in at the latest, however busy', async () => {
    const person = visitor();
    await person.signIn('Bea Busy', 'Busy Ltd');
    for (let hours = 0; hours < 11; hours++) {
      clock += HOUR - 60_000;
      expect(await signedIn(person)).toBe(true);
    }
    clock += 2 * HOUR;
    expect(await signedIn(person)).toBe(false);
  });

  it('sign-out ends it on the server: the old cookie, sent again, signs no one in', async () => {
    const person = visitor();
    await person.signIn('Sol Signout', 'Gone Ltd');
    const cookie = [...person.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await person.post('/signout');
    const again = await request(`${running.example.url}/dashboard`, { headers: { cookie } });
    expect(again.statusCode).toBe(303);
    await again.body.dump();
  });
});
