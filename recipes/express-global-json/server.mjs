// An existing Express app whose express.json() runs for every route, verikit included.

import { clientFromEnv, MemoryIdempotencyStore } from '@verikit/core';
import { verikitRouter } from '@verikit/express';
import express from 'express';

const app = express();
app.use(
  express.json({
    // At least the webhook's maxBodyBytes (1 MiB by default): express.json's own 100 kB limit
    // would answer a larger signed delivery with its HTML 413 before verikit sees it.
    limit: '1mb',
    // Keep the exact bytes: the signature covers them, not the parsed JSON.
    verify: (req, _res, buf) => {
      req.rawBody = buf;
    },
  }),
);
app.use(
  '/verikit',
  verikitRouter({
    client: clientFromEnv(),
    webhook: {
      secret: process.env.VERIKIT_WEBHOOK_SECRET,
      store: new MemoryIdempotencyStore(),
      onEvent: async (ctx) => {
        const { kind, refId, result } = await ctx.fetchResult();
        console.log(`verification update: ${kind} ${refId} -> ${result.status}`);
      },
    },
    invite: { kyb: { resolveBusiness: (req) => (req.user ? { refId: req.user.businessId } : null) } },
  }),
);
app.post('/orders', (req, res) => res.json({ received: req.body })); // the app's own JSON routes still work

const port = Number(process.env.PORT ?? 3000);
app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));
