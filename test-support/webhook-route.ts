import type { AddressInfo } from 'node:net';
import type { WebhookRouteOptions } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import type { SignedWebhook } from '@verikit/testing';
import express from 'express';
import { request } from 'undici';

/** The webhook route as a user runs it: the real Express adapter on a loopback port. */
export interface ServedWebhook {
  /**
   * Sends a signed delivery as Svix does and answers its status. An answer slower than Svix's 15 s
   * would be a timeout to Svix: this rejects after 12 s rather than wait for one.
   */
  send(delivery: SignedWebhook): Promise<number>;
  /** Stops the server and its connections. */
  close(): Promise<void>;
}

/** Serves `webhook` at `/verikit/webhook` with `@verikit/express` on 127.0.0.1. */
export async function serveWebhook(webhook: WebhookRouteOptions): Promise<ServedWebhook> {
  const app = express();
  app.use('/verikit', verikitRouter({ webhook }));
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/verikit/webhook`;
  return {
    async send(delivery) {
      const answer = await request(url, { method: 'POST', headers: delivery.headers, body: delivery.body, headersTimeout: 12_000 });
      await answer.body.dump();
      return answer.statusCode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
