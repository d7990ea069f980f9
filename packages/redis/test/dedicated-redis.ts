import { type ChildProcess, spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../../../test-support/readme-snippet.js';
import { requireCommands } from '../../../test-support/services.js';

/** A redis-server of a test's own, on a free loopback port, keeping nothing on disk: its settings are the test's to change. */
export interface DedicatedRedis {
  url: string;
  /** A client for the test's own commands (CONFIG SET ...). */
  admin: Redis;
  /** Stops the server, its process group included. */
  stop(): Promise<void>;
}

/**
 * Whether `redis-server` can be started here. Like `requireService`: a failure when
 * `VERIKIT_REQUIRE_SERVICES=1`, else the suite is skipped and says why.
 */
export function requireRedisServerBinary(): boolean {
  return requireCommands('dedicated Redis', ['redis-server']);
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode === null ? child.once('exit', () => resolve()) : resolve()));

/** Starts a redis-server in a process group of its own, answering PING. */
export async function startDedicatedRedis(): Promise<DedicatedRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    { detached: true, stdio: 'ignore' },
  );
  const stop = async () => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    await exited(child);
  };
  const url = `redis://127.0.0.1:${port}`;
  const admin = new Redis(url, { maxRetriesPerRequest: null, retryStrategy: () => 50 });
  admin.on('error', () => {});
  try {
    await Promise.race([admin.ping(), exited(child).then(() => Promise.reject(new Error(`redis-server did not start on port ${port}`)))]);
  } catch (error) {
    admin.disconnect();
    await stop();
    throw error;
  }
  return {
    url,
    admin,
    stop: async () => {
      admin.disconnect();
      await stop();
    },
  };
}
