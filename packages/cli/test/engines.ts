import type { EncryptionOptions, InboxAdmin, InboxEngine, LedgerAdmin, LedgerEngine } from '@verikit/core';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import { createRedisInbox, createRedisLedger } from '@verikit/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { dumpSchema } from '../../../test-support/postgres-raw-dump.js';
import { rawScan } from '../../../test-support/redis-raw-scan.js';
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

/** verikit on the real Redis server: a BullMQ prefix and a ledger prefix per namespace, deleted at the end. */
export async function redisFixture(): Promise<EngineFixture> {
  const available = await requireService('Redis', REDIS_URL);
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  if (available) await redis.connect();
  const names: string[] = [];
  const closers: Array<() => Promise<void>> = [];
  const keysOf = async (name: string) => {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `*${name}*`, 'COUNT', 1_000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return keys;
  };
  return {
    name: 'redis',
    where: /Redis at 127\.0\.0\.1:6379/,
    available,
    async fresh() {
      const name = `vkcli-${unique()}`;
      names.push(name);
      const prefix = `{${name}}`;
      const ledgerPrefix = `${name}:ledger:`;
      const make = (options: { encryption?: EncryptionOptions } = {}) => {
        const inbox = createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false, ...options });
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
        args: ['--url', REDIS_URL, '--prefix', prefix, '--ledger-prefix', ledgerPrefix],
        inbox: make,
        ledger: () => createRedisLedger({ redis, prefix: ledgerPrefix, persistence: 'ignore', logger: false }) as unknown as AppLedger,
        // The Redis engine's own raw scan: every key under both prefixes, each value read by its type.
        dump: async () => (await rawScan(redis, [prefix, ledgerPrefix])).text,
      };
    },
    notSetUp: () => ['--url', REDIS_URL, '--prefix', `{vkcli-never-${unique()}}`],
    async close() {
      for (const close of closers) await close();
      for (const name of names) {
        const keys = await keysOf(name);
        if (keys.length > 0) await redis.del(...keys);
      }
      if (available) await redis.quit();
    },
  };
}
