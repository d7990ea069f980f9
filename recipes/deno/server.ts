// verikit on Deno: the webhook route as a Fetch handler, served by Deno.serve.
// Run with: deno run --allow-net=127.0.0.1 --allow-env=VERIKIT_API_KEY,VERIKIT_BASE_URL,VERIKIT_WEB_URL,VERIKIT_PUBLIC_KEY,VERIKIT_ENVIRONMENT,VERIKIT_WEBHOOK_SECRET,PORT server.ts
import { clientFromEnv, createFetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';

// Only the variables it needs, each by name: Deno grants env access per variable.
const env = Object.fromEntries(
  [
    'VERIKIT_API_KEY',
    'VERIKIT_BASE_URL',
    'VERIKIT_WEB_URL',
    'VERIKIT_PUBLIC_KEY',
    'VERIKIT_ENVIRONMENT',
    'VERIKIT_WEBHOOK_SECRET',
    'PORT',
  ].map((name) => [name, Deno.env.get(name)]),
);
const webhook = createFetchWebhookHandler({
  client: clientFromEnv({}, env), // VERIKIT_API_KEY, VERIKIT_BASE_URL (+ VERIKIT_WEB_URL, VERIKIT_PUBLIC_KEY for links)
  secret: env.VERIKIT_WEBHOOK_SECRET as string,
  store: new MemoryIdempotencyStore(), // one process; share a store across several
  onEvent: async (ctx) => {
    const { kind, refId, result } = await ctx.fetchResult();
    console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
  },
});

Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(env.PORT ?? 3000),
    onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
  },
  (request) => (new URL(request.url).pathname === '/verikit/webhook' ? webhook(request) : new Response('not found', { status: 404 })),
);
