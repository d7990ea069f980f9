import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { verikitRouter } from '@verikit/express';
import type { Request } from 'express';
import { AppModule } from './app.module.js';
import { client, type SignedInUser, webhook } from './verikit.js';

const app = await NestFactory.create(AppModule);
// Before listen(): Nest registers its body parsers in init(), which listen() calls, so verikit's
// router runs ahead of them and reads the raw bytes itself. Do not call app.init() before this.
app.use(
  '/verikit',
  verikitRouter({
    client,
    webhook,
    invite: {
      kyb: {
        resolveBusiness: (req: Request & { user?: SignedInUser }) => (req.user ? { refId: req.user.businessId } : null),
      },
    },
  }),
);
const port = Number(process.env.PORT ?? 3000);
await app.listen(port, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${port} (Nest, Express platform)`);
