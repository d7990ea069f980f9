import { PGlite } from '@electric-sql/pglite';
import { createWebhookHandler } from '@verikit/core';
import { idempotencyStoreContract, signWebhook } from '@verikit/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { createPostgresStore, type Queryable } from '../src/index.js';

// Each run gets its own schema, so parallel or repeated runs never collide.
const schema = `verikit_test_${process.pid}_${Date.now().toString(36)}`;
const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);

/** The suites every engine runs: the store contract, and the store under the real webhook handler. */
function engineSuite(name: string, open: () => Promise<{ db: Queryable; close(): Promise<void> }>, sharesWallClock = false) {
  describe(`${name}: the store contract`, () => {
    let db: Queryable;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ db, close } = await open());
      await createPostgresStore({ db, schema }).migrate();
    });
    afterAll(async () => close?.());

    for (const c of idempotencyStoreContract({
      createStore: ({ retentionMs }) => createPostgresStore({ db, schema, retentionMs }),
      sharesWallClock,
    })) {
      it(c.name, c.run);
    }

    it('migrate() runs from several instances at once, and again, without error', async () => {
      await Promise.all(Array.from({ length: 5 }, () => createPostgresStore({ db, schema: `${schema}_m` }).migrate()));
      await createPostgresStore({ db, schema: `${schema}_m` }).migrate();
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${schema}_m.verikit_receipts`);
      expect(rows[0]?.n).toBe(0);
    });

    it('prune() deletes expired rows in batches and keeps live ones', async () => {
      const store = createPostgresStore({ db, schema, retentionMs: 50, pruneBatchSize: 7, pruneIntervalMs: 0 });
      const prefix = `prune-${Math.random().toString(36).slice(2)}`;
      for (let i = 0; i < 20; i++) {
        const claim = await store.claim(`${prefix}-${i}`, { leaseMs: 60_000 });
        if (i < 15 && claim.status === 'claimed') await store.complete(claim.lease);
      }
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await store.prune()).toBeGreaterThanOrEqual(15);
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${schema}.verikit_receipts WHERE id LIKE $1`, [`${prefix}-%`]);
      expect(rows[0]?.n).toBe(5);
    });

    it('two webhook handlers sharing the store run onEvent once for a delivery sent to both', async () => {
      const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
      const ran: string[] = [];
      const handler = (instance: string) =>
        createWebhookHandler({
          secret,
          store: createPostgresStore({ db, schema }),
          onEvent: async () => {
            ran.push(instance);
            await new Promise((resolve) => setTimeout(resolve, 30));
          },
        });
      const [a, b] = [handler('a'), handler('b')];
      const signed = signWebhook({ secret, payload: { type: 'kyb.case.status_changed', data: { refId: 'b1' } } });
      const request = { method: 'POST', headers: signed.headers, body: signed.body };
      const statuses = (await Promise.all([a(request), b(request)])).map((r) => r.status).sort();
      expect(statuses).toEqual([204, 409]);
      expect((await b(request)).status).toBe(204);
      expect(ran).toHaveLength(1);
    });
  });
}

// PGlite's now() is this process's wall clock (Postgres compiled to WASM reads the host's time).
engineSuite(
  'PGlite (embedded)',
  async () => {
    const db = await PGlite.create();
    return { db, close: () => db.close() };
  },
  true,
);

if (serverAvailable) {
  engineSuite('PostgreSQL server', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 20 });
    return {
      db: pool,
      close: async () => {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await pool.query(`DROP SCHEMA IF EXISTS ${schema}_m CASCADE`);
        await pool.end();
      },
    };
  });
}

describe('options', () => {
  it('refuses a missing db and a schema that is not a plain identifier, at creation', () => {
    expect(() => createPostgresStore({} as never)).toThrow(/db is required/);
    // Any db will do: the schema is refused before it is used (a PGlite would start Postgres for nothing).
    const db: Queryable = { query: async () => ({ rows: [] }) };
    expect(() => createPostgresStore({ db, schema: 'x"; DROP TABLE y; --' })).toThrow(/schema must be/);
  });
});
