import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { verikitPlugin } from '@verikit/fastify';
import { AppModule } from './app.module.js';
import { client, type SignedInUser, webhook } from './verikit.js';

const app = await NestFactory.create<NestFastifyApplication>(AppModule, new FastifyAdapter());
// app.register, not app.getInstance().register: @nestjs/platform-fastify pins its own copy of
// fastify, whose types differ from the one @verikit/fastify is typed against (TS2769).
await app.register(verikitPlugin, {
  prefix: '/verikit',
  client,
  webhook,
  invite: {
    kyb: {
      resolveBusiness: (req) => {
        const user = (req as typeof req & { user?: SignedInUser }).user;
        return user ? { refId: user.businessId } : null;
      },
    },
  },
});
const port = Number(process.env.PORT ?? 3000);
await app.listen(port, '127.0.0.1');
console.log(`listening on http://127.0.0.1:${port} (Nest, Fastify platform)`);
