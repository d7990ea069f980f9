import { readFileSync } from 'node:fs';
import type { EncryptionOptions, InboxAdmin, InboxEngine, LedgerAdmin, LedgerEngine } from '@verikit/core';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import { createRedisInbox, createRedisLedger, type RedisClient } from '@verikit/redis';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { dumpSchema } from '../../../test-support/postgres-raw-dump.js';
import type { LocalRedisCluster } from '../../../test-support/redis-cluster.js';
import { rawScan, removeKeys } from '../../../test-support/redis-raw-scan.js';
import { POSTGRES_URL, REDIS_URL, requireService } from '../../../test-support/services.js';

/** The app's side of one namespace: what the app would make over the storage the CLI is pointed at. */
export type AppInbox = InboxEngine & InboxAdmin;
export type AppLedger = LedgerEngine & LedgerAdmin;

/** One fresh, empty storage (a schema, a key prefix of its own), as an app set it up. */
export interface Namespace {
  /** The CLI arguments that point it here: the URL and the app's names. */
  args: string[];
  /** An inbox over it as the app makes one (`encryption` as the app's). */
  inbox(options?: { encryption?: EncryptionOptions }): AppInbox;
  /** The ledger over it. */
  ledger(): AppLedger;
  /** Everything stored here, read raw (around verikit): every row of every table, every value of every key. */
  dump(): Promise<string>;
}

/** An engine the CLI is tested on. */
export interface EngineFixture {
  name: 'postgres' | 'redis';
  /** How messages name it. */
  where: RegExp;
  /** Whether its server is reachable here (else the suite is skipped, or fails with VERIKIT_REQUIRE_SERVICES=1). */
  available: boolean;
  fresh(): Promise<Namespace>;
  /** Arguments pointing at a namespace the app never set up (no tables, no queue). */
  notSetUp(): string[];
  /** Closes what `fresh` opened and removes every namespace made. */
  close(): Promise<void>;
}

let made = 0;
const unique = () => `${process.pid}_${Date.now().toString(36)}_${++made}`;

/** verikit on the real PostgreSQL server: a schema per namespace, dropped at the end. */
export async function postgresFixture(): Promise<EngineFixture> {
  const available = await requireService('PostgreSQL', POSTGRES_URL);
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
  const schemas: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  return {
    name: 'postgres',
    where: /PostgreSQL at 127\.0\.0\.1:5432\/test/,
    available,
    async fresh() {
      const schema = `verikit_cli_${unique()}`;
      schemas.push(schema);
      const make = (options: { encryption?: EncryptionOptions } = {}) => {
        const inbox = createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0, ...options }) as unknown as AppInbox;
        closers.push(() => (inbox as unknown as { close(): Promise<void> }).close());
        return inbox;
      };
      await (make() as unknown as { migrate(): Promise<void> }).migrate();
      return {
        args: ['--url', POSTGRES_URL, '--schema', schema],
        inbox: make,
        ledger: () => createPostgresLedger({ db: pool, schema }) as unknown as AppLedger,
        // Every column of every table in the schema, read raw.
        dump: () => dumpSchema(pool, schema),
      };
    },
    notSetUp: () => ['--url', POSTGRES_URL, '--schema', `verikit_cli_never_${unique()}`],
    async close() {
      for (const close of closers) await close();
      for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    },
  };
}

/** verikit on the real Redis server: the CLI given its URL. */
export async function redisFixture(): Promise<EngineFixture> {
  return redisEngineFixture({
    available: await requireService('Redis', REDIS_URL),
    where: /Redis at 127\.0\.0\.1:6379/,
    client: () => new Redis(REDIS_URL),
    connection: () => ['--url', REDIS_URL],
  });
}

/**
 * The URL of one node of `cluster`, with the password when it has one. Over TLS by name, as a managed
 * Cluster's endpoint is: the CLI checks the certificate against it.
 */
