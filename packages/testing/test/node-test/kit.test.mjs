// Runs under `node --test` with no other runner: the kit must not depend on vitest or jest.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { createClient, MemoryIdempotencyStore } from '@verikit/core';
import { createFakeService, idempotencyStoreContract, signWebhook } from '@verikit/testing';

for (const c of idempotencyStoreContract({ createStore: ({ retentionMs }) => new MemoryIdempotencyStore({ retentionMs }) })) {
  test(`contract: ${c.name}`, c.run);
}

test('the fake service serves the client', async () => {
  const fake = await createFakeService();
  try {
    const client = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl });
    const created = await client.kyb.createCase({ refId: 'node-test' });
    assert.equal(created.kybCase.status, 'NOT_STARTED');
    await client.close();
  } finally {
    await fake.close();
  }
});

test('the CommonJS build loads too', () => {
  const kit = createRequire(import.meta.url)('@verikit/testing');
  assert.equal(typeof kit.signWebhook, 'function');
  assert.equal(signWebhook({ secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl', payload: '{}', id: 'm', timestamp: 1 }).headers['svix-id'], 'm');
});
