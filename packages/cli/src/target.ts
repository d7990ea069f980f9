import { CliError } from './errors.js';

/** The storage engines the CLI drives. */
export type EngineName = 'postgres' | 'redis';

/** Where the CLI connects: the engine, its URL, and how to name it in messages (never with the password). */
export interface Target {
  engine: EngineName;
  url: string;
  /** `PostgreSQL at 127.0.0.1:5432/app`, `Redis at 127.0.0.1:6379/0`. */
  where: string;
  /** Text that must never be printed: the URL and its password, as given and as decoded. */
  secrets: string[];
}

const VARIABLE: Record<EngineName, string> = { postgres: 'DATABASE_URL', redis: 'REDIS_URL' };
const SCHEMES: Record<string, EngineName> = { 'postgres:': 'postgres', 'postgresql:': 'postgres', 'redis:': 'redis', 'rediss:': 'redis' };

/**
 * The URL to connect to: `--url`, else `DATABASE_URL` or `REDIS_URL` (`--engine` picks one when both
 * are set). Its scheme decides the engine. A malformed URL is never echoed: it may hold a password.
 */
export function resolveTarget(flags: { url?: string; engine?: string }, env: Record<string, string | undefined>): Target {
  const { engine } = flags;
  if (engine !== undefined && engine !== 'postgres' && engine !== 'redis')
    throw new CliError('usage', `--engine must be postgres or redis, not ${JSON.stringify(engine)}`);
  let source: string;
  let text: string | undefined;
  if (flags.url !== undefined) {
    [source, text] = ['--url', flags.url];
  } else if (engine !== undefined) {
    source = VARIABLE[engine];
    text = env[source] || undefined;
    if (text === undefined)
      throw new CliError('configuration', `--engine ${engine} reads ${source}, which is not set: set it or pass --url`);
  } else {
    const set = (['postgres', 'redis'] as const).filter((name) => env[VARIABLE[name]]);
    if (set.length === 0) throw new CliError('configuration', 'set DATABASE_URL (PostgreSQL) or REDIS_URL (Redis), or pass --url');
    if (set.length === 2)
      throw new CliError(
        'usage',
        'both DATABASE_URL and REDIS_URL are set: say which verikit uses with --engine postgres|redis, or pass --url',
      );
    source = VARIABLE[set[0] as EngineName];
    text = env[source];
  }
  let url: URL;
  try {
    url = new URL(text ?? '');
  } catch {
    throw new CliError('configuration', `${source} is not a valid URL (postgres://user:password@host:5432/db or redis://host:6379)`);
  }
  const scheme = SCHEMES[url.protocol];
  if (scheme === undefined)
    throw new CliError(
      'configuration',
      `${source} has the scheme ${JSON.stringify(url.protocol)}: the CLI connects to postgres://, postgresql://, redis:// or rediss://`,
    );
  if (engine !== undefined && engine !== scheme)
    throw new CliError('usage', `--engine ${engine} does not match the ${scheme} URL in ${source}`);
  const port = url.port || (scheme === 'postgres' ? '5432' : '6379');
  const path = url.pathname.length > 1 ? url.pathname : '';
  const password = url.password;
  return {
    engine: scheme,
    url: text as string,
    where: `${scheme === 'postgres' ? 'PostgreSQL' : 'Redis'} at ${url.hostname}:${port}${path}`,
    secrets: [text as string, ...(password ? [password, safeDecode(password)] : [])],
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
