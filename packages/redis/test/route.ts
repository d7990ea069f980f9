import type { AddressInfo } from 'node:net';
import { verikitRouter } from '@verikit/express';
import { signWebhook } from '@verikit/testing';
import express from 'express';
import { request } from 'undici';

/** The webhook route as a user runs it: Express on a loopback port, deliveries signed as Svix signs them, sent over HTTP. */
export interface RunningRoute {
  /** Sends one signed delivery of `payload` (with svix-id `id`, else a fresh `msg_…`) and answers its id and status. */
  deliver(payload: unknown, id?: string): Promise<{ id: string; status: number }>;
  close(): Promise<void>;
}

type WebhookRouteOptions = NonNullable<Parameters<typeof verikitRouter>[0]['webhook']>;

/** Mounts `verikitRouter({ webhook })` at `/verikit` and listens on 127.0.0.1. */
export async function startRoute(webhook: WebhookRouteOptions): Promise<RunningRoute> {
  const app = express();
  app.use('/verikit', verikitRouter({ webhook }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/verikit/webhook`;
  const secret = webhook.secret ?? webhook.secrets?.[0];
  if (secret === undefined) throw new Error('startRoute needs webhook.secret');
  return {
    async deliver(payload, id) {
      const signed = signWebhook({ secret, payload, id });
      const answer = await request(url, { method: 'POST', headers: signed.headers, body: signed.body });
      await answer.body.dump();
      return { id: signed.id, status: answer.statusCode };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
