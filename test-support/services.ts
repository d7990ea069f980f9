import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';

/**
 * The PostgreSQL server the real-server suites use: `VERIKIT_TEST_DATABASE_URL`, else the local one
 * these machines run (127.0.0.1:5432, trust auth, database `test`).
 */
export const POSTGRES_URL = process.env.VERIKIT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Whether something accepts TCP connections at `url`'s host and port, within a second. */
export function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Decides whether a real-server suite runs. In CI (`VERIKIT_REQUIRE_SERVICES=1`) a missing server is
 * a failure; elsewhere the suite is skipped and says so, so a newcomer without the server sees why.
 */
export async function requireService(name: string, url: string): Promise<boolean> {
  if (await reachable(url)) return true;
  const where = new URL(url);
  const message = `${name} is not reachable at ${where.hostname}:${where.port}`;
  if (process.env.VERIKIT_REQUIRE_SERVICES === '1') throw new Error(`${message}, and VERIKIT_REQUIRE_SERVICES=1 requires it`);
  console.warn(`SKIPPED: the ${name} suites did not run (${message}); start it, or set the URL, to run them.`);
  return false;
}

/** The Redis server the real-server suites use: `VERIKIT_TEST_REDIS_URL`, else the local one (127.0.0.1:6379). */
export const REDIS_URL = process.env.VERIKIT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether every one of `commands` can be run here (each answers `--version`, or the arguments given
 * after it: `['openssl', 'version']`). Like {@link requireService}: in CI (`VERIKIT_REQUIRE_SERVICES=1`)
 * a missing one is a failure; elsewhere the suites named `what` are skipped and say so.
 */
export function requireCommands(what: string, commands: Array<string | [string, ...string[]]>): boolean {
  const missing = commands
    .map((entry) => (typeof entry === 'string' ? [entry, '--version'] : entry) as [string, ...string[]])
    .filter(([command, ...args]) => spawnSync(command, args).status !== 0)
    .map(([command]) => command);
  if (missing.length === 0) return true;
  const message = `${missing.join(' and ')} not on the PATH`;
  if (process.env.VERIKIT_REQUIRE_SERVICES === '1') throw new Error(`${message}, and VERIKIT_REQUIRE_SERVICES=1 requires it`);
  console.warn(`SKIPPED: the ${what} suites did not run (${message}); install ${missing.join(' and ')} to run them.`);
  return false;
}