export function nodeUrl(cluster: LocalRedisCluster, port: number, options: { password?: string } = {}): string {
  const [scheme, host] = cluster.caFile === undefined ? ['redis', '127.0.0.1'] : ['rediss', 'localhost'];
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  return `${scheme}://${auth}${host}:${port}`;
}

/** The URLs of a Cluster's first two nodes, as `--cluster` takes seeds: comma-separated. */
export const seedUrls = (cluster: LocalRedisCluster, options: { password?: string } = {}): string =>
  cluster.startupNodes
    .slice(0, 2)
    .map(({ port }) => nodeUrl(cluster, port, options))
    .join(',');

/** An app's ioredis `Cluster` on `cluster`: its password and, over TLS, its certificate trusted and checked against the nodes' names. */
export function appCluster(cluster: LocalRedisCluster, options: { password?: string } = {}): Cluster {
  return new Cluster(cluster.startupNodes, {
    ...(cluster.caFile !== undefined && { dnsLookup: (address, callback) => callback(null, address) }),
    redisOptions: {
      ...(options.password !== undefined && { password: options.password }),
      ...(cluster.caFile !== undefined && { tls: { ca: readFileSync(cluster.caFile) } }),
    },
  });
}

/**
 * verikit on a Redis Cluster of the test's own (started before the first namespace is made): the CLI
 * given `--cluster` and two seeds. Over TLS, the CLI must trust the Cluster's certificate
 * (`NODE_EXTRA_CA_CERTS`, which it inherits).
 */
export function redisClusterFixture(cluster: () => LocalRedisCluster, options: { password?: string } = {}): EngineFixture {
  return redisEngineFixture({
    available: true,
    where: /Redis Cluster at (127\.0\.0\.1|localhost):\d+, (127\.0\.0\.1|localhost):\d+/,
    client: () => appCluster(cluster(), options),
    connection: () => ['--cluster', '--url', seedUrls(cluster(), options)],
  });
}

/**
 * verikit on Redis through the app's `client` (made at the first namespace), the CLI pointed at it by
 * `connection`: a BullMQ prefix and a ledger prefix per namespace (on a Cluster, each namespace's
 * hash tag puts it on one master, different namespaces on different ones), deleted at the end.
 */
function redisEngineFixture(options: {
  available: boolean;
  where: RegExp;
  client: () => RedisClient;
  connection: () => string[];
}): EngineFixture {
  let client: RedisClient | undefined;
  const prefixes: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  return {
    name: 'redis',
    where: options.where,
    available: options.available,
    async fresh() {
      client ??= options.client();
      const redis = client;
      const name = `vkcli-${unique()}`;
      const prefix = `{${name}}`;
      const ledgerPrefix = `${name}:ledger:`;
      prefixes.push(prefix, ledgerPrefix);
      const make = (inboxOptions: { encryption?: EncryptionOptions } = {}) => {
        const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false, ...inboxOptions });
        closers.push(() => inbox.close());
        return inbox as unknown as AppInbox;
      };
      make();
      // BullMQ writes the queue's meta key once the Queue is ready: the mark of an app that ran.
      for (let i = 0; (await redis.exists(`${prefix}:verikit-inbox:meta`)) === 0; i++) {
        if (i > 200) throw new Error('the inbox queue was not set up');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return {
        args: [...options.connection(), '--prefix', prefix, '--ledger-prefix', ledgerPrefix],
        inbox: make,
        ledger: () => createRedisLedger({ redis, prefix: ledgerPrefix, persistence: 'ignore', logger: false }) as unknown as AppLedger,
        // Every key under both prefixes (on every master of a Cluster), each value read by its type.
        dump: async () => (await rawScan(redis, [prefix, ledgerPrefix])).text,
      };
    },
    notSetUp: () => [...options.connection(), '--prefix', `{vkcli-never-${unique()}}`],
    async close() {
      for (const close of closers) await close();
      if (client === undefined) return;
      await removeKeys(client, prefixes);
      await client.quit();
    },
  };
}
