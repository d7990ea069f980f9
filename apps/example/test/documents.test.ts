import type { Browser } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningExample } from '../src/start.js';
import { launchChromium } from './support/chromium.js';
import { startInTempFolder, type TestExample } from './support/example.js';
import { startUpstream, type Upstream } from './support/upstream.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const SCRIPTED_PAGE = '<!doctype html><title>statement</title><script>alert(document.cookie)</script>';
const SCRIPTED_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><script>alert(document.cookie)</script><rect width="10" height="10"/></svg>';
/** Far more than every buffer between storage and the visitor holds: an abandoned transfer is still sending. */
const LARGE = 64 * 1024 * 1024;

let upstream: Upstream;
let example: RunningExample;
let running: TestExample;

beforeAll(async () => {
  // What uploaders can send: a page, a drawing with a script, a name in Cyrillic, a large scan.
  upstream = await startUpstream([
    { id: 'doc_page', originalName: 'statement.html', mimeType: 'text/html', content: Buffer.from(SCRIPTED_PAGE) },
    { id: 'doc_drawing', originalName: 'logo.svg', mimeType: 'image/svg+xml', content: Buffer.from(SCRIPTED_SVG) },
    { id: 'doc_cyrillic', originalName: 'выписка.pdf', mimeType: 'application/pdf', content: Buffer.from('%PDF-1.4\n%%EOF\n') },
    { id: 'doc_large', originalName: 'scan.pdf', mimeType: 'application/pdf', content: { size: LARGE } },
  ]);
  running = await startInTempFolder({ env: upstream.env });
  example = running.example;
  upstream.fake.webhooks.addEndpoint(`${example.url}/verikit/webhook`);
});

afterAll(async () => {
  await running?.stop();
  await upstream?.close();
});

const dashboard = async (visitor: Visitor) => (await visitor.get('/dashboard')).text;

/** A signed-in person whose business's KYB is complete, with the upstream's documents. */
async function verifiedBusiness(name: string, business: string): Promise<{ visitor: Visitor; refId: string }> {
  const visitor = new Visitor(example.url);
  await visitor.signIn(name, business);
  const refId = await visitor.startVerification('kyb');
  upstream.fake.kyb.submit(refId, { businessName: business });
  upstream.fake.kyb.setStatus(refId, 'COMPLETED');
  await waitUntil(
    `${business}'s KYB result`,
    () => dashboard(visitor),
    (page) => page.includes('data-kyb-status="COMPLETED"'),
  );
  return { visitor, refId };
}

