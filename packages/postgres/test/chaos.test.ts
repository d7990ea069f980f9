import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ChaosEngine, type ChaosFigures, runChaos } from '../../../test-support/chaos/harness.js';
import { CHAOS_SCENARIO, expectExactlyOnce } from '../../../test-support/chaos/verdict.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SERVER = fileURLToPath(new URL('../../../test-support/chaos/postgres-server.mjs', import.meta.url));
const FRAMEWORKS = ['express', 'fastify', 'hono'];
const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);

describe.runIf(serverAvailable)('multi-instance chaos on the real PostgreSQL', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 16, application_name: 'verikit-chaos-observer' });
    pool.on('error', () => {});
  });
  afterAll(async () => pool?.end());

  for (const mode of ['inline', 'inbox'] as const) {
    it(`${mode} mode: 3 instances (Express, Fastify, Hono), SIGKILLs, killed connections, a failing onEvent -> every effect exactly once`, async () => {
      const schema = `verikit_chaos_${mode}_${process.pid}_${Date.now().toString(36)}`;
      const app = `verikit-chaos-${schema}`;
      await pool.query(`CREATE SCHEMA ${schema}`);
      await pool.query(`CREATE TABLE ${schema}.runs (id text NOT NULL)`);
      // Inline mode keys its effect by svix-id (its README's advice); inbox mode relies on the transaction alone.
      await pool.query(`CREATE TABLE ${schema}.effects (id text NOT NULL${mode === 'inline' ? ' PRIMARY KEY' : ''})`);
      const engine: ChaosEngine = {
        instance: (i) => ({ script: SERVER, args: [mode, FRAMEWORKS[i % 3] as string, schema, SECRET, POSTGRES_URL, app] }),
        killConnections: async () => {
          const { rows } = await pool.query(
            `SELECT pg_terminate_backend(pid) FROM (SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY random() LIMIT 2) victims`,
            [app],
          );
          return rows.length;
        },
        isDurable: async (id) => {
          const table = mode === 'inline' ? 'effects' : 'verikit_inbox';
          return (await pool.query(`SELECT 1 FROM ${schema}.${table} WHERE id = $1`, [id])).rows.length > 0;
        },
        settled: async () =>
          mode === 'inline' ||
          (await pool.query(`SELECT count(*)::int AS n FROM ${schema}.verikit_inbox WHERE state <> 'done'`)).rows[0]?.n === 0,
        effects: async () => {
          const { rows } = await pool.query(`SELECT id, count(*)::int AS n FROM ${schema}.effects GROUP BY id`);
          return new Map(rows.map((r) => [r.id as string, r.n as number]));
        },
        runs: async () => (await pool.query(`SELECT count(*)::int AS n FROM ${schema}.runs`)).rows[0]?.n as number,
      };
      let figures: ChaosFigures;
      try {
        figures = await runChaos(engine, { ...CHAOS_SCENARIO, mode, secret: SECRET });
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      }
      expectExactlyOnce(figures, `${mode}, PostgreSQL`);
    }, 240_000);
  }
});
