import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../src/start.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUTPUT = fileURLToPath(new URL('../test-output/', import.meta.url));

let example: RunningExample;
let browser: Browser;

beforeAll(async () => {
  // Never skipped: a missing browser is a failure, with the fix in the message.
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium not found at ${CHROMIUM}: run \`apt-get install chromium\` (the root \`pnpm test\` does this when it can) or set CHROMIUM_PATH`,
    );
  example = await startExample({ port: 0, env: {} });
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
});

async function signIn(page: Page, name: string, business: string): Promise<void> {
  await page.goto(example.url);
  await page.fill('input[name="name"]', name);
  await page.fill('input[name="business"]', business);
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/dashboard$/);
}

async function decideOnHostedPage(page: Page, decision: 'approve' | 'reject'): Promise<void> {
  await page.waitForURL(/\/hosted\/\?authToken=/);
  await page.click(`button[data-decision="${decision}"]`);
  await page.waitForSelector('#done');
}

it('a person signs in, verifies their business and identity, and sees the results kept', async () => {
  const page = await browser.newPage();
  await signIn(page, 'Jane Doe', 'Acme Trading Ltd');
  expect(await page.textContent('[data-mode]')).toBe('embedded fake service');

  // KYB: the invite route redirects to the hosted page; approving there fires a signed webhook.
  await page.click('button[data-verify="kyb"]');
  await decideOnHostedPage(page, 'approve');
  await page.goto(`${example.url}/dashboard`);
  await page.waitForSelector('[data-kyb-status].COMPLETED', { timeout: 15_000 });
  expect(await page.textContent('[data-business-name]')).toBe('Acme Trading Ltd');
  expect(await page.locator('a[data-document]').count()).toBe(2);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-document] >> nth=0')]);
  expect(download.suggestedFilename()).toBe('certificate-of-incorporation.pdf');

  // KYC: reject this time.
  await page.click('button[data-verify="kyc"]');
  await decideOnHostedPage(page, 'reject');
  await page.goto(`${example.url}/dashboard`);
  await page.waitForSelector('[data-kyc-decision].rejected', { timeout: 15_000 });
  expect(await page.textContent('[data-kyc-status]')).toBe('REJECTED');

  // The state is the app's own, kept across a reload.
  await page.reload();
  expect(await page.textContent('[data-kyb-status]')).toBe('COMPLETED');
  expect(await page.textContent('[data-kyc-decision]')).toBe('rejected');
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}dashboard.png`, fullPage: true });
  expect(existsSync(`${OUTPUT}dashboard.png`)).toBe(true);
});

it('the dashboard refreshes by itself when a webhook arrives', async () => {
  const page = await browser.newPage();
  await signIn(page, 'Sam Roe', 'Roe Logistics');
  // Start the KYB case through the page's own invite form, then let a reviewer move it on the service side.
  const response = await page.request.post(`${example.url}/verikit/invite/kyb`, { headers: { accept: 'application/json' } });
  expect(response.status()).toBe(200);
  example.fake!.kyb.setStatus('business-roe-logistics', 'IN_REVIEW');
  await page.waitForSelector('[data-kyb-status].IN_REVIEW', { timeout: 15_000 });
});
