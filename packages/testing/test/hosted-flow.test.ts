import { chmodSync, copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { collectDocumentFiles, createClient, type KybDocumentStep, type VerikitClient } from '@verikit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { pdfDocument, pngImage } from '../src/fake/documents.js';
import { createFakeService, type FakeService } from '../src/index.js';

const opened: Array<{ fake: FakeService; client: VerikitClient }> = [];
afterEach(async () => {
  for (const { fake, client } of opened.splice(0)) {
    await client.close();
    await fake.close();
  }
});

async function start(options: Parameters<typeof createFakeService>[0] = {}) {
  const fake = await createFakeService(options);
  const client = createClient(fake.clientOptions);
  opened.push({ fake, client });
  return { fake, client };
}

/** Opens a hosted link (optionally as if from `referer`), submits the form with `fields`, answers the page after the decision. */
async function decide(fake: FakeService, link: string, decision: string, fields: Record<string, string> = {}, referer?: string) {
  const opened = await fetch(link, { headers: referer ? { referer } : {} });
  const html = await opened.text();
  // What a browser would submit: every input as the page fills it, then what the person typed.
  const inputs = Object.fromEntries(
    [...html.matchAll(/<input (?:type="hidden" )?name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  const form = new URLSearchParams({ ...(inputs as Record<string, string>), ...fields, decision });
  const posted = await fetch(`${fake.webUrl}/decision`, { method: 'POST', body: form, redirect: 'manual' });
  expect(posted.status).toBe(303);
  return { form: html, done: await (await fetch(new URL(posted.headers.get('location') as string, fake.baseUrl))).text() };
}

describe('the hosted page collects the business details', () => {
  it('starts from what the app knows (prefill), and the case reflects what the business entered', async () => {
    const { fake, client } = await start();
    fake.kyb.prefill('globex', { businessName: 'Globex Corporation', ownerName: 'Hank Scorpio' });
    const { token } = await client.kyb.createCase({ refId: 'globex' });
    const { form } = await decide(fake, client.verificationLink(token).url, 'approve', { website: 'globex.example' });
    expect(form).toContain('name="businessName" value="Globex Corporation"');
    expect(form).toContain('name="ownerName" value="Hank Scorpio"');
    expect(form).toContain('name="viewport"');
    const details = await client.kyb.getCase('globex');
    expect(details.businessName).toBe('Globex Corporation');
    expect(details.websiteAnalysis?.domain).toBe('globex.example');
    expect(details.steps.find((s) => s.type === 'ubo')).toMatchObject({ ubos: [{ name: 'Hank Scorpio' }] });
    expect(details.steps.find((s) => s.type === 'relatedBusinesses')).toMatchObject({
      relatedBusinesses: [{ name: 'Globex Holdings Ltd' }],
    });
    expect(details.amlScreening.primary).toMatchObject([{ name: 'Globex Corporation', status: 'CLEAR', totalHits: 0 }]);
    expect(JSON.stringify(details)).not.toMatch(/acme/i);
  });

  it('a rejection carries its reason: an AML hit on the business (KYB), an expired document (KYC)', async () => {
    const { fake, client } = await start();
    const { token } = await client.kyb.createCase({ refId: 'initech' });
    await decide(fake, client.verificationLink(token).url, 'reject', { businessName: 'Initech' });
    const details = await client.kyb.getCase('initech');
    expect(details.status).toBe('REJECTED');
    expect(details.flagType).toBe('HIGH_RISK');
    expect(details.amlScreening.primary).toMatchObject([{ name: 'Initech', status: 'POTENTIAL_MATCH', totalHits: 2 }]);
    const session = await client.kyc.createSession({ refId: 'person' });
    await decide(fake, client.verificationLink(session.token).url, 'reject');
    expect(await client.kyc.getResult('person')).toMatchObject({ status: 'REJECTED', reason: 'The identity document has expired' });
  });

  it('documents are real files of their type: a PDF with a valid cross-reference table, a PNG whose chunks check', async () => {
    const { fake, client } = await start();
    const files = collectDocumentFiles(
      fake.kyb.submit((await client.kyb.createCase({ refId: 'docs' })).kybCase.refId).steps[2] as KybDocumentStep,
    );
    const [pdf, png] = await Promise.all(
      files.map(async (f) => Buffer.from(await new Response((await client.kyb.downloadDocument(f)).body).arrayBuffer())),
    );
    const text = (pdf as Buffer).toString('latin1');
    const xref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)?.[1]);
    expect(text.slice(xref, xref + 4)).toBe('xref');
    const offsets = Array.from(text.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm), (m) => Number(m[1]));
    expect(offsets).toHaveLength(5);
    for (const [i, offset] of offsets.entries()) expect(text.slice(offset, offset + `${i + 1} 0 obj`.length)).toBe(`${i + 1} 0 obj`);
    expect((png as Buffer).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect((png as Buffer).readUInt32BE(16)).toBe(240); // IHDR width
    expect(files.map((f) => f.size)).toEqual([(pdf as Buffer).length, (png as Buffer).length]);
  });

  it('pdfDocument escapes what PDF strings cannot hold; pngImage holds every pixel it was given', () => {
    expect(pdfDocument('A (b) \\ c', ['Zoë']).toString('latin1')).toContain('(A \\(b\\) \\\\ c)');
    const png = pngImage(2, 1, (x) => (x === 0 ? [1, 2, 3] : [4, 5, 6]));
    const idat = png.indexOf('IDAT');
    const length = png.readUInt32BE(idat - 4);
    expect([...inflateSync(png.subarray(idat + 4, idat + 4 + length))]).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});

/** Loads a hosted link as a browser tab would and returns what its form would submit (the tab stays open, unsent). */
async function openTab(link: string): Promise<Record<string, string>> {
  const html = await (await fetch(link)).text();
  return Object.fromEntries(
    [...html.matchAll(/<input (?:type="hidden" )?name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  ) as Record<string, string>;
}
const press = (fake: FakeService, tab: Record<string, string>, decision: string) =>
  fetch(`${fake.webUrl}/decision`, { method: 'POST', body: new URLSearchParams({ ...tab, decision }), redirect: 'manual' });

describe('an old tab cannot change a decision made in another', () => {
  it('KYC: approved in tab A, Reject in tab B is refused (409) and the result stays APPROVED', async () => {
    const { fake, client } = await start();
    const { token } = await client.kyc.createSession({ refId: 'two-tabs' });
    const link = client.verificationLink(token).url;
    const [tabA, tabB] = [await openTab(link), await openTab(link)];
    expect((await press(fake, tabA, 'approve')).status).toBe(303);
    const refused = await press(fake, tabB, 'reject');
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('already finished');
    expect(await client.kyc.getResult('two-tabs')).toMatchObject({ status: 'APPROVED' });
    expect((await client.kyc.getResult('two-tabs')).reason).toBeUndefined();
  });

  it('KYB: a case sent for review, or decided, takes no decision from an old tab', async () => {
    const { fake, client } = await start();
    const { token } = await client.kyb.createCase({ refId: 'two-tabs-kyb' });
    const link = client.verificationLink(token).url;
    const [tabA, tabB, tabC] = [await openTab(link), await openTab(link), await openTab(link)];
    expect((await press(fake, tabA, 'review')).status).toBe(303);
    expect((await press(fake, tabB, 'approve')).status).toBe(409);
    expect((await client.kyb.getCase('two-tabs-kyb')).status).toBe('IN_REVIEW');
    fake.kyb.setStatus('two-tabs-kyb', 'COMPLETED');
    expect((await press(fake, tabC, 'reject')).status).toBe(409);
    expect((await client.kyb.getCase('two-tabs-kyb')).status).toBe('COMPLETED');
  });
});

describe('the way back from the hosted page', () => {
  it('after the decision the page links back to the configured returnUrl', async () => {
    const { fake, client } = await start({ returnUrl: 'http://127.0.0.1:3000/dashboard' });
    const { token } = await client.kyb.createCase({ refId: 'back' });
    const { done } = await decide(fake, client.verificationLink(token).url, 'approve');
    expect(done).toContain('id="done"');
    expect(done).toContain('<a class="button" id="return" href="http://127.0.0.1:3000/dashboard">Return to 127.0.0.1:3000</a>');
  });

  it('without returnUrl it links only to its own origin: never to a foreign Referer or returnTo (no open redirect), never to a script URL', async () => {
    const { fake, client } = await start();
    const link = async (refId: string) => client.verificationLink((await client.kyc.createSession({ refId })).token).url;
    const { done: fromReferer } = await decide(fake, await link('back-referer'), 'approve', {}, 'http://evil.test/phish');
    expect(fromReferer).not.toContain('evil.test');
    expect(fromReferer).toContain('You can close this page.');
    const { done: fromField } = await decide(fake, await link('back-field'), 'approve', { returnTo: 'https://evil.test/phish' });
    expect(fromField).not.toContain('evil.test');
    const { done: hostile } = await decide(fake, await link('back-js'), 'approve', { returnTo: 'javascript:alert(1)' });
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toContain('You can close this page.');
    const own = `${fake.baseUrl}/hosted/?from=reviewer`;
    const { done: same } = await decide(fake, await link('back-own'), 'approve', { returnTo: own });
    expect(same).toContain(`id="return" href="${own}"`);
  });
});

describe('stateFile: the fake across restarts', () => {
  it('keeps its port, credentials, cases and prefills, and a link issued before the restart still opens', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-fake-'));
    try {
      const stateFile = join(dir, 'fake.json');
      const first = await createFakeService({ stateFile });
      const client = createClient(first.clientOptions);
      first.kyb.prefill('kept', { businessName: 'Kept Ltd' });
      const link = client.verificationLink((await client.kyb.createCase({ refId: 'kept' })).token).url;
      await client.close();
      await first.close();

      const second = await createFakeService({ stateFile });
      const again = createClient(second.clientOptions);
      opened.push({ fake: second, client: again });
      expect(second.baseUrl).toBe(first.baseUrl);
      expect(second.credentials).toEqual(first.credentials);
      expect((await again.kyb.getCase('kept')).status).toBe('NOT_STARTED');
      const { form } = await decide(second, link, 'approve');
      expect(form).toContain('value="Kept Ltd"');
      expect((await again.kyb.getCase('kept')).status).toBe('COMPLETED');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the file holding the keys is readable by its owner only (0600), also when it existed before with wider rights', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-fake-'));
    try {
      const fresh = join(dir, 'fresh.json');
      const created = await createFakeService({ stateFile: fresh });
      await created.close();
      expect(statSync(fresh).mode & 0o777).toBe(0o600);
      const widened = join(dir, 'widened.json');
      copyFileSync(fresh, widened);
      chmodSync(widened, 0o644);
      const again = await createFakeService({ stateFile: widened, port: 0 });
      again.kyb.prefill('x', { businessName: 'X' });
      await again.close();
      expect(statSync(widened).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file that is not its own is refused, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-fake-'));
    try {
      const stateFile = join(dir, 'fake.json');
      const { writeFileSync } = await import('node:fs');
      writeFileSync(stateFile, '{"something": "else"}');
      await expect(createFakeService({ stateFile })).rejects.toThrow(`${stateFile} is not a fake service state file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
