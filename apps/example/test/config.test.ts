import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_RECONCILE, readMode, readSettings } from '../src/config.js';
import { startExample } from '../src/start.js';
import { startInTempFolder } from './support/example.js';
import { Visitor } from './support/visitor.js';
import { waitUntil } from './support/wait.js';

const run = promisify(execFile);
const appDir = fileURLToPath(new URL('..', import.meta.url));
const full = {
  VERIKIT_API_KEY: 'sk_live_1',
  VERIKIT_BASE_URL: 'https://api.example.test',
  VERIKIT_WEB_URL: 'https://verify.example.test',
  VERIKIT_PUBLIC_KEY: 'pk_1',
  VERIKIT_WEBHOOK_SECRET: 'whsec_plJ3nmyCDGBKInavdOK15jsl',
};

describe('mode from the environment', () => {
  it('no VERIKIT_* variable -> the embedded fake service', () => {
    expect(readMode({})).toEqual({ kind: 'embedded' });
  });

  it('all five -> the real service', () => {
    expect(readMode(full)).toMatchObject({ kind: 'real', client: { baseUrl: 'https://api.example.test' } });
  });

  it.each([
    [{ ...full, VERIKIT_PUBLIC_KEY: undefined }, /VERIKIT_PUBLIC_KEY is not set/],
    [{ VERIKIT_API_KEY: 'k' }, /VERIKIT_BASE_URL, VERIKIT_WEB_URL, VERIKIT_PUBLIC_KEY, VERIKIT_WEBHOOK_SECRET are not set/],
    [{ ...full, VERIKIT_BASE_URL: 'not a url' }, /VERIKIT_BASE_URL is not a valid URL/],
    [{ ...full, VERIKIT_WEBHOOK_SECRET: 'whsec_not base64' }, /VERIKIT_WEBHOOK_SECRET/],
  ])('%j -> one line naming the variable', (env, message) => {
    expect(() => readMode(env)).toThrow(message);
  });
});

