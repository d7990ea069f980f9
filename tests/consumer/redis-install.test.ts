import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../../test-support/readme-snippet.js';
import { REDIS_URL, requireService } from '../../test-support/services.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
/** `npm install ...args` in `cwd`: what it printed on stderr, with the failure when it failed. */
const npmInstall = (cwd: string, args: string[]) =>
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...args], { cwd, timeout: 240_000 }).then(
    ({ stderr }) => stderr,
    (error: { stderr?: string; message: string }) => `npm install failed: ${error.stderr || error.message}`,
  );
const serverAvailable = await requireService('Redis', REDIS_URL);

// What the README tells a user to run, with ioredis and BullMQ left for npm to choose (their newest
// majors): an install whose peers conflict warns the first time and fails with ERESOLVE the next.
describe('npm install @verikit/redis @verikit/core ioredis bullmq, in a scratch project', () => {
  let dir: string;
  let first: string;
  let second: string;
  const tarball = (name: string) => `./${readdirSync(dir).find((f) => f.startsWith(`verikit-${name}-`) && f.endsWith('.tgz'))}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verikit-redis-install-'));
    for (const name of ['core', 'redis', 'testing'])
      await run('pnpm', ['pack', '--pack-destination', dir], { cwd: join(root, 'packages', name) });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'redis-consumer', private: true, type: 'module' }));
    first = await npmInstall(dir, [tarball('redis'), tarball('core'), 'ioredis', 'bullmq']);
    second = await npmInstall(dir, ['--save-dev', tarball('testing')]);
  }, 600_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('installs without a peer conflict, and the next npm install (of @verikit/testing) succeeds', async () => {
    // Each install's stderr where it warned of a peer conflict or failed: on both, nothing.
    expect([first, second].filter((stderr) => /ERESOLVE|npm install failed/.test(stderr))).toEqual([]);
    // npm ls exits non-zero on an invalid or missing peer anywhere in the tree.
    await run('npm', ['ls', '--all'], { cwd: dir });
  });

  it.runIf(serverAvailable)("the README's snippet runs on the ioredis and BullMQ npm chose: 204, then the event handled once", async () => {
    const readme = readFileSync(join(root, 'packages/redis/README.md'), 'utf8');
    const file = join(dir, 'inbox.mjs');
    writeFileSync(file, /```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? '');
    // NODE_PATH emptied: `pnpm test` puts pnpm's store on it, where a user's project has nothing.
    const env = { NODE_PATH: '', REDIS_URL, VERIKIT_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
    const snippet = runScript(file, dir, env);
    const redis = new Redis(REDIS_URL);
    try {
      const output = await snippet.waitFor('once', 30_000);
      expect(output).toMatch(/answer 204\n[\s\S]*handled msg_\S+ once/);
    } finally {
      snippet.stop();
      const pid = snippet.child.pid as number;
      const keys = [...(await redis.keys(`{verikit}:readme-${pid}:*`)), `readme:${pid}:results`];
      await redis.del(...keys);
      redis.disconnect();
    }
  });
});
