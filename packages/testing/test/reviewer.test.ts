import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type VerikitClient } from '@verikit/core';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../../test-support/chromium.js';
import { createFakeService, type FakeService } from '../src/index.js';
import { startReceiver } from './helpers.js';

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

async function start(): Promise<{ fake: FakeService; client: VerikitClient }> {
  const fake = await createFakeService({ webhooks: { retrySchedule: [0, 20] } });
  const client = createClient({ ...fake.clientOptions, maxRetries: 0 });
  opened.push(async () => {
    await client.close();
    await fake.close();
  });
  return { fake, client };
}

/** Signs in to the console over plain HTTP: the token link once, then the cookie it set. */
async function signIn(fake: FakeService): Promise<string> {
  const answer = await fetch(fake.reviewerUrl, { redirect: 'manual' });
  expect(answer.status).toBe(303);
  expect(answer.headers.get('location')).toBe('/reviewer');
  const cookie = answer.headers.get('set-cookie') ?? '';
  expect(cookie).toMatch(/^verikit_reviewer=[^;]+; Path=\/reviewer; HttpOnly; SameSite=Strict$/);
  return cookie.split(';')[0] as string;
}

const consolePage = async (fake: FakeService, cookie: string) => {
  const page = await fetch(`${fake.baseUrl}/reviewer`, { headers: { cookie } });
  return { status: page.status, headers: page.headers, html: await page.text() };
};
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** Posts a console form over HTTP as the console's own page would (same origin), with `headers` to play another one. */
const act = (fake: FakeService, cookie: string | undefined, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${fake.baseUrl}/reviewer/action`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: fake.baseUrl, ...(cookie ? { cookie } : {}), ...headers },
    body: new URLSearchParams(form),
    redirect: 'manual',
  });

describe('the reviewer console over HTTP', () => {
  it('opens only with its token, which it moves into an HttpOnly SameSite=Strict cookie; shows no API key', async () => {
    const { fake, client } = await start();
    await client.kyb.createCase({ refId: 'biz-<1>' });
    await client.kyc.createSession({ refId: 'person-1' });
    expect((await fetch(`${fake.baseUrl}/reviewer`)).status).toBe(401);
    const wrong = await fetch(`${fake.baseUrl}/reviewer?token=rvw_wrong`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    // The API key is not the console's secret.
    expect((await fetch(`${fake.baseUrl}/reviewer?token=${fake.credentials.apiKey}`, { redirect: 'manual' })).status).toBe(401);
    const cookie = await signIn(fake);
    const { status, headers, html } = await consolePage(fake, cookie);
    expect(status).toBe(200);
    expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('cache-control')).toBe('no-store');
    expect(html).toContain('data-ref="biz-&#60;1&#62;"');
    expect(html).toContain('data-ref="person-1"');
    for (const secret of [fake.credentials.apiKey, fake.credentials.webhookSecret, fake.credentials.reviewerToken])
      expect(html).not.toContain(secret);
    // Another organization's console lists only its own.
    const org = fake.addOrganization();
    const theirs = await fetch(`${fake.baseUrl}/reviewer?token=${encodeURIComponent(org.reviewerToken)}`, { redirect: 'manual' });
    const other = await consolePage(fake, (theirs.headers.get('set-cookie') ?? '').split(';')[0] as string);
    expect(other.html).not.toContain('person-1');
  });

  it('decides a case left in review, overturns, reopens a step and switches webhooks: each a version and a webhook', async () => {
    const { fake, client } = await start();
    const receiver = await startReceiver({ secret: fake.credentials.webhookSecret });
    opened.push(receiver.close);
    fake.webhooks.addEndpoint(receiver.url);
    await client.kyb.createCase({ refId: 'biz' });
    fake.kyb.submit('biz');
    fake.kyb.setStatus('biz', 'IN_REVIEW');
    await client.kyc.createSession({ refId: 'person' });
    fake.kyc.setStatus('person', 'IN_REVIEW');
    const cookie = await signIn(fake);
    const csrf = csrfOf((await consolePage(fake, cookie)).html);
    const ok = async (form: Record<string, string>) => expect((await act(fake, cookie, { csrf, ...form })).status).toBe(303);

    await ok({ do: 'decide:COMPLETED', kind: 'kyb', refId: 'biz', reason: 'All documents match' });
    await ok({ do: 'decide:REJECTED', kind: 'kyb', refId: 'biz', reason: 'A sanctions hit' });
    await ok({ do: 'reopen', kind: 'kyb', refId: 'biz', stepId: 'step_documents', reason: 'A newer statement' });
    await ok({ do: 'decide:APPROVED', kind: 'kyc', refId: 'person' });
    await ok({ do: 'decide:REJECTED', kind: 'kyc', refId: 'person', reason: 'Document forged' });
    expect(fake.kyb.history('biz').map((h) => [h.change, h.status, h.reason])).toEqual([
      ['created', 'NOT_STARTED', undefined],
      ['submitted', 'NOT_STARTED', undefined],
      ['status', 'IN_REVIEW', undefined],
      ['decided', 'COMPLETED', 'All documents match'],
      ['overturned', 'REJECTED', 'A sanctions hit'],
      ['reopened', 'IN_PROGRESS', 'A newer statement'],
    ]);
    expect((await client.kyb.getCase('biz')).reopenHistory).toMatchObject([{ stepIds: ['step_documents'], reason: 'A newer statement' }]);
    expect(await client.kyc.getResult('person')).toMatchObject({ status: 'REJECTED', reason: 'Document forged' });
    await fake.webhooks.settle();
    expect(receiver.events).toHaveLength(8);

    await ok({ do: 'webhooks-down' });
    expect((await consolePage(fake, cookie)).html).toContain('data-webhooks="off"');
    fake.kyc.decide('person', 'APPROVED');
    await fake.webhooks.settle();
    expect(fake.webhooks.messages.at(-1)?.state).toBe('failed');
    await ok({ do: 'webhooks-up' });
    expect((await consolePage(fake, cookie)).html).toContain('data-webhooks="on"');
  });

  it('refuses forms from elsewhere: no cookie, no or a wrong token, another origin (the same site included), a cross-site fetch', async () => {
    const { fake, client } = await start();
    await client.kyb.createCase({ refId: 'target' });
    fake.kyb.setStatus('target', 'IN_REVIEW');
    const cookie = await signIn(fake);
    const csrf = csrfOf((await consolePage(fake, cookie)).html);
    const form = { do: 'decide:REJECTED', kind: 'kyb', refId: 'target' };
    expect((await act(fake, undefined, { csrf, ...form })).status).toBe(401);
    expect((await act(fake, cookie, form)).status).toBe(403);
    expect((await act(fake, cookie, { csrf: `${csrf}x`, ...form })).status).toBe(403);
    // 127.0.0.1 on another port is the same site (the cookie goes along) but another origin.
    expect((await act(fake, cookie, { csrf, ...form }, { origin: 'http://127.0.0.1:1' })).status).toBe(403);
    expect((await act(fake, cookie, { csrf, ...form }, { origin: 'null' })).status).toBe(403);
    expect((await act(fake, cookie, { csrf, ...form }, { 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect(fake.kyb.history('target')).toHaveLength(2);
    // Another organization's console cannot reach this organization's case.
    const org = fake.addOrganization();
    const theirs = (
      (await fetch(`${fake.baseUrl}/reviewer?token=${encodeURIComponent(org.reviewerToken)}`, { redirect: 'manual' })).headers.get(
        'set-cookie',
      ) ?? ''
    ).split(';')[0] as string;
    const theirCsrf = csrfOf((await consolePage(fake, theirs)).html);
    const foreign = await act(fake, theirs, { csrf: theirCsrf, ...form });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain('no KYB case with refId');
    expect(fake.kyb.get('target').status).toBe('IN_REVIEW');
    // Bad input gets a 400 page, not a crash.
    expect((await act(fake, cookie, { csrf, do: 'decide:IN_PROGRESS', kind: 'kyb', refId: 'target' })).status).toBe(400);
    expect((await act(fake, cookie, { csrf, do: 'reopen', kind: 'kyb', refId: 'target' })).status).toBe(400);
  });
});

describe('the reviewer console in Chromium', () => {
  let browser: Browser;
  let foreign: Server;
  let foreignUrl = '';
  let forged = '';

  beforeAll(async () => {
    browser = await launchChromium(chromium);
    // Another origin on the same host (so the same site): a page that posts a forged form to the console.
    foreign = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(forged);
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => foreign?.close(resolve));
  });

  const row = (page: Page, kind: string, refId: string) => page.locator(`tr[data-kind="${kind}"][data-ref="${refId}"]`);

  it('a case sent for review on the hosted page is finished in the console; webhooks go off and on; a forged form is refused', async () => {
    const { fake, client } = await start();
    const context = await browser.newContext();
    opened.push(() => context.close());
    const page = await context.newPage();

    // The business's side: "Send for review", which only a reviewer can finish.
    const { token } = await client.kyb.createCase({ refId: 'acme' });
    await page.goto(client.verificationLink(token).url);
    await page.click('button[data-decision="review"]');
    await page.waitForSelector('#done');
    expect((await client.kyb.getCase('acme')).status).toBe('IN_REVIEW');

    // The reviewer's side: the link once, then the cookie; the token leaves the address bar.
    await page.goto(fake.reviewerUrl);
    expect(page.url()).toBe(`${fake.baseUrl}/reviewer`);
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'verikit_reviewer')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/reviewer' });
    expect(await row(page, 'kyb', 'acme').locator('[data-status]').textContent()).toBe('IN_REVIEW');
    await row(page, 'kyb', 'acme').locator('input[name="reason"]').fill('Documents verified');
    await row(page, 'kyb', 'acme').locator('button[data-action="decide:COMPLETED"]').click();
    await page.waitForURL(`${fake.baseUrl}/reviewer`);
    expect(await row(page, 'kyb', 'acme').locator('[data-status]').textContent()).toBe('COMPLETED');
    expect(await client.kyb.getCase('acme')).toMatchObject({ status: 'COMPLETED' });
    expect(fake.kyb.history('acme').at(-1)).toMatchObject({ change: 'decided', reason: 'Documents verified' });

    // Overturn, then reopen a step.
    await row(page, 'kyb', 'acme').locator('button[data-action="decide:REJECTED"]').click();
    await page.waitForSelector('tr[data-ref="acme"] [data-status]:text-is("REJECTED")');
    await row(page, 'kyb', 'acme').locator('select[name="stepId"]').selectOption('step_documents');
    await row(page, 'kyb', 'acme').locator('button[data-action="reopen"]').click();
    await page.waitForSelector('tr[data-ref="acme"] [data-status]:text-is("IN_PROGRESS")');
    expect(fake.kyb.history('acme').map((h) => h.change)).toEqual(['created', 'status', 'submitted', 'decided', 'overturned', 'reopened']);
    await row(page, 'kyb', 'acme').locator('summary').click();
    expect(await row(page, 'kyb', 'acme').locator('li[data-version]').count()).toBe(6);

    // Webhooks off and on.
    await page.click('button[data-action="webhooks-down"]');
    await page.waitForSelector('[data-webhooks="off"]');
    await page.click('button[data-action="webhooks-up"]');
    await page.waitForSelector('[data-webhooks="on"]');

    // A page of another origin on the same site, in the same browser (the cookie goes along), posts a forged form.
    const csrf = (await page.getAttribute('input[name="csrf"] >> nth=0', 'value')) as string;
    forged = `<form method="post" action="${fake.baseUrl}/reviewer/action"><input name="csrf" value="${csrf}"><input name="do" value="decide:COMPLETED"><input name="kind" value="kyb"><input name="refId" value="acme"></form><script>document.forms[0].submit()</script>`;
    const attack = await context.newPage();
    const refused = attack.waitForResponse((r) => r.url() === `${fake.baseUrl}/reviewer/action`);
    await attack.goto(foreignUrl);
    expect((await refused).status()).toBe(403);
    expect(fake.kyb.get('acme').status).toBe('IN_PROGRESS');
  }, 60_000);
});
