import type { AddressInfo } from 'node:net';
import { createClient, MemoryIdempotencyStore } from '@verikit/core';
import { createFakeService, type FakeService } from '@verikit/testing';
import { createApp } from './app.js';
import { readMode } from './config.js';

/** A running example app. */
export interface RunningExample {
  url: string;
  mode: 'embedded' | 'real';
  /** The embedded fake service, in embedded mode. */
  fake: FakeService | undefined;
  close(): Promise<void>;
}

/** Starts the example: against an embedded fake service, or the real one when `VERIKIT_*` are set. */
export async function startExample(options: {
  port: number;
  host?: string;
  env: Record<string, string | undefined>;
}): Promise<RunningExample> {
  const mode = readMode(options.env);
  const fake = mode.kind === 'embedded' ? await createFakeService() : undefined;
  const clientOptions = fake
    ? {
        apiKey: fake.credentials.apiKey,
        baseUrl: fake.baseUrl,
        webUrl: fake.webUrl,
        publicKey: fake.credentials.publicKey,
        environment: 'sandbox' as const,
      }
    : (mode as Extract<typeof mode, { kind: 'real' }>).client;
  const client = createClient({
    ...clientOptions,
    kycStatuses: {
      approved: (options.env.VERIKIT_KYC_APPROVED ?? 'APPROVED').split(','),
      rejected: (options.env.VERIKIT_KYC_REJECTED ?? 'REJECTED').split(','),
    },
  });
  const label = fake ? 'embedded fake service' : `real service (${clientOptions.environment ?? 'sandbox'})`;
  const app = createApp({
    client,
    webhookSecret: fake ? fake.credentials.webhookSecret : (mode as Extract<typeof mode, { kind: 'real' }>).webhookSecret,
    store: new MemoryIdempotencyStore(),
    mode: label,
  });
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<import('node:http').Server>((resolve, reject) => {
    const s = app.listen(options.port, host);
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  }).catch(async (error: NodeJS.ErrnoException) => {
    await client.close();
    await fake?.close();
    throw error;
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  fake?.webhooks.addEndpoint(`${url}/verikit/webhook`);
  return {
    url,
    mode: mode.kind,
    fake,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.close();
      await fake?.close();
    },
  };
}
