import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../../../test-support/services.js';
import { ExitCode } from '../src/index.js';
import { cliSuite } from './cli-suite.js';
import { redisFixture } from './engines.js';
import { runCli } from './run-cli.js';

const fixture = await redisFixture();
const admin = new Redis(REDIS_URL, { lazyConnect: true });
afterAll(() => admin.disconnect());

/** Connections the CLI holds (it names them verikit-cli). */
const cliConnections = async () =>
  ((await admin.client('LIST')) as string).split('\n').filter((line) => / name=verikit-cli /.test(line)).length;

describe.runIf(fixture.available)('verikit on Redis', () => {
  cliSuite(fixture, cliConnections);

  it('--cluster on a single server is a configuration error (4) in one line: drop --cluster', async () => {
    const result = await runCli(['inbox', 'stats', '--cluster', '--url', REDIS_URL]);
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^verikit: Redis Cluster at 127\.0\.0\.1:6379 is one Redis server, not a Cluster \(cluster support disabled\): drop --cluster\n$/,
    );
  });
});
