import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/readme-snippet.js';
import { type RunningExample, type StartOptions, startExample } from '../src/start.js';
import { launchChromium } from './support/chromium.js';
import { refIdOfHostedLink } from './support/visitor.js';

const OPERATOR_SECRET = 'operator-secret-for-the-browser-test';
/** The id of Chromium's PDF viewer: a frame of it means the PDF is shown, not saved. */
const PDF_VIEWER = 'chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai/';
// Screenshots of each step: the test's artifacts, kept after the run (test-output/ is git-ignored).
const OUTPUT = fileURLToPath(new URL('../test-output/journey/', import.meta.url));

let example: RunningExample;
let browser: Browser;
let options: StartOptions;
let dataDir: string;
let shots = 0;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'verikit-example-'));
  // One port for the whole run, so a restart comes back where the hosted page sends people.
  options = {
    port: await freePort(),
    // The reconciler polls every few seconds: a webhook lost here is found within the test, not within the hour.
    env: { VERIKIT_EXAMPLE_DATA: dataDir, VERIKIT_EXAMPLE_OPERATOR_SECRET: OPERATOR_SECRET, VERIKIT_EXAMPLE_RECONCILE_FAST: '1' },
    retry: { maxAttempts: 2, baseDelayMs: 50, maxDelayMs: 100 },
  };
  example = await startExample(options);
  rmSync(OUTPUT, { recursive: true, force: true });
  mkdirSync(OUTPUT, { recursive: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await example?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function shot(page: Page, name: string): Promise<void> {
  const path = `${OUTPUT}${String(++shots).padStart(2, '0')}-${name}.png`;
  await page.screenshot({ path, fullPage: true });
  expect(existsSync(path)).toBe(true);
}

async function signIn(context: BrowserContext, name: string, business: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(example.url);
  await page.fill('input[name="name"]', name);
  await page.fill('input[name="business"]', business);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/dashboard$/);
  return page;
}

/** From the dashboard's button to the hosted page, the decision, and back by the page's own link; the refId the app gave the service. */
async function verifyOnHostedPage(
  page: Page,
  kind: 'kyb' | 'kyc',
  decision: 'approve' | 'reject' | 'review',
  label: string,
  fields = {},
  check: () => Promise<void> = async () => {},
): Promise<string> {
  await page.click(`button[data-verify="${kind}"]`);
  await page.waitForURL(/\/hosted\/\?authToken=/);
  const refId = refIdOfHostedLink(page.url());
  await check();
  for (const [name, value] of Object.entries(fields)) await page.fill(`input[name="${name}"]`, value as string);
  await shot(page, `${label}-hosted-page`);
  await page.click(`button[data-decision="${decision}"]`);
  await page.waitForSelector('#done');
  await shot(page, `${label}-decided`);
  await page.click('#return');
  await page.waitForURL(`${example.url}/dashboard`);
  return refId;
}

/** Whether anything on the page is wider than the window (a table overflowing its card, say). */
const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

describe('the example, walked in Chromium', () => {
  let globex: BrowserContext;
  let globexPage: Page;
  let globexRef: string;
  let globexKycRef: string;
  let initechRef: string;

  it('KYB: the hosted page starts from what the app knows, and the dashboard shows that business, readable, with a PDF that opens', async () => {
    globex = await browser.newContext();
    globexPage = await signIn(globex, 'Grace Hopper', 'Globex Corporation');
    const page = globexPage;
    expect(await page.textContent('[data-mode]')).toBe('embedded fake service');
    await shot(page, 'globex-signed-in');

    globexRef = await verifyOnHostedPage(page, 'kyb', 'approve', 'globex-kyb', { website: 'globex.example' }, async () => {
      // What the app knows of the business, before anyone types: the sign-in's business and person.
      expect(await page.inputValue('input[name="businessName"]')).toBe('Globex Corporation');
      expect(await page.inputValue('input[name="ownerName"]')).toBe('Grace Hopper');
    });

    await page.waitForSelector('[data-kyb-status="COMPLETED"]', { timeout: 15_000 });
    expect(await page.textContent('[data-business-name]')).toBe('Globex Corporation');
    expect(await page.locator('[data-owners] li').allTextContents()).toEqual(['Grace Hopper (62 %)']);
    expect(await page.locator('[data-related] li').allTextContents()).toEqual(['Globex Holdings Ltd']);
    const text = (await page.textContent('body')) as string;
    expect(text).toContain('globex.example: COMPLETED');
    expect(text).not.toMatch(/acme/i);
    // One word for the status, timestamps in the browser's own time, and no way into a finished flow.
    expect(await page.textContent('[data-kyb-status]')).toBe('Verified');
    expect(await page.locator('time[data-local]').first().textContent()).not.toMatch(/UTC|T\d\d:/);
    expect(await page.locator('button[data-verify="kyb"]').count()).toBe(0);

    const href = (await page.getAttribute('a[data-document] >> nth=0', 'href')) as string;
    const pdf = await page.request.get(`${example.url}${href}`);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    expect(pdf.headers()['content-disposition']).toBe('inline; filename=certificate-of-incorporation.pdf');
    const bytes = await pdf.body();
    expect(bytes.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    expect(bytes.toString('latin1')).toContain('(Company name: Globex Corporation)');
    // Sandboxed as every document is, the PDF still opens in the browser's viewer from the dashboard's link.
    expect(pdf.headers()['content-security-policy']).toBe("default-src 'none'; sandbox");
    const [viewer] = await Promise.all([page.waitForEvent('popup'), page.click('a[data-document] >> nth=0')]);
    await expect.poll(() => viewer.frames().some((frame) => frame.url().startsWith(PDF_VIEWER)), { timeout: 15_000 }).toBe(true);
    await viewer.close();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-download] >> nth=1')]);
    expect(download.suggestedFilename()).toBe('bank-statement.png');
    await shot(page, 'globex-kyb-verified');
  });

  it('KYC: rejected on the hosted page; the dashboard says why, and offers no dead end', async () => {
    const page = globexPage;
    globexKycRef = await verifyOnHostedPage(page, 'kyc', 'reject', 'globex-kyc');
    await page.waitForSelector('[data-kyc-decision="rejected"]', { timeout: 15_000 });
    expect(await page.textContent('[data-kyc-decision]')).toBe('Rejected');
    expect(await page.textContent('[data-section="kyc"] [data-reason]')).toBe('Reason: The identity document has expired');
    expect(await page.locator('button[data-verify="kyc"]').count()).toBe(0);
    await shot(page, 'globex-kyc-rejected');
  });

  it('a KYB rejection carries its reason: an AML hit on the business', async () => {
    const initech = await browser.newContext();
    const page = await signIn(initech, 'Bill Lumbergh', 'Initech');
    initechRef = await verifyOnHostedPage(page, 'kyb', 'reject', 'initech-kyb');
    await page.waitForSelector('[data-kyb-status="REJECTED"]', { timeout: 15_000 });
    expect(await page.textContent('[data-section="kyb"] [data-reason]')).toContain(
      'AML screening of Initech: 2 potential match(es) (SANCTIONS, POTENTIAL_MATCH)',
    );
    await shot(page, 'initech-kyb-rejected');
    await initech.close();
  });

  it('on a phone (390 px wide) the AML table stays inside its card: each screening a block of labelled lines', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await signIn(phone, 'Bill Lumbergh', 'Initech');
    await page.waitForSelector('[data-aml]');
    expect(await overflows(page)).toBe(false);
    const card = (await page.locator('[data-section="kyb"]').boundingBox()) as { x: number; width: number };
    const table = (await page.locator('[data-aml]').boundingBox()) as { x: number; width: number };
    expect(table.x + table.width).toBeLessThanOrEqual(card.x + card.width);
    // The column headings give way to a label before each value (CSS ::before, from data-label); the cells stack.
    expect(await page.locator('[data-aml] thead').isVisible()).toBe(false);
    const cells = await page
      .locator('[data-aml] tbody tr >> nth=0')
      .locator('td')
      .evaluateAll((tds) =>
        tds.map((td) => ({ label: td.dataset.label, x: td.getBoundingClientRect().x, y: td.getBoundingClientRect().y })),
      );
    expect(cells.map((c) => c.label)).toEqual(['Name', 'Role', 'Result', 'Screened', 'Monitoring']);
    expect(new Set(cells.map((c) => c.x)).size).toBe(1);
    expect(cells.map((c) => c.y)).toEqual([...cells.map((c) => c.y)].sort((a, b) => a - b));
    await shot(page, 'initech-phone');
    await phone.close();
  });

  it("live updates reach only their own user: another business's webhook leaves this dashboard alone, its own reloads it", async () => {
    const page = globexPage;
    await page.goto(`${example.url}/dashboard`);
    await page.evaluate(() => Object.assign(window, { untouched: true }));
    // Initech's case moves on: a webhook, a worker run, a new result for another user.
    const globexState = async () => (await page.request.get(`${example.url}/dashboard/state`)).text();
    const globexStamp = await globexState();
    example.fake?.kyb.reopen(initechRef, ['step_documents'], 'A newer statement is needed');
    await example.fake?.webhooks.settle();
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // two polls of the dashboard
    expect(await page.evaluate(() => (window as { untouched?: boolean }).untouched)).toBe(true);
    expect(await globexState()).toBe(globexStamp);
    // Globex's own case is reopened: its dashboard reloads by itself and offers to continue.
    example.fake?.kyb.reopen(globexRef, ['step_documents'], 'A newer statement is needed');
    await page.waitForSelector('[data-kyb-status="IN_PROGRESS"]', { timeout: 15_000 });
    expect(await page.evaluate(() => (window as { untouched?: boolean }).untouched)).toBeUndefined();
    expect(await page.locator('button[data-verify="kyb"]').textContent()).toBe('Continue verification');
    await shot(page, 'globex-reopened-live');
  });

  it("a delivery the worker gave up on is the operator's to see, with its error, and Replay runs it", async () => {
    const page = globexPage;
    example.fake?.faults.inject('kyb.getCase', { kind: 'status', status: 500 });
    example.fake?.kyb.setStatus(globexRef, 'COMPLETED');
    await example.fake?.webhooks.settle(); // accepted into the inbox: 204
    const operations = await browser.newContext();
    const panel = await operations.newPage();
    await panel.goto(`${example.url}/operations`);
    await panel.fill('input[name="secret"]', OPERATOR_SECRET);
    await panel.click('button[type="submit"]');
    await panel.waitForURL(`${example.url}/operations`);
    const deadLetters = async () => {
      await panel.reload();
      return panel.getAttribute('[data-dead-letters]', 'data-dead-letters');
    };
    await expect.poll(deadLetters, { timeout: 15_000 }).toBe('1');
    expect(await panel.textContent('[data-operations] table')).toContain('the service failed');
    await shot(panel, 'dead-letter');
    // The business itself sees no operator panel.
    await page.reload();
    expect(await page.locator('[data-operations]').count()).toBe(0);
    example.fake?.faults.clear();
    await panel.click('button[data-replay]');
    await panel.waitForURL(`${example.url}/operations`);
    await page.waitForSelector('[data-kyb-status="COMPLETED"]', { timeout: 15_000 });
    expect(await deadLetters()).toBe('0');
    await shot(panel, 'replayed');
    await operations.close();
  });

  it('a restart in the middle loses nothing: accounts, sessions, results, and a hosted link opened before it', async () => {
    const ada = await browser.newContext();
    const page = await signIn(ada, 'Ada Lovelace', 'Analytical Engines Ltd');
    await page.click('button[data-verify="kyb"]');
    await page.waitForURL(/\/hosted\/\?authToken=/);
    await shot(page, 'ada-hosted-before-restart');

    await example.close();
    example = await startExample(options);

    // The hosted page opened before the restart still works, and the way back lands signed in.
    await page.click('button[data-decision="approve"]');
    await page.waitForSelector('#done');
    await page.click('#return');
    await page.waitForURL(`${example.url}/dashboard`);
    await page.waitForSelector('[data-kyb-status="COMPLETED"]', { timeout: 15_000 });
    expect(await page.textContent('[data-business-name]')).toBe('Analytical Engines Ltd');
    await shot(page, 'ada-after-restart');
    // Earlier results and sessions are still there.
    await globexPage.goto(`${example.url}/dashboard`);
    expect(await globexPage.textContent('[data-kyb-status]')).toBe('Verified');
    expect(await globexPage.textContent('[data-kyc-decision]')).toBe('Rejected');
    await ada.close();
  });

  it('webhooks off: the reviewer’s approval still reaches the dashboard, found by polling; back on, the next change comes by webhook', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, 'Alice Abernathy', 'Umbrella Pharmaceuticals');
    const refId = await verifyOnHostedPage(page, 'kyb', 'review', 'umbrella-kyb');
    await page.waitForSelector('[data-kyb-status="IN_REVIEW"]', { timeout: 15_000 });
    const source = () => page.textContent('[data-section="kyb"] p [data-source]');

    // The dashboard links the service's side: the fake's reviewer console.
    const [reviewer] = await Promise.all([page.waitForEvent('popup'), page.click('a[data-reviewer-console]')]);
    await reviewer.waitForSelector('[data-webhooks="on"]');
    await reviewer.click('button[data-action="webhooks-down"]');
    await reviewer.waitForSelector('[data-webhooks="off"]');
    const row = `tr[data-ref="${refId}"]`;
    await reviewer.click(`${row} button[data-action="decide:COMPLETED"]`);
    await reviewer.waitForSelector(`${row} [data-status]:text-is("COMPLETED")`);
    await shot(reviewer, 'reviewer-approved-webhooks-off');

    // Its webhook cannot get through; the reconciler reads the case and the dashboard shows the approval anyway.
    await page.waitForSelector('[data-kyb-status="COMPLETED"]', { timeout: 20_000 });
    expect(await source()).toBe('found by polling: a webhook was missed');
    const approval = example.fake?.webhooks.messages.at(-1);
    expect(approval).toMatchObject({ state: 'pending' });
    const tried = example.fake?.webhooks.attempts.filter((a) => a.messageId === approval?.id) ?? [];
    expect(tried.length).toBeGreaterThan(0);
    expect(tried.every((a) => a.status === undefined && /endpoint down/.test(a.error ?? ''))).toBe(true);
    await shot(page, 'umbrella-found-by-polling');

    // Deliveries on again: the reviewer overturns the decision, and that change comes by its webhook.
    await reviewer.click('button[data-action="webhooks-up"]');
    await reviewer.waitForSelector('[data-webhooks="on"]');
    await reviewer.click(`${row} button[data-action="decide:REJECTED"]`);
    await page.waitForSelector('[data-kyb-status="REJECTED"]', { timeout: 15_000 });
    expect(await source()).toBe('via webhook');
    // The history says where each status came from, oldest first: the approval found by polling, then the overturn.
    const history = await page
      .locator('[data-section="kyb"] [data-history] li')
      .evaluateAll((items) =>
        items.map((li) => `${li.querySelector('code')?.textContent} ${li.querySelector('[data-source]')?.getAttribute('data-source')}`),
      );
    expect(history.slice(-2)).toEqual(['COMPLETED missed-webhook', 'REJECTED webhook']);
    await page.click('[data-section="kyb"] [data-history] summary');
    await shot(page, 'umbrella-overturned-by-webhook');
    await context.close();
  });

  it('signed out in one tab, "Verify my business" in another gets the sign-in page saying why, not raw JSON', async () => {
    const tabs = await browser.newContext();
    const first = await signIn(tabs, 'Tom Tabs', 'Two Tabs Ltd');
    const second = await tabs.newPage();
    await second.goto(`${example.url}/dashboard`);
    await first.click('text=Sign out');
    await first.waitForURL(`${example.url}/`);
    const [answer] = await Promise.all([second.waitForResponse(/\/verikit\/invite\/kyb$/), second.click('button[data-verify="kyb"]')]);
    expect(answer.status()).toBe(401);
    expect(answer.headers()['content-type']).toContain('text/html');
    expect(await second.textContent('[role="alert"]')).toBe(
      'You are signed out (perhaps in another tab): sign in again to start a verification.',
    );
    expect(await second.locator('input[name="business"]').count()).toBe(1);
    await shot(second, 'invite-signed-out');
    await tabs.close();
  });

  it('markup in what the service sends (a KYC status holding </script>) stays text: the dashboard runs none of it', async () => {
    await globexPage.goto(`${example.url}/dashboard`);
    await globexPage.evaluate(() => Object.assign(window, { beforeReload: true }));
    const status = '</script><script>window.injected = true</script><img src=x onerror="window.injected = true">';
    example.fake?.kyc.setStatus(globexKycRef, status);
    // Its webhook, the ledger's read and onChange: a new version, and the dashboard reloads itself.
    await globexPage.waitForFunction(() => !(window as { beforeReload?: boolean }).beforeReload, undefined, { timeout: 15_000 });
    await globexPage.waitForLoadState('load');
    expect(await globexPage.textContent('[data-kyc-status]')).toBe(status);
    expect(await globexPage.evaluate(() => (window as { injected?: boolean }).injected)).toBeUndefined();
    expect(await globexPage.locator('[data-section="kyc"] img').count()).toBe(0);
  });

  it('a sign-in posted by another site (login CSRF) is refused: the visitor is not signed into the attacker’s account', async () => {
    // The attacker's page, on another site (localhost is not 127.0.0.1), posts the sign-in form as soon as it loads.
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${example.url}/signin"><input name="name" value="Mallory"><input name="business" value="Attacker Ltd"></form>
<script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const victim = await browser.newContext();
      const page = await victim.newPage();
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      await page.waitForURL(`${example.url}/signin`);
      expect(await page.getAttribute('[data-error]', 'data-error')).toBe('403');
      await shot(page, 'login-csrf-refused');
      await page.goto(`${example.url}/dashboard`);
      await page.waitForURL(`${example.url}/`);
      expect(await page.locator('text=Mallory').count()).toBe(0);
      expect(await victim.cookies()).toEqual([]);
      await victim.close();
    } finally {
      attacker.close();
    }
  });

  it('small things: a favicon, styled error pages, and a viewport on the hosted page', async () => {
    const favicon = await globexPage.request.get(`${example.url}/favicon.ico`);
    expect(favicon.status()).toBe(200);
    expect(favicon.headers()['content-type']).toContain('image/svg+xml');
    await globexPage.goto(`${example.url}/no-such-page`);
    expect(await globexPage.getAttribute('[data-error]', 'data-error')).toBe('404');
    expect(await globexPage.textContent('h2')).toBe('Page not found');
    const missing = await globexPage.request.get(`${example.url}/documents/doc_nope`);
    expect(missing.status()).toBe(404);
    expect(await missing.text()).toContain('<style>');
    await shot(globexPage, 'not-found');
    await globex.close();
  });
});
