import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/readme-snippet.js';
import { type RunningExample, type StartOptions, startExample } from '../src/start.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Screenshots of each step: the test's artifacts, kept after the run (test-output/ is git-ignored).
const OUTPUT = fileURLToPath(new URL('../test-output/journey/', import.meta.url));

let example: RunningExample;
let browser: Browser;
let options: StartOptions;
let dataDir: string;
let shots = 0;

beforeAll(async () => {
  // Never skipped: a missing browser is a failure, with the fix in the message.
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: run \`apt-get install chromium\` (the root \`pnpm test\` does this when it can) or set CHROMIUM_PATH`,
    );
  dataDir = mkdtempSync(join(tmpdir(), 'verikit-example-'));
  // One port for the whole run, so a restart comes back where the hosted page sends people.
  options = { port: await freePort(), env: { VERIKIT_EXAMPLE_DATA: dataDir }, retry: { maxAttempts: 2, baseDelayMs: 50, maxDelayMs: 100 } };
  example = await startExample(options);
  rmSync(OUTPUT, { recursive: true, force: true });
  mkdirSync(OUTPUT, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
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

/** From the dashboard's button to the hosted page, the decision, and back by the page's own link. */
async function verifyOnHostedPage(
  page: Page,
  kind: 'kyb' | 'kyc',
  decision: 'approve' | 'reject',
  label: string,
  fields = {},
  check: () => Promise<void> = async () => {},
) {
  await page.click(`button[data-verify="${kind}"]`);
  await page.waitForURL(/\/hosted\/\?authToken=/);
  await check();
  for (const [name, value] of Object.entries(fields)) await page.fill(`input[name="${name}"]`, value as string);
  await shot(page, `${label}-hosted-page`);
  await page.click(`button[data-decision="${decision}"]`);
  await page.waitForSelector('#done');
  await shot(page, `${label}-decided`);
  await page.click('#return');
  await page.waitForURL(`${example.url}/dashboard`);
}

describe('the example, walked in Chromium', () => {
  let globex: BrowserContext;
  let globexPage: Page;

  it('KYB: the hosted page starts from what the app knows, and the dashboard shows that business, readable, with a PDF that opens', async () => {
    globex = await browser.newContext();
    globexPage = await signIn(globex, 'Grace Hopper', 'Globex Corporation');
    const page = globexPage;
    expect(await page.textContent('[data-mode]')).toBe('embedded fake service');
    await shot(page, 'globex-signed-in');

    await verifyOnHostedPage(page, 'kyb', 'approve', 'globex-kyb', { website: 'globex.example' }, async () => {
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
    expect(pdf.headers()['content-disposition']).toMatch(/^inline; filename="certificate-of-incorporation.pdf"/);
    const bytes = await pdf.body();
    expect(bytes.subarray(0, 8).toString('latin1')).toBe('%PDF-1.4');
    expect(bytes.toString('latin1')).toContain('(Company name: Globex Corporation)');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-download] >> nth=1')]);
    expect(download.suggestedFilename()).toBe('bank-statement.png');
    await shot(page, 'globex-kyb-verified');
  });

  it('KYC: rejected on the hosted page; the dashboard says why, and offers no dead end', async () => {
    const page = globexPage;
    await verifyOnHostedPage(page, 'kyc', 'reject', 'globex-kyc');
    await page.waitForSelector('[data-kyc-decision="rejected"]', { timeout: 15_000 });
    expect(await page.textContent('[data-kyc-decision]')).toBe('Rejected');
    expect(await page.textContent('[data-section="kyc"] [data-reason]')).toBe('Reason: The identity document has expired');
    expect(await page.locator('button[data-verify="kyc"]').count()).toBe(0);
    await shot(page, 'globex-kyc-rejected');
  });

  it('a KYB rejection carries its reason: an AML hit on the business', async () => {
    const initech = await browser.newContext();
    const page = await signIn(initech, 'Bill Lumbergh', 'Initech');
    await verifyOnHostedPage(page, 'kyb', 'reject', 'initech-kyb');
    await page.waitForSelector('[data-kyb-status="REJECTED"]', { timeout: 15_000 });
    expect(await page.textContent('[data-section="kyb"] [data-reason]')).toContain(
      'AML screening of Initech: 2 potential match(es) (SANCTIONS, POTENTIAL_MATCH)',
    );
    await shot(page, 'initech-kyb-rejected');
    await initech.close();
  });

  it("live updates reach only their own user: another business's webhook leaves this dashboard alone, its own reloads it", async () => {
    const page = globexPage;
    await page.goto(`${example.url}/dashboard`);
    await page.evaluate(() => Object.assign(window, { untouched: true }));
    // Initech's case moves on: a webhook, a worker run, a new result for another user.
    const globexState = async () => (await page.request.get(`${example.url}/dashboard/state`)).text();
    const globexStamp = await globexState();
    example.fake?.kyb.reopen('business-initech', ['step_documents'], 'A newer statement is needed');
    await example.fake?.webhooks.settle();
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // two polls of the dashboard
    expect(await page.evaluate(() => (window as { untouched?: boolean }).untouched)).toBe(true);
    expect(await globexState()).toBe(globexStamp);
    // Globex's own case is reopened: its dashboard reloads by itself and offers to continue.
    example.fake?.kyb.reopen('business-globex-corporation', ['step_documents'], 'A newer statement is needed');
    await page.waitForSelector('[data-kyb-status="IN_PROGRESS"]', { timeout: 15_000 });
    expect(await page.evaluate(() => (window as { untouched?: boolean }).untouched)).toBeUndefined();
    expect(await page.locator('button[data-verify="kyb"]').textContent()).toBe('Continue verification');
    await shot(page, 'globex-reopened-live');
  });

  it('a delivery the worker gave up on is listed with its error, and Replay runs it', async () => {
    const page = globexPage;
    example.fake?.faults.inject('kyb.getCase', { kind: 'status', status: 500 });
    example.fake?.kyb.setStatus('business-globex-corporation', 'COMPLETED');
    await example.fake?.webhooks.settle(); // accepted into the inbox: 204
    const deadLetters = async () => {
      await page.reload();
      return page.getAttribute('[data-dead-letters]', 'data-dead-letters');
    };
    await expect.poll(deadLetters, { timeout: 15_000 }).toBe('1');
    expect(await page.textContent('[data-operations] table')).toContain('the service failed');
    await shot(page, 'dead-letter');
    example.fake?.faults.clear();
    await page.click('button[data-replay]');
    await page.waitForSelector('[data-kyb-status="COMPLETED"]', { timeout: 15_000 });
    expect(await page.getAttribute('[data-dead-letters]', 'data-dead-letters')).toBe('0');
    await shot(page, 'replayed');
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
