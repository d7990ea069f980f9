import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, InvalidArgumentError } from '@verikit/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFakeService, type FakeHistoryEntry, type FakeService } from '../src/index.js';
import { startReceiver } from './helpers.js';

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const close of opened.splice(0).reverse()) await close();
});

async function start(options: Parameters<typeof createFakeService>[0] = {}) {
  const fake = await createFakeService({ webhooks: { retrySchedule: [0, 20, 40] }, ...options });
  const client = createClient({ ...fake.clientOptions, maxRetries: 0 });
  opened.push(async () => {
    await client.close();
    await fake.close();
  });
  return { fake, client };
}

/** The version an observed `updatedAt` belongs to: exactly one entry has it. */
const versionOf = (history: readonly FakeHistoryEntry[], updatedAt: string | undefined) => {
  const matches = history.filter((h) => h.updatedAt === updatedAt);
  expect(matches).toHaveLength(1);
  return matches[0]?.version;
};

const increasing = (history: readonly FakeHistoryEntry[]) => {
  expect(history.map((h) => h.version)).toEqual(history.map((_, i) => i + 1));
  for (let i = 1; i < history.length; i++) expect(Date.parse(history[i]!.updatedAt)).toBeGreaterThan(Date.parse(history[i - 1]!.updatedAt));
};

