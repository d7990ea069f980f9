import type { PostgresInbox, PostgresLedger } from '@verikit/postgres';
import { CliError } from './errors.js';
import { COMMAND_TIMEOUT_MS, CONNECT_TIMEOUT_MS, describeEngine, loadPeer, type Storage, type StorageOptions } from './storage.js';
import type { Target } from './target.js';

/** verikit on PostgreSQL through the app's `@verikit/postgres`, on a small pool of the CLI's own. */
export async function openPostgres(target: Target, options: StorageOptions): Promise<Storage> {
  const [pgModule, engine] = await Promise.all([
    loadPeer('postgres', () => import('pg')),
    loadPeer('postgres', () => import('@verikit/postgres')),
  ]);
  const { Pool } = pgModule.default ?? pgModule;
  const schema = options.schema ?? 'verikit';
  const where = `${target.where} (schema ${schema})`;
  const pool = new Pool({
    connectionString: target.url,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: COMMAND_TIMEOUT_MS,
    application_name: 'verikit-cli',
  });
  // A connection the server ends while idle must not end the CLI: the next query reports it.
  pool.on('error', () => {});
  let inbox: PostgresInbox | undefined;
  let ledger: PostgresLedger | undefined;

  /** The first query: reaches the server (a connection failure surfaces here) and finds the table, or says how to make it. */
  const requireTable = async (table: string) => {
    const { rows } = await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [`"${schema}".${table}`]);
    if (rows[0]?.present !== true)
      throw new CliError(
        'notSetUp',
        `${where} has no ${table} table: the app has not run migrate() on this database, or uses another schema (pass it with --schema)`,
      );
  };

  return {
    ...describeEngine('postgres', where),
    async inbox() {
      if (inbox === undefined) {
        // No upkeep here: pruning and payload retention run in the app, with the app's retention settings.
        inbox = engine.createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0, onError: () => {}, encryption: options.encryption });
        await requireTable('verikit_inbox');
      }
      return inbox;
    },
    async ledger() {
      if (ledger === undefined) {
        ledger = engine.createPostgresLedger({ db: pool, schema, onError: () => {} });
        await requireTable('verikit_ledger');
      }
      return ledger;
    },
    async close() {
      const [ownInbox, ownLedger] = [inbox, ledger];
      inbox = ledger = undefined;
      await ownInbox?.close();
      await ownLedger?.close();
      if (!pool.ended) await pool.end();
    },
  };
}
