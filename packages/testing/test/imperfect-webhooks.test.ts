import { ConfigurationError, createClient } from '@verikit/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeService, ENDPOINT_DOWN_ERROR, type FakeService } from '../src/index.js';
import { startReceiver } from './helpers.js';

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

/** A fake with one receiver (core's handler, the fake's secret) as its endpoint, and `count` KYB cases created. */
async function setUp(retrySchedule: number[], count = 1) {
  const fake = await createFakeService({ webhooks: { retrySchedule } });
  const receiver = await startReceiver({ secret: fake.credentials.webhookSecret });
  opened.push(async () => {
    await fake.close();
    await receiver.close();
  });
  fake.webhooks.addEndpoint(receiver.url);
  const client = createClient({ ...fake.clientOptions, maxRetries: 0 });
  for (let i = 0; i < count; i++) await client.kyb.createCase({ refId: `case-${i}` });
  await client.close();
  return { fake, receiver };
}

/** A random source that returns `values` in turn. */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => {
    if (i >= values.length) throw new Error('the test drew more random numbers than it planned');
    return values[i++] as number;
  };
};

const refIdOf = (body: string) => (JSON.parse(body) as { data: { refId: string } }).data.refId;

describe('imperfect webhooks', () => {
  it('dropRate: dropped messages are recorded, never attempted, and settle() does not wait for them', async () => {
    const { fake, receiver } = await setUp([0, 20], 4);
    // Per message: the drop draw, then (kept ones) the duplicate draw is skipped (duplicateRate 0).
    fake.webhooks.configure({ dropRate: 0.5, random: sequence(0.1, 0.9, 0.49, 0.5) });
    for (let i = 0; i < 4; i++) fake.kyb.setStatus(`case-${i}`, 'IN_REVIEW');
    await fake.webhooks.settle();
    expect(fake.webhooks.messages.map((m) => m.state)).toEqual(['dropped', 'delivered', 'dropped', 'delivered']);
    const dropped = fake.webhooks.messages.filter((m) => m.state === 'dropped').map((m) => m.id);
    expect(fake.webhooks.attempts.filter((a) => dropped.includes(a.messageId))).toEqual([]);
    expect(receiver.raw.map((r) => refIdOf(r.body)).sort()).toEqual(['case-1', 'case-3']);
  });

  it('duplicateRate: a duplicated message comes twice with the same svix-id; the receiver handles it once', async () => {
    const { fake, receiver } = await setUp([0, 20]);
    fake.webhooks.configure({ duplicateRate: 1 });
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    await fake.webhooks.settle();
    const [message] = fake.webhooks.messages;
    expect(message).toMatchObject({ state: 'delivered', duplicate: true, attempts: 2 });
    expect(fake.webhooks.attempts.map((a) => [a.messageId, a.attempt, a.status])).toEqual([
      [message?.id, 1, 204],
      [message?.id, 2, 204],
    ]);
    expect(receiver.raw.map((r) => r.headers['svix-id'])).toEqual([message?.id, message?.id]);
    expect(receiver.events).toHaveLength(1);
  });

  it('delayMs: a random delay before the first attempt makes messages arrive out of order', async () => {
    const { fake, receiver } = await setUp([0, 20], 2);
    // The first message waits ~1.5 s, the second none: the second arrives first.
    fake.webhooks.configure({ delayMs: { min: 0, max: 1500 }, random: sequence(0.999, 0) });
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    fake.kyb.setStatus('case-1', 'IN_REVIEW');
    expect(fake.webhooks.messages.map((m) => m.delayMs)).toEqual([1499, 0]);
    await fake.webhooks.settle();
    expect(receiver.raw.map((r) => refIdOf(r.body))).toEqual(['case-1', 'case-0']);
  });

  it('down(): every attempt fails as if unreachable and the retries go on; a long outage ends failed (lost)', async () => {
    const { fake, receiver } = await setUp([0, 10, 20]);
    fake.webhooks.down();
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    await fake.webhooks.settle();
    expect(fake.webhooks.messages[0]?.state).toBe('failed');
    expect(fake.webhooks.attempts.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, undefined, ENDPOINT_DOWN_ERROR],
      [2, undefined, ENDPOINT_DOWN_ERROR],
      [3, undefined, ENDPOINT_DOWN_ERROR],
    ]);
    expect(receiver.raw).toEqual([]);
  });

  it('up(): the retries still to come after an outage are delivered', async () => {
    const { fake, receiver } = await setUp([0, 1000, 1000, 1000, 1000]);
    fake.webhooks.down();
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    await waitFor(() => fake.webhooks.attempts.length === 1);
    fake.webhooks.up();
    await fake.webhooks.settle();
    const attempts = fake.webhooks.attempts;
    expect(attempts[0]?.error).toBe(ENDPOINT_DOWN_ERROR);
    expect(attempts.at(-1)?.status).toBe(204);
    expect(fake.webhooks.messages[0]?.state).toBe('delivered');
    expect(receiver.events).toHaveLength(1);
  });

  it('down() and up() act for one organization: the others keep receiving', async () => {
    const { fake, receiver } = await setUp([0]);
    const other = fake.addOrganization();
    const otherReceiver = await startReceiver({ secret: other.webhookSecret });
    opened.push(otherReceiver.close);
    fake.webhooks.addEndpoint(otherReceiver.url, { apiKey: other.apiKey });
    const otherClient = createClient({ ...fake.clientOptions, apiKey: other.apiKey, maxRetries: 0 });
    await otherClient.kyb.createCase({ refId: 'other-case' });
    await otherClient.close();
    fake.webhooks.down();
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    fake.kyb.setStatus('other-case', 'IN_REVIEW', { apiKey: other.apiKey });
    await fake.webhooks.settle();
    expect(receiver.raw).toEqual([]);
    expect(otherReceiver.events).toHaveLength(1);
  });

  it('configure() refuses what it cannot use, naming the setting, and keeps the earlier settings', async () => {
    const { fake } = await setUp([0]);
    const refused = (behaviour: Parameters<FakeService['webhooks']['configure']>[0]) => {
      try {
        fake.webhooks.configure(behaviour);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigurationError);
        return (error as ConfigurationError).option;
      }
      return undefined;
    };
    expect(refused({ dropRate: 1.5 })).toBe('dropRate');
    expect(refused({ duplicateRate: Number.NaN })).toBe('duplicateRate');
    expect(refused({ delayMs: { min: 10, max: 5 } })).toBe('delayMs');
    expect(refused({ delayMs: { min: -1, max: 5 } })).toBe('delayMs');
    expect(refused({ random: 42 as unknown as () => number })).toBe('random');
    fake.kyb.setStatus('case-0', 'IN_REVIEW');
    await fake.webhooks.settle();
    expect(fake.webhooks.messages.map((m) => [m.state, m.duplicate, m.delayMs])).toEqual([['delivered', false, 0]]);
  });
});

/** Polls `condition` until it holds (no fixed sleep: a loaded machine only makes it slower). */
async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
