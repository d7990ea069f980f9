import type { FakeService } from '@verikit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInTempFolder, type TestExample } from './support/example.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

let running: TestExample;
let fake: FakeService;

beforeAll(async () => {
  running = await startInTempFolder();
  fake = running.example.fake as FakeService;
});
afterAll(async () => {
  await running?.stop();
});

const visitor = () => new Visitor(running.example.url);
const RANDOM_REF = /^(business|person)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('accounts: each person and business is their own, whatever they are called', () => {
  it('王芳 of 上海科技股份公司, signing in after 李明 of 北京贸易有限公司, sees nothing of his', async () => {
    const li = visitor();
    await li.signIn('李明', '北京贸易有限公司');
    const liPerson = await li.startVerification('kyc');
    const liBusiness = await li.startVerification('kyb');
    fake.kyc.setStatus(liPerson, 'REJECTED', { reason: 'The identity document has expired' });
    fake.kyb.submit(liBusiness, { businessName: '北京贸易有限公司' });
    fake.kyb.setStatus(liBusiness, 'COMPLETED');
    const liPage = await waitUntil(
      "李明's results",
      async () => (await li.get('/dashboard')).text,
      (page) => page.includes('data-kyb-status="COMPLETED"') && page.includes('data-kyc-decision="rejected"'),
    );
    const liDocument = /href="\/documents\/([^"?]+)"/.exec(liPage)?.[1] as string;

    const wang = visitor();
    await wang.signIn('王芳', '上海科技股份公司');
    const page = (await wang.get('/dashboard')).text;
    expect(page).toContain('Signed in as <strong>王芳</strong> for <strong>上海科技股份公司</strong>');
    expect(page).toContain('<span class="badge" data-kyc-status>Not verified yet</span>');
    expect(page).toContain('<span class="badge" data-kyb-status>Not verified yet</span>');
    expect(page).not.toContain('北京');
    expect(page).not.toContain('expired');
    expect((await wang.get(`/documents/${liDocument}`)).status).toBe(404);

    // Their refIds are their own, random, and carry nothing of their names.
    const wangPerson = await wang.startVerification('kyc');
    const wangBusiness = await wang.startVerification('kyb');
    for (const refId of [liPerson, liBusiness, wangPerson, wangBusiness]) expect(refId).toMatch(RANDOM_REF);
    expect(new Set([liPerson, liBusiness, wangPerson, wangBusiness]).size).toBe(4);
  });

  it('"ACME, Ltd." and "Acme Ltd" are two businesses, as are two long names that share their first 40 letters', async () => {
    const long = 'International Widget Manufacturing Compa';
    const pairs = [
      ['ACME, Ltd.', 'Acme Ltd'],
      [`${long}ny A`, `${long}ny B`],
    ];
    for (const [first, second] of pairs) {
      const one = visitor();
      await one.signIn('Sam Same', first as string);
      const other = visitor();
      await other.signIn('Sam Same', second as string);
      expect(await one.startVerification('kyb')).not.toBe(await other.startVerification('kyb'));
      expect(await one.startVerification('kyc')).not.toBe(await other.startVerification('kyc'));
    }
  });

  it('two people of one business (typed the same) share its KYB, each with a KYC of their own', async () => {
    const first = visitor();
    await first.signIn('Ada Colleague', 'Shared Business GmbH');
    const second = visitor();
    await second.signIn('Bob Colleague', 'Shared Business GmbH');
    expect(await first.startVerification('kyb')).toBe(await second.startVerification('kyb'));
    expect(await first.startVerification('kyc')).not.toBe(await second.startVerification('kyc'));
    // And the same person signing in again is the same account.
    const again = visitor();
    await again.signIn('Ada Colleague', 'Shared Business GmbH');
    expect(await again.startVerification('kyc')).toBe(await first.startVerification('kyc'));
  });

  it('a name longer than the form allows is refused with the reason, never cut to fit', async () => {
    const answer = await visitor().post('/signin', { name: 'N'.repeat(101), business: 'Long Names Ltd' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('Names are at most 100 characters long.');
    expect(answer.headers['set-cookie']).toBeUndefined();
  });
});
