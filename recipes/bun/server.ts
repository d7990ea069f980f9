// verikit on Bun: the webhook route as a Fetch handler, served by Bun.serve.
import { clientFromEnv, createFetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';

const webhook = createFetchWebhookHandler({
  client: clientFromEnv(), // VERIKIT_API_KEY, VERIKIT_BASE_URL (+ VERIKIT_WEB_URL, VERIKIT_PUBLIC_KEY for links)
  secret: process.env.VERIKIT_WEBHOOK_SECRET as string,
  store: new MemoryIdempotencyStore(), // one process; share a store across several
  onEvent: async (ctx) => {
    const { kind, refId, result } = await ctx.fetchResult();
    console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
  },
});

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(process.env.PORT ?? 3000),
  routes: { '/verikit/webhook': webhook },
  fetch: () => new Response('not found', { status: 404 }),
});
console.log(`listening on ${server.url}`);