/** Presses a hosted page button over HTTP, as a person's browser would. */
async function press(fake: FakeService, link: string, decision: string) {
  const html = await (await fetch(link)).text();
  const inputs = Object.fromEntries(
    [...html.matchAll(/<input (?:type="hidden" )?name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  );
  const posted = await fetch(`${fake.webUrl}/decision`, {
    method: 'POST',
    body: new URLSearchParams({ ...(inputs as Record<string, string>), decision }),
    redirect: 'manual',
  });
  expect(posted.status).toBe(303);
}

describe('a versioned history per refId', () => {
  it('KYB: every change of what the API answers is one version, and each answer maps to its version by updatedAt', async () => {
    const { fake, client } = await start();
    const receiver = await startReceiver({ secret: fake.credentials.webhookSecret });
    opened.push(receiver.close);
    fake.webhooks.addEndpoint(receiver.url);
    const observed: Array<{ status: string; version: number | undefined }> = [];
    const observe = async () => {
      const details = await client.kyb.getCase('hist-kyb');
      observed.push({ status: details.status, version: versionOf(fake.kyb.history('hist-kyb'), details.updatedAt) });
    };

    const { token } = await client.kyb.createCase({ refId: 'hist-kyb' });
    await observe();
    await press(fake, client.verificationLink(token).url, 'review'); // opened (IN_PROGRESS), then sent for review
    await observe();
    fake.kyb.decide('hist-kyb', 'COMPLETED', { reason: 'Documents match' });
    await observe();
    fake.kyb.decide('hist-kyb', 'REJECTED', { reason: 'Sanctions hit found later' });
    await observe();
    fake.kyb.reopen('hist-kyb', ['step_documents'], 'A newer statement is needed');
    await observe();
    fake.kyb.submit('hist-kyb', { businessName: 'Acme Again Ltd' });
    await observe();
    // A status equal to the current one changes nothing: no version, no webhook.
    fake.kyb.setStatus('hist-kyb', 'IN_PROGRESS');

    const history = fake.kyb.history('hist-kyb');
    expect(history.map(({ version, status, change, reason }) => ({ version, status, change, reason }))).toEqual([
      { version: 1, status: 'NOT_STARTED', change: 'created', reason: undefined },
      { version: 2, status: 'IN_PROGRESS', change: 'status', reason: undefined },
      { version: 3, status: 'IN_REVIEW', change: 'submitted', reason: undefined },
      { version: 4, status: 'COMPLETED', change: 'decided', reason: 'Documents match' },
      { version: 5, status: 'REJECTED', change: 'overturned', reason: 'Sanctions hit found later' },
      { version: 6, status: 'IN_PROGRESS', change: 'reopened', reason: 'A newer statement is needed' },
      { version: 7, status: 'IN_PROGRESS', change: 'submitted', reason: undefined },
    ]);
    increasing(history);
    expect(observed).toEqual([
      { status: 'NOT_STARTED', version: 1 },
      { status: 'IN_REVIEW', version: 3 },
      { status: 'COMPLETED', version: 4 },
      { status: 'REJECTED', version: 5 },
      { status: 'IN_PROGRESS', version: 6 },
      { status: 'IN_PROGRESS', version: 7 },
    ]);
    // One webhook per change after the creation, carrying that change's status.
    await fake.webhooks.settle();
    const messages = fake.webhooks.messages.filter((m) => m.endpoint === receiver.url);
    expect(messages.map((m) => (m.payload as { data: { status: string } }).data.status)).toEqual(history.slice(1).map((h) => h.status));
    expect(messages.every((m) => m.state === 'delivered')).toBe(true);
    expect(receiver.events).toHaveLength(6);
    // The history is a copy: changing it changes nothing in the fake.
    (history as FakeHistoryEntry[]).pop();
    expect(fake.kyb.history('hist-kyb')).toHaveLength(7);
  });

  it('KYC: results carry updatedAt; a decision overturns a final one, and the reason follows the decision', async () => {
    const { fake, client } = await start();
    const { token } = await client.kyc.createSession({ refId: 'hist-kyc' });
    const created = await client.kyc.getResult('hist-kyc');
    expect(created.updatedAt).toBe(created.createdAt);
    await press(fake, client.verificationLink(token).url, 'review');
    expect(fake.kyc.decide('hist-kyc', 'APPROVED')).toMatchObject({ status: 'APPROVED' });
    expect(fake.kyc.decide('hist-kyc', 'REJECTED', { reason: 'Document forged' })).toMatchObject({
      status: 'REJECTED',
      reason: 'Document forged',
    });
    const approvedAgain = fake.kyc.decide('hist-kyc', 'APPROVED');
    expect(approvedAgain.reason).toBeUndefined();
    const read = await client.kyc.getResult('hist-kyc');
    expect(read).toMatchObject({ status: 'APPROVED' });
    const history = fake.kyc.history('hist-kyc');
    expect(history.map((h) => [h.version, h.status, h.change])).toEqual([
      [1, 'PENDING', 'created'],
      [2, 'IN_REVIEW', 'submitted'],
      [3, 'APPROVED', 'decided'],
      [4, 'REJECTED', 'overturned'],
      [5, 'APPROVED', 'overturned'],
    ]);
    increasing(history);
    expect(versionOf(history, String(read.updatedAt))).toBe(5);
    expect(versionOf(history, String(created.updatedAt))).toBe(1);
  });

  it('two changes in one millisecond get updatedAt 1 ms apart, so each version keeps its own', async () => {
    const { fake, client } = await start();
    await client.kyb.createCase({ refId: 'same-ms' });
    await client.kyc.createSession({ refId: 'same-ms' });
    const frozen = Date.parse('2030-01-01T00:00:00.000Z');
    vi.spyOn(Date, 'now').mockReturnValue(frozen);
    fake.kyb.setStatus('same-ms', 'IN_PROGRESS');
    fake.kyb.setStatus('same-ms', 'IN_REVIEW');
    fake.kyb.decide('same-ms', 'COMPLETED');
    fake.kyc.decide('same-ms', 'APPROVED');
    fake.kyc.decide('same-ms', 'REJECTED');
    vi.restoreAllMocks();
    expect(
      fake.kyb
        .history('same-ms')
        .slice(1)
        .map((h) => h.updatedAt),
    ).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.001Z', '2030-01-01T00:00:00.002Z']);
    expect(fake.kyb.get('same-ms').updatedAt).toBe('2030-01-01T00:00:00.002Z');
    // Per refId and kind: the session's clock is its own.
    expect(
      fake.kyc
        .history('same-ms')
        .slice(1)
        .map((h) => h.updatedAt),
    ).toEqual(['2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.001Z']);
  });

  it('bad calls get typed errors and change nothing', async () => {
    const { fake, client } = await start();
    await client.kyc.createSession({ refId: 'typed' });
    await client.kyb.createCase({ refId: 'typed' });
    const errors = [
      () => fake.kyc.decide('typed', 'IN_REVIEW'),
      () => fake.kyb.decide('typed', 'IN_REVIEW' as 'COMPLETED'),
      () => fake.kyb.history('nobody'),
      () => fake.kyc.decide('nobody', 'APPROVED'),
      () => fake.kyb.decide('typed', 'COMPLETED', { apiKey: 'sk_unknown' }),
    ].map((call) => {
      try {
        call();
        return undefined;
      } catch (error) {
        return error;
      }
    });
    for (const error of errors) expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(errors.map((e) => (e as InvalidArgumentError).code)).toEqual(Array(5).fill('invalid_argument'));
    expect((errors[0] as Error).message).toBe('fake service: a KYC decision is "APPROVED" or "REJECTED", not "IN_REVIEW"');
    expect(fake.kyc.history('typed')).toHaveLength(1);
    expect(fake.kyb.history('typed')).toHaveLength(1);
  });

  it('the state file keeps the history across a restart; a file from before histories starts one at the current state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-fake-history-'));
    opened.push(async () => rmSync(dir, { recursive: true, force: true }));
    const stateFile = join(dir, 'fake.json');
    const first = await start({ stateFile, port: 0 });
    await first.client.kyb.createCase({ refId: 'kept' });
    first.fake.kyb.setStatus('kept', 'IN_REVIEW');
    first.fake.kyb.decide('kept', 'COMPLETED');
    const before = first.fake.kyb.history('kept');
    await opened.pop()?.();

    const second = await start({ stateFile, port: 0 });
    expect(second.fake.kyb.history('kept')).toEqual(before);
    second.fake.kyb.decide('kept', 'REJECTED');
    expect(second.fake.kyb.history('kept').map((h) => [h.version, h.change])).toEqual([
      [1, 'created'],
      [2, 'status'],
      [3, 'decided'],
      [4, 'overturned'],
    ]);
    expect(second.fake.credentials.reviewerToken).toBe(first.fake.credentials.reviewerToken);
    await opened.pop()?.();

    // As an earlier version of the fake wrote it: no histories, no reviewer tokens.
    const old = JSON.parse(readFileSync(stateFile, 'utf8'));
    for (const [, stored] of old.state.cases) delete stored.history;
    for (const org of old.state.organizations) delete org.reviewerToken;
    writeFileSync(stateFile, JSON.stringify(old));
    const third = await start({ stateFile, port: 0 });
    const [only] = third.fake.kyb.history('kept');
    expect(only).toEqual({ version: 1, status: 'REJECTED', change: 'created', updatedAt: third.fake.kyb.get('kept').updatedAt });
    expect(third.fake.credentials.reviewerToken).toMatch(/^rvw_/);
  });
});
