import { Redis } from 'ioredis';
import { afterAll, describe } from 'vitest';
import { REDIS_URL } from '../../../test-support/services.js';
import { cliSuite } from './cli-suite.js';
import { redisFixture } from './engines.js';

const fixture = await redisFixture();
const admin = new Redis(REDIS_URL, { lazyConnect: true });
afterAll(() => admin.disconnect());

/** Connections the CLI holds (it names them verikit-cli). */
const cliConnections = async () =>
  ((await admin.client('LIST')) as string).split('\n').filter((line) => / name=verikit-cli /.test(line)).length;

describe.runIf(fixture.available)('verikit on Redis', () => {
  cliSuite(fixture, cliConnections);
});
