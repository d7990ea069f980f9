import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookHandler, MemoryIdempotencyStore, type VerikitClient, type WebhookContext } from '@verikit/core';

/** A real webhook receiver on 127.0.0.1 using core's handler; `answer` can force failures first. */
export async function startReceiver(options: { secret: string; client?: VerikitClient; failFirst?: number }) {
  const events: WebhookContext[] = [];
  const raw: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  let failures = options.failFirst ?? 0;
  const handle = createWebhookHandler({
    secret: options.secret,
    store: new MemoryIdempotencyStore(),
    client: options.client,
    onEvent: (ctx) => {
      events.push(ctx);
    },
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      raw.push({ headers: req.headers, body: body.toString('utf8') });
      if (failures > 0) {
        failures--;
        res.writeHead(500).end();
        return;
      }
      const answer = await handle({ method: req.method ?? 'GET', headers: req.headers, body });
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`,
    events,
    raw,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
