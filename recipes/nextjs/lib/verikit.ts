import { clientFromEnv, createFetchWebhookHandler, type FetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';

let handler: FetchWebhookHandler | undefined;

/**
 * The webhook handler, built on the first request rather than at import: `next build` loads route
 * modules without your runtime secrets, and a missing VERIKIT_* variable should fail the request
 * that needs it (logged, 500, retried by the sender), not the build.
 */
export function verikitWebhook(): FetchWebhookHandler {
  handler ??= createFetchWebhookHandler({
    client: clientFromEnv(),
    secret: process.env.VERIKIT_WEBHOOK_SECRET as string,
    // One process (or edge isolate) only: share a store across instances in production.
    store: new MemoryIdempotencyStore(),
    onEvent: async (ctx) => {
      const { kind, refId, result } = await ctx.fetchResult();
      console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
    },
  });
  return handler;
}
