import { createClient } from '@verikit/core';
import { createFakeService } from '@verikit/testing';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { freePort, runReadmeSnippet } from './readme-snippet.js';

/** Runs an adapter README's snippet as written: a signed delivery reaches onEvent, and the invite route answers. */
export function readmeSnippetSuite(packageUrl: URL): void {
  it('the README snippet works as written', async () => {
    const fake = await createFakeService({ webhooks: { retrySchedule: [0, 50, 100, 200] } });
    // The snippet listens on PORT as written; ask the OS for a free one rather than guess.
    const port = await freePort();
    const snippet = runReadmeSnippet(packageUrl, {
      PORT: String(port),
      VERIKIT_API_KEY: fake.credentials.apiKey,
      VERIKIT_BASE_URL: fake.baseUrl,
      VERIKIT_WEB_URL: fake.webUrl,
      VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
      VERIKIT_WEBHOOK_SECRET: fake.credentials.webhookSecret,
    });
    const client = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl });
    try {
      await snippet.waitFor('listening');
      fake.webhooks.addEndpoint(`http://127.0.0.1:${port}/verikit/webhook`);
      await client.kyb.createCase({ refId: 'readme-biz' });
      fake.kyb.setStatus('readme-biz', 'IN_REVIEW');
      await snippet.waitFor('verification update: kyb readme-biz -> IN_REVIEW');
      const invite = await request(`http://127.0.0.1:${port}/verikit/invite/kyb`, { method: 'POST' });
      expect(invite.statusCode).toBe(401);
      await invite.body.dump();
    } finally {
      snippet.stop();
      await client.close();
      await fake.close();
    }
  });
}
