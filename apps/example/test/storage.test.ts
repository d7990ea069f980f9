import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { type RunningExample, startExample } from '../src/start.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);
// A database of its own: the example's schemas (example, verikit) are fixed names.
const database = `verikit_example_${process.pid}_${Date.now().toString(36)}`;
let admin: pg.Client;
let dataDir: string;

beforeAll(async () => {
  if (!serverAvailable) return;
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  dataDir = mkdtempSync(join(tmpdir(), 'verikit-example-pg-'));
});

afterAll(async () => {
  if (!serverAvailable) return;
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
});

it.runIf(serverAvailable)(
  'DATABASE_URL puts the data on a PostgreSQL server: a session survives a restart there, and the ledger records changes there',
  async () => {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${database}`;
    const env = { DATABASE_URL: url.href, VERIKIT_EXAMPLE_DATA: dataDir };
    let example: RunningExample = await startExample({ port: 0, env });
    try {
      expect(example.storage).toBe(`PostgreSQL at ${url.host}`);
      const signedIn = await fetch(`${example.url}/signin`, {
        method: 'POST',
        body: new URLSearchParams({ name: 'Pat Server', business: 'Server Side Ltd' }),
        redirect: 'manual',
      });
      expect(signedIn.status).toBe(303);
      const cookie = (signedIn.headers.get('set-cookie') as string).split(';')[0] as string;
      await example.close();
      example = await startExample({ port: 0, env });
      const dashboard = await fetch(`${example.url}/dashboard`, { headers: { cookie }, redirect: 'manual' });
      expect(dashboard.status).toBe(200);
      expect(await dashboard.text()).toContain('Signed in as <strong>Pat Server</strong> for <strong>Server Side Ltd</strong>');
      // A change goes through the ledger on the server too: onChange writes in the transaction that records it.
      const person = new Visitor(example.url);
      person.cookies.set(...(cookie.split('=') as [string, string]));
      const refId = await person.startVerification('kyb');
      example.fake?.kyb.setStatus(refId, 'IN_REVIEW');
      await waitUntil(
        'the result',
        async () => (await person.get('/dashboard')).text,
        (page) => page.includes('data-kyb-status="IN_REVIEW"'),
      );
      const there = new pg.Client({ connectionString: url.href });
      await there.connect();
      const { rows } = await there.query(
        'SELECT a.name, b.name AS business_name FROM example.accounts a JOIN example.businesses b ON b.ref_id = a.business_ref_id',
      );
      const recorded = await there.query(
        `SELECT r.status, r.version = l.version AS same_version, l.status AS ledger_status
       FROM example.results r JOIN verikit.verikit_ledger l ON l.kind = r.kind AND l.ref_id = r.ref_id WHERE r.ref_id = $1`,
        [refId],
      );
      await there.end();
      expect(rows).toEqual([{ name: 'Pat Server', business_name: 'Server Side Ltd' }]);
      expect(recorded.rows).toEqual([{ status: 'IN_REVIEW', same_version: true, ledger_status: 'IN_REVIEW' }]);
    } finally {
      await example.close();
    }
  },
);
