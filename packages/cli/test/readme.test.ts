import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, createReconciler } from '@verikit/core';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import { createFakeService } from '@verikit/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { codeBlocks } from '../../../test-support/snippets.js';
import { seed } from './cli-suite.js';
import { BIN } from './run-cli.js';

const available = await requireService('PostgreSQL', POSTGRES_URL);
const readme = fileURLToPath(new URL('../README.md', import.meta.url));
const allLines = codeBlocks(readme, 'sh').flatMap((block) => block.code.split('\n').filter((line) => line.trim() !== ''));
// The --cluster lines run on a Redis Cluster, in redis-cluster.test.ts.
const lines = allLines.filter((line) => !line.includes(' --cluster'));
const KEYS = `2026-11:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;

/** Runs `line` with /bin/sh, `verikit` on the PATH as npm links it, in a process group of its own. */
function shell(
  line: string,
  binDir: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('/bin/sh', ['-c', line], {
    env: { ...process.env, PATH: `${binDir}:${process.env.PATH}`, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {}
      reject(new Error(`${line} did not end in 60 s:\n${stdout}${stderr}`));
    }, 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The README's commands, exactly as written, against a database of their own (the default schema,
// as an app that kept the defaults has it) holding what they talk about, with the app's reconciler running.
describe.runIf(available)('README', () => {
  const database = `verikit_cli_readme_${process.pid}`;
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.href, max: 4 });
  // The drop at the end ends whatever connection the pool is still closing: nothing to report then.
  pool.on('error', () => {});
  const binDir = mkdtempSync(join(tmpdir(), 'verikit-cli-bin-'));
  let stop = async () => {};

  beforeAll(async () => {
    symlinkSync(BIN, join(binDir, 'verikit'));
    await admin.query(`CREATE DATABASE ${database}`);
    const inbox = createPostgresInbox({ db: pool, pruneIntervalMs: 0, encryption: { keys: [{ id: '2026-11', key: KEYS.slice(8) }] } });
    await inbox.migrate();
    const about = (refId: string) => () =>
      JSON.stringify({ type: 'kyb.case.status_changed', data: { refId, person: { name: 'Zoë Canary' } } });
    await seed(inbox, ['msg_2vT9fG0aXkW3q'], 'dead', about('business-42'));
    await seed(inbox, ['msg_2vTA0c1bYlX4r', 'msg_2vTA1d2cZmY5s'], 'dead', about('business-43'));
    await inbox.close();
    const ledger = createPostgresLedger({ db: pool });
    const fake = await createFakeService();
    const client = createClient({ ...fake.clientOptions, maxRetries: 0, logger: false });
    await client.kyb.createCase({ refId: 'business-42' });
    await ledger.track({ kind: 'kyb', refId: 'business-42' }, { nextCheckAt: new Date(Date.now() + 3_600_000) });
    const reconciler = createReconciler({ ledger, client, readsPerMinute: 600, pollIntervalMs: 50, logger: false, onChange: () => {} });
    reconciler.start();
    stop = async () => {
      await reconciler.stop();
      await client.close();
      await fake.close();
    };
  });

  afterAll(async () => {
    await stop();
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    rmSync(binDir, { recursive: true, force: true });
  });

  it('has the commands this test runs: every sh line is an install or a verikit command', () => {
    expect(allLines.filter((line) => !line.startsWith('verikit ')).every((line) => line.startsWith('npm install'))).toBe(true);
    expect(lines.filter((line) => line.startsWith('verikit ')).length).toBeGreaterThanOrEqual(15);
  });

  it('every verikit command of every sh block runs as written, in order, and succeeds', async () => {
    const env = { DATABASE_URL: url.href, VERIKIT_ENCRYPTION_KEYS: KEYS };
    const outcomes: string[] = [];
    for (const line of lines.filter((l) => l.startsWith('verikit '))) {
      const { code, stdout, stderr } = await shell(line, binDir, env);
      outcomes.push(`${line} -> ${code}${code === 0 ? '' : `: ${stderr}`}`);
      expect(stdout.length, line).toBeGreaterThan(0);
    }
    expect(outcomes.filter((outcome) => !outcome.endsWith('-> 0'))).toEqual([]);
    // What the runbook did: every dead letter replayed, the verification erased, nothing left to re-seal.
    const { rows } = await pool.query("SELECT count(*)::int AS dead FROM verikit.verikit_inbox WHERE state = 'dead'");
    expect(rows[0]?.dead).toBe(0);
    expect((await pool.query("SELECT count(*)::int AS n FROM verikit.verikit_ledger WHERE ref_id = 'business-42'")).rows[0]?.n).toBe(0);
  });
});
