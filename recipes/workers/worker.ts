// verikit on Cloudflare Workers: the webhook route as the Worker's fetch handler.
import { clientFromEnv, createFetchWebhookHandler, type FetchWebhookHandler, MemoryIdempotencyStore } from '@verikit/core';

/** The Worker's bindings: set them with `wrangler secret put` (or `[vars]` for the non-secret ones). */
interface Env {
  VERIKIT_API_KEY: string;
  VERIKIT_BASE_URL: string;
  VERIKIT_WEBHOOK_SECRET: string;
}

let webhook: FetchWebhookHandler | undefined;

export default {
  fetch(request: Request, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> | Response {
    if (new URL(request.url).pathname !== '/verikit/webhook') return new Response('not found', { status: 404 });
    // Built on the first request: bindings arrive with requests, not at module load.
    webhook ??= createFetchWebhookHandler({
      client: clientFromEnv({}, { ...env }),
      secret: env.VERIKIT_WEBHOOK_SECRET,
      // One isolate's memory: ids it has seen. Several isolates need a shared store.
      store: new MemoryIdempotencyStore(),
      onEvent: async (ctx) => {
        const { kind, refId, result } = await ctx.fetchResult();
        console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
      },
    });
    // ctx: an onEvent past its deadline is answered 503 at once, and ctx.waitUntil keeps the Worker
    // alive until its outcome is recorded (else a retry meets 409 until the lease runs out).
    return webhook(request, ctx);
  },
};