/** Opens a download and returns once its headers arrived, its body not read. */
async function open(visitor: Visitor, id: string) {
  return request(`${example.url}/documents/${id}`, { headers: { cookie: [...visitor.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
}

/** Leaves a download as a browser tab that is closed does: the connection goes, the rest unread. */
function abandon(answer: Awaited<ReturnType<typeof open>>): void {
  answer.body.on('error', () => {}).destroy();
}

describe('documents as uploaded: only safe types run in the browser, any name is served', () => {
  let visitor: Visitor;
  let certificate: string;

  beforeAll(async () => {
    ({ visitor } = await verifiedBusiness('Ruth Uploader', 'Uploads Ltd'));
    certificate = /href="\/documents\/([^"?]+)" target="_blank" data-document>certificate/.exec(await dashboard(visitor))?.[1] as string;
  });

  it.each([
    ['doc_page', 'statement.html'],
    ['doc_drawing', 'logo.svg'],
  ])('%s (%s) is a download, never a page of the app: attachment, no type to render, nosniff, a sandboxing CSP', async (id, name) => {
    const answer = await visitor.get(`/documents/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/octet-stream');
    expect(answer.headers['content-disposition']).toBe(`attachment; filename=${name}`);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  });

  it('a PDF is still shown inline, sandboxed all the same', async () => {
    const answer = await visitor.get(`/documents/${certificate}`);
    expect(answer.headers['content-type']).toBe('application/pdf');
    expect(answer.headers['content-disposition']).toBe('inline; filename=certificate-of-incorporation.pdf');
    expect(answer.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(answer.text.startsWith('%PDF-1.4')).toBe(true);
  });

  it('выписка.pdf is served (not 500): its name in filename* (RFC 6266), with an ASCII stand-in', async () => {
    const answer = await visitor.get('/documents/doc_cyrillic');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-disposition']).toBe(
      `inline; filename=_______.pdf; filename*=UTF-8''%D0%B2%D1%8B%D0%BF%D0%B8%D1%81%D0%BA%D0%B0.pdf`,
    );
    const saved = await visitor.get('/documents/doc_cyrillic?download=1');
    expect(saved.headers['content-disposition']).toMatch(/^attachment; filename=_______.pdf; filename\*=UTF-8''%D0%B2/);
  });

  describe('in Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });

    it.each([
      ['doc_page', 'statement.html'],
      ['doc_drawing', 'logo.svg'],
    ])('opening %s saves %s; its script never runs on the app’s origin', async (id, name) => {
      const context = await browser.newContext({ acceptDownloads: true });
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      await page.goto(example.url);
      await page.fill('input[name="name"]', 'Ruth Uploader');
      await page.fill('input[name="business"]', 'Uploads Ltd');
      await page.click('button[type="submit"]');
      await page.waitForURL(/\/dashboard$/);
      const [download] = await Promise.all([page.waitForEvent('download'), page.goto(`${example.url}/documents/${id}`).catch(() => null)]);
      expect(download.suggestedFilename()).toBe(name);
      expect(dialogs).toEqual([]);
      await context.close();
    });
  });
});

describe('large downloads: one person cannot take the connections invites and the worker need', () => {
  it('abandoned downloads are cancelled upstream at once, and invites and the worker’s fetches still work', async () => {
    const { visitor, refId } = await verifiedBusiness('Quinn Leaver', 'Abandoned Downloads Ltd');
    // A visitor who starts large downloads and leaves each at once: more than the client's 32 connections.
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const answer = await open(visitor, 'doc_large');
      statuses.push(answer.statusCode);
      abandon(answer);
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const large = () => upstream.transfers.filter((t) => t.id === 'doc_large');
    await expect.poll(() => large().filter((t) => t.state === 'sending').length, { timeout: 10_000 }).toBe(0);
    expect(large().every((t) => t.state === 'cut')).toBe(true);

    // Invites: a hosted link, not "busy" after 15 s.
    expect(await visitor.startVerification('kyc')).toMatch(/^\S+$/);
    // The worker: a status change reaches the dashboard, nothing dead-lettered.
    upstream.fake.kyb.reopen(refId, ['step_documents'], 'A newer scan is needed');
    await expect.poll(() => dashboard(visitor), { timeout: 20_000 }).toContain('data-kyb-status="IN_PROGRESS"');
  });

  it('a person has at most 4 downloads running: the next is refused with a page, and others still get theirs', async () => {
    const hoarder = await verifiedBusiness('Hoarding Harry', 'Many Tabs Ltd');
    const other = await verifiedBusiness('Patient Pat', 'Other Business Ltd');
    // Downloads opened and not read: each holds its transfer while the visitor waits.
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await open(hoarder.visitor, 'doc_large'));
    expect(held.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    const refused = await open(hoarder.visitor, 'doc_large');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(await refused.body.text()).toContain('Too many downloads at once');

    const theirs = await open(other.visitor, 'doc_large');
    expect(theirs.statusCode).toBe(200);
    abandon(theirs);
    expect(await hoarder.visitor.startVerification('kyc')).toMatch(/^\S+$/);

    // Once one ends, the next may start.
    abandon(held.pop() as Awaited<ReturnType<typeof open>>);
    await expect
      .poll(async () => {
        const next = await open(hoarder.visitor, 'doc_large');
        abandon(next);
        return next.statusCode;
      })
      .toBe(200);
    for (const answer of held) abandon(answer);
  });
});
