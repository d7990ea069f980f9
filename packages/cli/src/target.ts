import { CliError } from './errors.js';

/** The storage engines the CLI drives. */
export type EngineName = 'postgres' | 'redis';

/** How Redis is addressed: one server, or a Redis Cluster through seed nodes (`--cluster`). */
export type RedisMode = 'server' | 'cluster';

/** A Redis Cluster as the CLI reaches it: nodes to start from, and the credentials and TLS every node takes. */
export interface ClusterSeeds {
  /** The seed nodes, in the order given; the client learns the others from the first that answers. */
  nodes: Array<{ host: string; port: number }>;
  username?: string;
  password?: string;
  /** `rediss://`: every node over TLS. */
  tls: boolean;
}

/** Where the CLI connects: the engine, its URL, and how to name it in messages (never with the password). */
export interface Target {
  engine: EngineName;
  /** The URL as given (with `--cluster`, one or more seed URLs, comma-separated). */
  url: string;
  /** With `--cluster`: the Cluster's seed nodes, credentials and TLS. */
  cluster?: ClusterSeeds;
  /** `PostgreSQL at 127.0.0.1:5432/app`, `Redis at 127.0.0.1:6379/0`, `Redis Cluster at 10.0.1.11:6379, 10.0.2.12:6379`. */
  where: string;
  /** Text that must never be printed: the URL and its password, as given and as decoded. */
  secrets: string[];
}

const VARIABLE: Record<EngineName, string> = { postgres: 'DATABASE_URL', redis: 'REDIS_URL' };
const SCHEMES: Record<string, EngineName> = { 'postgres:': 'postgres', 'postgresql:': 'postgres', 'redis:': 'redis', 'rediss:': 'redis' };
const EXAMPLE = 'postgres://user:password@host:5432/db or redis://host:6379';
// Seed URLs are split before each scheme, not at every comma: a password may hold one.
const SEED_SEPARATOR = /,(?=[a-z][a-z0-9+.-]*:\/\/)/i;

/**
 * The URL to connect to: `--url`, else `DATABASE_URL` or `REDIS_URL` (`--engine` picks one when both
 * are set; `--cluster` picks `REDIS_URL`). Its scheme decides the engine. With `--cluster` it is one
 * or more seed URLs of a Redis Cluster, comma-separated. A malformed URL is never echoed: it may hold
 * a password.
 */
export function resolveTarget(
  flags: { url?: string; engine?: string; cluster?: boolean },
  env: Record<string, string | undefined>,
): Target {
  const { engine, cluster = false } = flags;
  if (engine !== undefined && engine !== 'postgres' && engine !== 'redis')
    throw new CliError('usage', `--engine must be postgres or redis, not ${JSON.stringify(engine)}`);
  if (cluster && engine === 'postgres') throw new CliError('usage', '--cluster is for a Redis Cluster, not --engine postgres');
  const picked = engine ?? (cluster ? 'redis' : undefined);
  let source: string;
  let text: string | undefined;
  if (flags.url !== undefined) {
    [source, text] = ['--url', flags.url];
  } else if (picked !== undefined) {
    source = VARIABLE[picked];
    text = env[source] || undefined;
    if (text === undefined)
      throw new CliError(
        'configuration',
        `${engine === undefined ? '--cluster' : `--engine ${engine}`} reads ${source}, which is not set: set it or pass --url`,
      );
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
  const given = text as string;
  const parts = given.split(SEED_SEPARATOR);
  if (parts.length > 1 && !cluster)
    throw new CliError(
      'configuration',
      `${source} holds ${parts.length} URLs: several are the seed nodes of a Redis Cluster, which the CLI reaches with --cluster`,
    );
  const urls = parts.map((part, i) => parseUrl(part, parts.length > 1 ? `seed ${i + 1} of ${source}` : source));
  const scheme = SCHEMES[(urls[0] as URL).protocol] as EngineName;
  if (engine !== undefined && engine !== scheme)
    throw new CliError('usage', `--engine ${engine} does not match the ${scheme} URL in ${source}`);
  if (cluster && urls.some((url) => SCHEMES[url.protocol] !== 'redis'))
    throw new CliError('usage', `--cluster is for a Redis Cluster, and ${source} holds a PostgreSQL URL`);
  const secrets = [given, ...urls.flatMap(({ password }) => (password ? [password, safeDecode(password)] : []))];
  if (cluster) {
    const seeds = clusterSeeds(urls, source);
    return {
      engine: 'redis',
      url: given,
      cluster: seeds,
      where: `Redis Cluster at ${seeds.nodes.map(({ host, port }) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(', ')}`,
      secrets,
    };
  }
  const url = urls[0] as URL;
  const port = url.port || (scheme === 'postgres' ? '5432' : '6379');
  const path = url.pathname.length > 1 ? url.pathname : '';
  return {
    engine: scheme,
    url: given,
    where: `${scheme === 'postgres' ? 'PostgreSQL' : 'Redis'} at ${url.hostname}:${port}${path}`,
    secrets,
  };
}

/** How `target` addresses Redis; undefined on PostgreSQL. */
export const redisModeOf = (target: Target): RedisMode | undefined =>
  target.engine === 'postgres' ? undefined : target.cluster === undefined ? 'server' : 'cluster';

/** One URL of `source`, with a scheme the CLI connects to. */
function parseUrl(text: string, source: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError('configuration', `${source} is not a valid URL (${EXAMPLE})`);
  }
  if (SCHEMES[url.protocol] === undefined)
    throw new CliError(
      'configuration',
      `${source} has the scheme ${JSON.stringify(url.protocol)}: the CLI connects to postgres://, postgresql://, redis:// or rediss://`,
    );
  return url;
}

/**
 * A Cluster's seeds from their URLs. ioredis applies one set of credentials and TLS to every node it
 * finds, so the seeds must agree on them; a Cluster has database 0 only, and takes no URL options.
 */
function clusterSeeds(urls: URL[], source: string): ClusterSeeds {
  const [first] = urls as [URL, ...URL[]];
  if (urls.some((url) => url.protocol !== first.protocol))
    throw new CliError(
      'configuration',
      `the seeds in ${source} mix redis:// and rediss://: a Cluster's nodes are all TLS (rediss://) or none`,
    );
  const credentials = new Set(urls.filter((url) => url.username || url.password).map((url) => `${url.username}:${url.password}`));
  if (credentials.size > 1)
    throw new CliError(
      'configuration',
      `the seeds in ${source} give different users or passwords: give the Cluster's once, or the same on each`,
    );
  if (urls.some((url) => !['', '/', '/0'].includes(url.pathname)))
    throw new CliError('configuration', `a Redis Cluster has database 0 only: remove the /<db> from ${source}`);
  if (urls.some((url) => url.search !== ''))
    throw new CliError('configuration', `--cluster takes seed URLs without options (?...): remove them from ${source}`);
  const withCredentials = urls.find((url) => url.username || url.password);
  return {
    // WHATWG URL keeps an IPv6 address in brackets; sockets take it without.
    nodes: urls.map((url) => ({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || '6379') })),
    ...(withCredentials?.username && { username: safeDecode(withCredentials.username) }),
    ...(withCredentials?.password && { password: safeDecode(withCredentials.password) }),
    tls: first.protocol === 'rediss:',
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
