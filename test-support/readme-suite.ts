import { createClient } from '@verikit/core';
import { createFakeService } from '@verikit/testing';
import { request } from 'undici';
import { expect, it } from 'vitest';
import { freePort, type RunningSnippet, runReadmeSnippet } from './readme-snippet.js';

/** Starts a README's server program with these variables. */
export type StartSnippet = (env: Record<string, string>) => RunningSnippet;

/** Where a server program mounts verikit, and how it says it is up. */
export interface ServerShape {
  /** The webhook route's path (default `/verikit/webhook`). */
  webhookPath?: string;
  /** The KYB invite route's path, checked to answer 401 without a user (default `/verikit/invite/kyb`; `null`: none). */
  invitePath?: string | null;
  /** What the program prints once it listens (default `listening`), or a check that resolves once it answers. */
  ready?: string | ((port: number) => Promise<void>);
}

/**
 * A README's server, run as written: a signed delivery reaches onEvent, the invite route answers,
 * and a failing onEvent (a wrong API key, so `ctx.fetchResult()` is refused) shows in its log.
 */
export function readmeServerSuite(start: StartSnippet, shape: ServerShape = {}): void {
  const { webhookPath = '/verikit/webhook', invitePath = '/verikit/invite/kyb', ready = 'listening' } = shape;
  const startWith = async (apiKey: (real: string) => string) => {
    const fake = await createFakeService({ webhooks: { retrySchedule: [0, 50, 100, 200] } });
    // The snippet listens on PORT as written; ask the OS for a free one rather than guess.
    const port = await freePort();
    const snippet = start({
      PORT: String(port),
      VERIKIT_API_KEY: apiKey(fake.credentials.apiKey),
      VERIKIT_BASE_URL: fake.baseUrl,
      VERIKIT_WEB_URL: fake.webUrl,
      VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
      VERIKIT_WEBHOOK_SECRET: fake.credentials.webhookSecret,
    });
    const client = createClient({ apiKey: fake.credentials.apiKey, baseUrl: fake.baseUrl });
    const stop = async () => {
      await snippet.stop();
      await client.close();
      await fake.close();
    };
    try {
      await (typeof ready === 'string' ? snippet.waitFor(ready) : ready(port));
    } catch (error) {
      await stop();
      throw error;
    }
    fake.webhooks.addEndpoint(`http://127.0.0.1:${port}${webhookPath}`);
    return { fake, port, snippet, client, stop };
  };

  it('the README server works as written', async () => {
    const { fake, port, snippet, client, stop } = await startWith((real) => real);
    try {
      await client.kyb.createCase({ refId: 'readme-biz' });
      fake.kyb.setStatus('readme-biz', 'IN_REVIEW');
      await snippet.waitFor('verification update: kyb readme-biz -> IN_REVIEW');
      if (invitePath !== null) {
        const invite = await request(`http://127.0.0.1:${port}${invitePath}`, { method: 'POST' });
        expect(invite.statusCode).toBe(401);
        await invite.body.dump();
      }
    } finally {
      await stop();
    }
  });

  it('a failing onEvent shows in the README server log, with the delivery id', async () => {
    const { fake, snippet, client, stop } = await startWith((real) => `${real}-revoked`);
    try {
      await client.kyb.createCase({ refId: 'readme-biz' });
      fake.kyb.setStatus('readme-biz', 'IN_REVIEW');
      const output = await snippet.waitFor('webhook delivery failed');
      expect(output).toMatch(/verikit: webhook delivery failed \(id=msg_[\w-]+ stage=event\): AuthenticationError/);
      await fake.webhooks.settle().catch(() => undefined); // every retry answered (500s) before reading the whole log
      expect(snippet.output()).not.toMatch(/uncaught/i);
      expect(output).not.toContain(fake.credentials.webhookSecret);
      expect(output).not.toContain(`${fake.credentials.apiKey}-revoked`);
    } finally {
      await stop();
    }
  });
}

/** The first ```js block of an adapter package's README, run by {@link readmeServerSuite}. */
export function readmeSnippetSuite(packageUrl: URL): void {
  readmeServerSuite((env) => runReadmeSnippet(packageUrl, env));
}
