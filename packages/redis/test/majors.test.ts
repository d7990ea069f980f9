import { expect, it } from 'vitest';

// Each vitest project of this package names the majors it runs the suites on; this checks that it does.
it(`the suites run on ioredis ${process.env.VERIKIT_REDIS_MAJOR} and BullMQ ${process.env.VERIKIT_REDIS_MAJOR}`, async () => {
  const major = (version: string) => version.split('.')[0];
  const { default: ioredis } = await import('ioredis/package.json');
  const { default: bullmq } = await import('bullmq/package.json');
  expect([major(ioredis.version), major(bullmq.version)]).toEqual([process.env.VERIKIT_REDIS_MAJOR, process.env.VERIKIT_REDIS_MAJOR]);
});
