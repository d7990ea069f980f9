import { clientFromEnv, MemoryIdempotencyStore, type VerikitClient, type WebhookRouteOptions } from '@verikit/core';

/** The client, built once from VERIKIT_* variables (a missing one stops the app at start, naming it). */
export const client: VerikitClient = clientFromEnv();

/** The webhook options both platforms share. */
export const webhook: WebhookRouteOptions = {
  secret: process.env.VERIKIT_WEBHOOK_SECRET as string,
  store: new MemoryIdempotencyStore(), // one instance; a shared store (@verikit/postgres) for several
  onEvent: async (ctx) => {
    const { kind, refId, result } = await ctx.fetchResult();
    console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
  },
};

/** What your auth puts on the request (set by a guard or middleware of yours). */
export interface SignedInUser {
  id: string;
  businessId: string;
}
