import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminStorage, inboxAdminCases } from '../../../test-support/inbox-admin.js';
import { dumpSchema } from '../../../test-support/postgres-raw-dump.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { createPostgresInbox, createPostgresLedger, type PostgresInbox, type PostgresInboxOptions, type Queryable } from '../src/index.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
const prefix = `verikit_admin_${process.pid}_${Date.now().toString(36)}`;
let schemas = 0;
const key32 = () => crypto.getRandomValues(new Uint8Array(32));

/** The inbox table as verikit 0.1 created it (payload NOT NULL, no index of kept bodies), verbatim. */
const previousInboxTable = (schema: string) => [
  `CREATE SCHEMA ${schema}`,
  `CREATE TABLE ${schema}.verikit_inbox (
  id text PRIMARY KEY,
  payload text NOT NULL,
  svix_timestamp bigint NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  next_run_at timestamptz DEFAULT now(),
  leased_until timestamptz,
  owner text,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'dead')),
  last_error text,
  finished_at timestamptz,
  CONSTRAINT verikit_inbox_due_when_pending CHECK ((state = 'pending') = (next_run_at IS NOT NULL))
)`,
  `CREATE INDEX verikit_inbox_due ON ${schema}.verikit_inbox (next_run_at) WHERE next_run_at IS NOT NULL`,
  `CREATE INDEX verikit_inbox_finished ON ${schema}.verikit_inbox (finished_at) WHERE state = 'done'`,
  `CREATE INDEX verikit_inbox_dead ON ${schema}.verikit_inbox (received_at) WHERE state = 'dead'`,
];

