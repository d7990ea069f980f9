import { PGlite } from '@electric-sql/pglite';
import { checkHealth, healthResponse } from '@verikit/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxStatsCases } from '../../../test-support/inbox-stats.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { startStallingProxy } from '../../../test-support/stalling-proxy.js';
import { createPostgresInbox, createPostgresLedger, type PostgresInbox, type Queryable } from '../src/index.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
// Short, so the tests are quick; what is checked is that the report comes within it, not how fast.
const BOUND_MS = 500;
let schemas = 0;

// Every schema these tests make on the server starts with this process's prefix: dropped at the end.
afterAll(async () => {
  if (!serverAvailable) return;
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  try {
    const { rows } = await pool.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`verikit_health_${process.pid}_%`]);
    for (const row of rows) await pool.query(`DROP SCHEMA IF EXISTS "${row.nspname}" CASCADE`);
  } finally {
    await pool.end();
  }
});

function statsSuite(name: string, open: () => Promise<{ db: Queryable; close(): Promise<void> }>) {
  describe(`${name}: inbox stats and health`, () => {
    let db: Queryable;
    let close: () => Promise<void>;
    const inboxes: PostgresInbox[] = [];
    beforeAll(async () => {
      ({ db, close } = await open());
    });
    afterAll(async () => {
      for (const inbox of inboxes) await inbox.close();
      await close?.();
    });
    const fresh = async () => {
      const inbox = createPostgresInbox({ db, schema: `verikit_health_${process.pid}_${Date.now().toString(36)}_${++schemas}` });
      inboxes.push(inbox);
      await inbox.migrate();
      return inbox;
    };

    inboxStatsCases(fresh);

    it('the ledger is checked beside the inbox: its counts and last webhook time', async () => {
      const schema = `verikit_health_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
      const inbox = createPostgresInbox({ db, schema });
      inboxes.push(inbox);
      await inbox.migrate();
      const ledger = createPostgresLedger({ db, schema });
      await ledger.track({ kind: 'kyb', refId: 'biz-1' }, { nextCheckAt: new Date(Date.now() + 60_000) });
      const report = await checkHealth({ inbox, ledger });
      expect(report).toMatchObject({
        status: 'ok',
        checks: {
          inbox: { status: 'ok' },
          ledger: {
            status: 'ok',
            stats: {
              pending: 1,
              pendingByKind: { kyb: { pending: 1 }, kyc: { pending: 0, oldestTrackedAt: null } },
              final: 0,
              lastWebhookAt: null,
            },
          },
        },
      });
      expect(healthResponse(report).status).toBe(200);
    });
  });
}

statsSuite('PGlite', async () => {
  const db = new PGlite();
  return { db, close: () => db.close() };
});

describe.runIf(serverAvailable)('PostgreSQL server', () => {
  statsSuite('PostgreSQL server', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
    return { db: pool, close: () => pool.end() };
  });

  it('a database that refuses connections is down within the bound, with a code and no connection string', async () => {
    // A loopback port nothing listens on: bound, then closed at once.
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const pool = new pg.Pool({ connectionString: `postgres://verikit:s3cret-pw@127.0.0.1:${port}/test`, max: 1 });
    const inbox = createPostgresInbox({ db: pool, schema: 'verikit_health_refused' });
    try {
      const started = Date.now();
      const report = await checkHealth({ inbox, timeoutMs: BOUND_MS });
      expect(Date.now() - started).toBeLessThan(BOUND_MS + 250);
      expect(report).toEqual({
        status: 'down',
        checks: {
          inbox: {
            status: 'down',
            reason: 'error',
            errorCode: 'ECONNREFUSED',
            message: "the inbox's stats call failed",
            durationMs: expect.any(Number),
          },
        },
      });
      const response = healthResponse(report);
      expect(response.status).toBe(503);
      expect(response.body).not.toMatch(/s3cret|verikit:|127\.0\.0\.1|postgres:/);
    } finally {
      await inbox.close();
      await pool.end();
    }
  });

  it('a database that stops answering (a partition) is down by timeout within the bound; the ledger beside it too', async () => {
    const proxy = await startStallingProxy(POSTGRES_URL);
    const pool = new pg.Pool({ connectionString: proxy.url, max: 2 });
    const schema = `verikit_health_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
    const inbox = createPostgresInbox({ db: pool, schema, timeoutMs: 1_500 });
    const ledger = createPostgresLedger({ db: pool, schema, timeoutMs: 1_500 });
    try {
      await inbox.migrate();
      expect((await checkHealth({ inbox, ledger, timeoutMs: BOUND_MS })).status).toBe('ok');
      proxy.stall();
      const started = Date.now();
      const report = await checkHealth({ inbox, ledger, timeoutMs: BOUND_MS });
      expect(Date.now() - started).toBeLessThan(BOUND_MS + 250);
      expect(report).toMatchObject({
        status: 'down',
        checks: {
          inbox: { status: 'down', reason: 'timeout', errorCode: 'timeout', message: 'the inbox did not answer within the bound' },
          ledger: { status: 'down', reason: 'timeout', errorCode: 'timeout', message: 'the ledger did not answer within the bound' },
        },
      });
      proxy.heal();
      // The stalled clients are destroyed by the engines' own bound; fresh ones answer again.
      const back = Date.now() + 15_000;
      while ((await checkHealth({ inbox, ledger, timeoutMs: BOUND_MS })).status !== 'ok') {
        if (Date.now() > back) throw new Error('the health check did not come back after the partition healed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await inbox.close();
      await proxy.stop();
      await pool.end();
    }
  });
});
