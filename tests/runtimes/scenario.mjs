// The runtime matrix's scenario, plain JavaScript so every runtime runs it as it is (workerd bundled).
// The app serves verikit's webhook route and GET /checks, which runs the in-process checks and
// answers what each found; the test drives the webhook route over real HTTP from outside.
import { createClient, createWebhookHandler, createWebhookVerifier, MemoryIdempotencyStore, VERSION } from '@verikit/core';
import { verikitApp } from '@verikit/hono';
import { Hono } from 'hono';

/** The variables the scenario reads; each entry passes them in its runtime's own way. */
export const VARIABLES = ['VERIKIT_API_KEY', 'VERIKIT_BASE_URL', 'VERIKIT_WEBHOOK_SECRET', 'SIGNED_BODY', 'SIGNED_HEADERS'];

/** Verify, handle (204, repeat, 400) and call the API through the client, all inside this runtime. */
async function checks(env) {
  const body = env.SIGNED_BODY;
  const headers = JSON.parse(env.SIGNED_HEADERS);
  const verified = await createWebhookVerifier({ secrets: env.VERIKIT_WEBHOOK_SECRET }).verify(headers, body);
  const runs = [];
  const handle = createWebhookHandler({
    secret: env.VERIKIT_WEBHOOK_SECRET,
    store: new MemoryIdempotencyStore(),
    logger: false,
    onEvent: (ctx) => {
      runs.push(ctx.id);
    },
  });
  const statuses = [];
  for (const bodyText of [body, body, `${body} `]) statuses.push((await handle({ method: 'POST', headers, body: bodyText })).status);
  const client = createClient({ apiKey: env.VERIKIT_API_KEY, baseUrl: env.VERIKIT_BASE_URL });
  try {
    const details = await client.kyb.getCase('runtime-case');
    return { version: VERSION, verifiedId: verified.id, statuses, runs: runs.length, caseStatus: details.status };
  } finally {
    await client.close();
  }
}

/** The Hono app every runtime serves with its own server. */
export function createApp(env) {
  const app = new Hono();
  app.get('/checks', async (c) => c.json(await checks(env)));
  app.route(
    '/verikit',
    verikitApp({
      client: createClient({ apiKey: env.VERIKIT_API_KEY, baseUrl: env.VERIKIT_BASE_URL }),
      webhook: {
        secret: env.VERIKIT_WEBHOOK_SECRET,
        store: new MemoryIdempotencyStore(),
        onEvent: async (ctx) => {
          const { refId, result } = await ctx.fetchResult();
          console.log(`verification update: ${refId} -> ${result.status}`);
        },
      },
    }),
  );
  // A short deadline: a slow event is answered 503 at once, and its late outcome must still be recorded.
  app.route(
    '/deadline',
    verikitApp({
      webhook: {
        secret: env.VERIKIT_WEBHOOK_SECRET,
        store: new MemoryIdempotencyStore(),
        deadlineMs: 300,
        logger: false,
        onEvent: async (ctx) => {
          if (ctx.event.data?.slow) await new Promise((resolve) => setTimeout(resolve, 1_000));
          console.log(`deadline work done: ${ctx.id}`);
        },
      },
    }),
  );
  return app;
}