describe('settings from the environment', () => {
  it('an operator secret shorter than 16 characters is refused, with a way to make one', () => {
    expect(() => readSettings({ VERIKIT_EXAMPLE_OPERATOR_SECRET: 'short' })).toThrow(
      'VERIKIT_EXAMPLE_OPERATOR_SECRET must be at least 16 characters long (for example: openssl rand -base64 24)',
    );
    expect(readSettings({ VERIKIT_EXAMPLE_OPERATOR_SECRET: 'x'.repeat(16) }).operatorSecret).toBe('x'.repeat(16));
  });

  it('a metrics token shorter than 16 characters is refused too; unset, /metrics is off', () => {
    expect(() => readSettings({ VERIKIT_EXAMPLE_METRICS_TOKEN: 'short' })).toThrow(
      'VERIKIT_EXAMPLE_METRICS_TOKEN must be at least 16 characters long (for example: openssl rand -base64 24)',
    );
    expect(readSettings({ VERIKIT_EXAMPLE_METRICS_TOKEN: 'y'.repeat(16) }).metricsToken).toBe('y'.repeat(16));
    expect(readSettings({}).metricsToken).toBeUndefined();
  });

  it('VERIKIT_EXAMPLE_TRUST_PROXY is a hop count or addresses, as Express takes it', () => {
    expect(readSettings({ VERIKIT_EXAMPLE_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(readSettings({ VERIKIT_EXAMPLE_TRUST_PROXY: 'loopback' }).trustProxy).toBe('loopback');
    expect(readSettings({}).trustProxy).toBeUndefined();
  });

  it('VERIKIT_EXAMPLE_RECONCILE_FAST=1 polls every few seconds; unset, verikit’s schedule; anything else is refused', () => {
    expect(readSettings({ VERIKIT_EXAMPLE_RECONCILE_FAST: '1' }).reconcile).toBe(FAST_RECONCILE);
    expect(readSettings({}).reconcile).toEqual({ schedule: undefined, readsPerMinute: undefined, pollIntervalMs: undefined });
    expect(readSettings({ VERIKIT_EXAMPLE_RECONCILE_FAST: '0' }).reconcile.schedule).toBeUndefined();
    expect(() => readSettings({ VERIKIT_EXAMPLE_RECONCILE_FAST: 'yes' })).toThrow(
      'VERIKIT_EXAMPLE_RECONCILE_FAST must be 1 (poll every few seconds) or 0, not "yes"',
    );
  });
});

describe('the main command', () => {
  const folders: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-example-main-'));
    folders.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  /** Runs `pnpm start`'s program until it exits (or 30 s, when it keeps running: a failure here). */
  const start = (env: Record<string, string>) =>
    run(process.execPath, ['dist/main.js'], { cwd: appDir, env: { ...process.env, PORT: '0', ...env }, timeout: 30_000 }).catch(
      (e: { code: number | null; killed: boolean; stderr: string }) => e,
    );

  it('a malformed variable gets one clear line, not a stack trace', async () => {
    const error = await run(process.execPath, ['dist/main.js'], {
      cwd: appDir,
      env: { ...process.env, ...full, VERIKIT_BASE_URL: 'ftp://x' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 1 });
    const lines = (error as { stderr: string }).stderr.trim().split('\n');
    expect(lines).toEqual(['verikit example: VERIKIT_BASE_URL must use http or https, not ftp:']);
  });

  it('a port in use gets one clear line', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    const error = await start({ PORT: String(port), VERIKIT_EXAMPLE_DATA: folder() });
    blocker.close();
    expect((error as { stderr: string }).stderr.trim()).toBe(
      `verikit example: port ${port} is in use; set PORT to another one (PORT=0 picks a free port)`,
    );
  });

  it('a second instance on the same data folder says another instance is probably running, and leaves the first alone', async () => {
    const first = await startInTempFolder();
    try {
      const second = await start({ VERIKIT_EXAMPLE_DATA: first.dataDir });
      expect(second).toMatchObject({ code: 1 });
      const lines = (second as { stderr: string }).stderr.trim().split('\n');
      expect(lines).toEqual([
        `verikit example: another instance is probably running on the data folder ${first.dataDir} (process ${process.pid}): stop it first, or give this one a folder of its own with VERIKIT_EXAMPLE_DATA (if no instance runs, remove ${join(first.dataDir, 'instance.lock')})`,
      ]);
      expect((await request(first.example.url)).statusCode).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it('a data folder of the first version (refIds made from names) stops the start with one line: why, and what to do', async () => {
    const dataDir = folder();
    // The first version's tables, as it created them, with an account in them.
    const old = new PGlite(join(dataDir, 'pglite'));
    await old.exec(`CREATE SCHEMA example;
      CREATE TABLE example.accounts (key text PRIMARY KEY, name text NOT NULL, business_name text NOT NULL,
        user_ref_id text NOT NULL, business_ref_id text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO example.accounts VALUES ('anonymous|anonymous', '李明', '北京贸易有限公司', 'user-anonymous', 'business-anonymous');`);
    await old.close();
    const error = await start({ VERIKIT_EXAMPLE_DATA: dataDir });
    expect(error).toMatchObject({ code: 1 });
    expect((error as { stderr: string }).stderr.trim().split('\n')).toEqual([
      `verikit example: the data was made by an earlier version of the example, whose refIds came from the names typed at sign-in, so that different people and businesses could share one verification; which result is whose cannot be told now: move or delete ${dataDir} to start afresh, or set VERIKIT_EXAMPLE_DATA to another folder`,
    ]);
  });

  it('results kept by the previous version (from webhooks, before the ledger) are handed to the ledger, which reads them again', async () => {
    const dataDir = folder();
    const env = { VERIKIT_EXAMPLE_DATA: dataDir, VERIKIT_EXAMPLE_RECONCILE_FAST: '1' };
    let example = await startExample({ port: 0, env });
    const person = new Visitor(example.url);
    let refId = '';
    try {
      await person.signIn('Pat Previous', 'Previous Version Ltd');
      refId = await person.startVerification('kyb');
      example.fake?.kyb.setStatus(refId, 'COMPLETED');
      await waitUntil(
        'the result',
        async () => (await person.get('/dashboard')).text,
        (page) => page.includes('data-kyb-status="COMPLETED"'),
      );
    } finally {
      await example.close();
    }
    // The folder as the previous version left it: its own results table, and no ledger.
    const old = new PGlite(join(dataDir, 'pglite'));
    await old.exec(`DELETE FROM example.results; DELETE FROM example.result_changes; DELETE FROM verikit.verikit_ledger;
      CREATE TABLE example.kyb_results (ref_id text PRIMARY KEY, status text NOT NULL, details text NOT NULL,
        service_updated_at text NOT NULL, event_id text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());`);
    await old.query(`INSERT INTO example.kyb_results VALUES ($1, 'COMPLETED', '{}', '', 'msg_1')`, [refId]);
    await old.close();

    example = await startExample({ port: 0, env });
    try {
      const again = new Visitor(example.url);
      for (const [name, value] of person.cookies) again.cookies.set(name, value);
      await waitUntil(
        'the result read again',
        async () => (await again.get('/dashboard')).text,
        (text) => text.includes('data-kyb-status="COMPLETED"'),
      );
    } finally {
      await example.close();
    }
    const after = new PGlite(join(dataDir, 'pglite'));
    const { rows } = await after.query<{ table: string | null; tracked: number }>(
      `SELECT to_regclass('example.kyb_results')::text AS table, (SELECT count(*)::int FROM verikit.verikit_ledger WHERE ref_id = $1) AS tracked`,
      [refId],
    );
    await after.close();
    expect(rows).toEqual([{ table: null, tracked: 1 }]);
  });
});