function adminSuite(name: string, open: () => Promise<{ db: Queryable; close(): Promise<void> }>, { embedded }: { embedded: boolean }) {
  describe(`${name}: InboxAdmin, payload retention, encryption at rest`, () => {
    let db: Queryable;
    let close: () => Promise<void>;
    const inboxes: PostgresInbox[] = [];
    beforeAll(async () => {
      ({ db, close } = await open());
    });
    afterAll(async () => {
      for (const inbox of inboxes) await inbox.close();
      const { rows } = await db.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`${prefix}_%`]);
      for (const row of rows) await db.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
      await close?.();
    });
    const inboxOn = async (schema: string, options: Partial<PostgresInboxOptions> = {}) => {
      // Upkeep runs when the test says (prune()), not on a timer beside it.
      const inbox = createPostgresInbox({ db, schema, pruneIntervalMs: 0, ...options });
      inboxes.push(inbox);
      await inbox.migrate();
      return inbox;
    };

    const fresh = async (): Promise<AdminStorage> => {
      const schema = `${prefix}_${++schemas}`;
      return {
        inbox: (options) => inboxOn(schema, options),
        async age(id, ms) {
          await db.query(
            `UPDATE ${schema}.verikit_inbox SET received_at = received_at - $2 * interval '1 millisecond',
              finished_at = finished_at - $2 * interval '1 millisecond' WHERE id = $1`,
            [id, ms],
          );
        },
        async upkeep(inbox) {
          await (inbox as PostgresInbox).prune();
        },
        dump: () => dumpSchema(db, schema),
        async ledger() {
          const ledger = createPostgresLedger({ db, schema });
          await ledger.migrate();
          return ledger;
        },
      };
    };

    inboxAdminCases(fresh);

    it('payloadRetentionMs 0 removes the body in the statement that marks the event done, before any upkeep', async () => {
      const schema = `${prefix}_${++schemas}`;
      const inbox = await inboxOn(schema, { payloadRetentionMs: 0 });
      await inbox.accept({ id: 'msg_zero', timestamp: 1, body: '{"type":"kyb.case.status_changed"}' });
      const [event] = await inbox.lease('owner-zero', 1, 60_000);
      expect(await inbox.complete(event as NonNullable<typeof event>, async () => {})).toBe('ok');
      const { rows } = await db.query(`SELECT state, payload FROM ${schema}.verikit_inbox`);
      expect(rows).toEqual([{ state: 'done', payload: null }]);
    });

    it('migrate() upgrades a table the previous schema made, rows and all, from several instances at once', async () => {
      const schema = `${prefix}_${++schemas}`;
      for (const sql of previousInboxTable(schema)) await db.query(sql);
      const table = `${schema}.verikit_inbox`;
      await db.query(
        `INSERT INTO ${table} (id, payload, svix_timestamp, state, next_run_at, finished_at, attempts, last_error) VALUES
          ('msg_old_pending', '{"type":"kyb.case.status_changed","data":{"refId":"old-1"}}', 1, 'pending', now(), NULL, 0, NULL),
          ('msg_old_done', '{"type":"kyb.case.status_changed","data":{"refId":"old-2"}}', 1, 'done', NULL, now() - interval '2 hours', 1, NULL),
          ('msg_old_dead', '{"type":"kyb.case.status_changed","data":{"refId":"old-3"}}', 1, 'dead', NULL, now(), 8, 'Error: gave up')`,
      );
      const instances = [0, 1, 2].map(() => createPostgresInbox({ db, schema, pruneIntervalMs: 0 }));
      inboxes.push(...instances);
      await Promise.all(instances.map((inbox) => inbox.migrate()));
      await instances[0]?.migrate(); // and again, at the next start

      const { rows: columns } = await db.query(
        "SELECT is_nullable FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'verikit_inbox' AND column_name = 'payload'",
        [schema],
      );
      expect(columns).toEqual([{ is_nullable: 'YES' }]);
      expect(await fillfactorOf(schema)).toEqual(['fillfactor=80']);
      const { rows: indexes } = await db.query('SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY 1', [
        schema,
        'verikit_inbox',
      ]);
      expect(indexes.map((row) => row.indexname)).toEqual([
        'verikit_inbox_dead',
        'verikit_inbox_due',
        'verikit_inbox_finished',
        'verikit_inbox_kept',
        'verikit_inbox_pkey',
      ]);

      const inbox = instances[1] as PostgresInbox;
      expect(await inbox.get('msg_old_dead', { withPayload: true })).toMatchObject({
        state: 'dead',
        attempts: 8,
        lastError: 'Error: gave up',
        body: '{"type":"kyb.case.status_changed","data":{"refId":"old-3"}}',
      });
      // The old done row's body is past the default retention: the first upkeep removes it, which the old column refused.
      expect(await inbox.prune()).toBe(1);
      expect(await inbox.get('msg_old_done')).toMatchObject({ state: 'done', payload: 'removed' });
      const [event] = await inbox.lease('owner-upgraded', 10, 60_000);
      expect(event).toMatchObject({ id: 'msg_old_pending', body: '{"type":"kyb.case.status_changed","data":{"refId":"old-1"}}' });
      expect(await inbox.erase({ kind: 'kyb', refId: 'old-3' })).toEqual({ erased: 1 });
      expect(await inbox.accept({ id: 'msg_new', timestamp: 1, body: '{}' })).toBe('accepted');
    });

    it('the inbox table leaves room on its pages for a lease to stay HOT (fillfactor 80), and keeps a fillfactor an operator set', async () => {
      const fresh = `${prefix}_${++schemas}`;
      const inbox = createPostgresInbox({ db, schema: fresh, pruneIntervalMs: 0 });
      inboxes.push(inbox);
      await inbox.migrate();
      expect(await fillfactorOf(fresh)).toEqual(['fillfactor=80']);
      await db.query(`ALTER TABLE ${fresh}.verikit_inbox SET (fillfactor = 60)`);
      await inbox.migrate();
      expect(await fillfactorOf(fresh)).toEqual(['fillfactor=60']);
    });

    /** The inbox table's fillfactor setting, as the catalog holds it (none: PostgreSQL's default, 100). */
    async function fillfactorOf(schema: string): Promise<string[]> {
      const { rows } = await db.query(
        "SELECT option FROM pg_class, unnest(reloptions) AS option WHERE pg_class.oid = $1::regclass AND option LIKE 'fillfactor=%'",
        [`${schema}.verikit_inbox`],
      );
      return rows.map((row) => String(row.option));
    }

    // The race is staged by wrapping PGlite's query (a pool's statements run on its clients); the SQL is the server's too.
    if (embedded)
      it('reseal never overwrites a body that changed between its read and its write (erased, or re-sealed by another instance)', async () => {
        const schema = `${prefix}_${++schemas}`;
        const table = `${schema}.verikit_inbox`;
        const k1 = { id: 'k1', key: key32() };
        const k2 = { id: 'k2', key: key32() };
        const old = await inboxOn(schema, { encryption: { keys: [k1] } });
        for (const id of ['msg_race_a', 'msg_race_b', 'msg_race_c'])
          await old.accept({ id, timestamp: 1, body: JSON.stringify({ type: 'kyb.case.status_changed', data: { refId: id } }) });
        const elsewhere = await inboxOn(schema, { encryption: { keys: [k2, k1] } });
        // Between this reseal's read and its write: an erasure takes a's body, another instance re-seals b and c.
        let whatElsewhereLeft: Array<Record<string, unknown>> = [];
        let meanwhile: (() => Promise<void>) | undefined = async () => {
          await db.query(
            `UPDATE ${table} SET payload = NULL, state = 'done', next_run_at = NULL, finished_at = now() WHERE id = 'msg_race_a'`,
          );
          expect(await elsewhere.reseal()).toEqual({ resealed: 2 });
          whatElsewhereLeft = (await db.query(`SELECT id, payload FROM ${table} ORDER BY id`)).rows;
        };
        const racing: Queryable = new Proxy(db as Queryable & object, {
          get(target, property) {
            if (property === 'query')
              return async (text: string, params?: unknown[]) => {
                if (text.includes('json_to_recordset') && meanwhile !== undefined) {
                  const run = meanwhile;
                  meanwhile = undefined;
                  await run();
                }
                return target.query(text, params);
              };
            const value = Reflect.get(target, property, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
        const inbox = createPostgresInbox({ db: racing, schema, pruneIntervalMs: 0, encryption: { keys: [k2, k1] } });
        inboxes.push(inbox);
        expect(await inbox.reseal()).toEqual({ resealed: 0 });
        expect(meanwhile).toBeUndefined();
        const after = (await db.query(`SELECT id, payload FROM ${table} ORDER BY id`)).rows;
        expect(after).toEqual(whatElsewhereLeft);
        expect(after.map((row) => (row.payload === null ? null : String(row.payload).slice(0, 7)))).toEqual([null, 'vk1.k2.', 'vk1.k2.']);
        for (const id of ['msg_race_b', 'msg_race_c'])
          expect(JSON.parse((await inbox.get(id, { withPayload: true }))?.body as string).data.refId).toBe(id);
      });
  });
}

adminSuite(
  'PGlite',
  async () => {
    const db = new PGlite();
    return { db, close: () => db.close() };
  },
  { embedded: true },
);

describe.runIf(serverAvailable)('PostgreSQL server', () => {
  adminSuite(
    'PostgreSQL server',
    async () => {
      const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 6 });
      return { db: pool, close: () => pool.end() };
    },
    { embedded: false },
  );
});

describe('createPostgresInbox: retention and encryption options', () => {
  const db = new PGlite();
  afterAll(() => db.close());
  it.each([
    [{ payloadRetentionMs: -1 }, 'payloadRetentionMs'],
    [{ payloadRetentionMs: Number.NaN }, 'payloadRetentionMs'],
    [{ deadLetterRetentionMs: 0 }, 'deadLetterRetentionMs'],
    [{ encryption: { keys: [] } }, 'encryption'],
    [{ encryption: { keys: [{ id: 'k1', key: 'c2hvcnQ=' }] } }, 'encryption.keys[0].key'],
  ])('refuses %j at creation (a ConfigurationError naming %s)', (options, option) => {
    expect(() => createPostgresInbox({ db, ...(options as Partial<PostgresInboxOptions>) })).toThrow(
      expect.objectContaining({ code: 'invalid_config', option }),
    );
  });
});
