import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type LedgerChaosReport, type LedgerEffect, runLedgerChaos } from '../../../test-support/chaos/ledger-harness.js';
import { expectLedgerChaos, LEDGER_CHAOS_SCENARIO } from '../../../test-support/chaos/ledger-verdict.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { createPostgresLedger } from '../src/index.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);

describe.runIf(serverAvailable)('ledger chaos on the real PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 8, application_name: 'verikit-ledger-chaos-observer' });
    pool.on('error', () => {});
  });
  afterAll(async () => pool?.end());

  it('500 refIds moved through reopens and overturned decisions, 3 instances, SIGKILLs, lost, late and repeated webhooks -> the ledger equals the service, each change once, in order, within the budget', async () => {
    const schema = `verikit_ledger_chaos_${process.pid}_${Date.now().toString(36)}`;
    await pool.query(`CREATE SCHEMA ${schema}`);
    // No unique key: only the transaction that records the change keeps its effect once.
    await pool.query(
      `CREATE TABLE ${schema}.ledger_effects (kind text NOT NULL, ref_id text NOT NULL, version int NOT NULL, status text NOT NULL,
         final boolean NOT NULL, source text NOT NULL, updated_at text NOT NULL, pid int NOT NULL)`,
    );
    const ledger = createPostgresLedger({ db: pool, schema });
    await ledger.migrate();
    let report: LedgerChaosReport;
    try {
      report = await runLedgerChaos(
        {
          name: 'postgres',
          url: POSTGRES_URL,
          namespace: schema,
          ledger,
          effects: async () => {
            const { rows } = await pool.query(
              `SELECT kind, ref_id AS "refId", version, status, final, source, updated_at AS "updatedAt", pid FROM ${schema}.ledger_effects`,
            );
            return rows as LedgerEffect[];
          },
        },
        LEDGER_CHAOS_SCENARIO,
      );
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    }
    expectLedgerChaos(report, 'PostgreSQL');
  }, 180_000);
});
