import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../../../test-support/services.js';
import { ExitCode } from '../src/index.js';
import { cliSuite, seed } from './cli-suite.js';
import { postgresFixture } from './engines.js';
import { runCli, startCli } from './run-cli.js';

const fixture = await postgresFixture();
const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
afterAll(() => admin.end());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connections the CLI holds (it names them verikit-cli). */
const cliConnections = async () =>
  Number((await admin.query("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'verikit-cli'")).rows[0]?.n);

describe.runIf(fixture.available)('verikit on PostgreSQL', () => {
  cliSuite(fixture, cliConnections);

  it("tables of another engine version (the inbox's payload still NOT NULL, as before payload retention) are exit 6, not a raw SQL error", async () => {
    const ns = await fixture.fresh();
    await seed(ns.inbox(), ['msg_old_table'], 'dead');
    const schema = ns.args[ns.args.indexOf('--schema') + 1] as string;
    await admin.query(`ALTER TABLE "${schema}".verikit_inbox ALTER COLUMN payload SET NOT NULL`);
    const result = await runCli(['inbox', 'purge-dead', '--before', '2999-01-01', ...ns.args]);
    expect(result.code).toBe(ExitCode.notSetUp);
    expect(result.stderr).toMatch(
      /^verikit: verikit's tables in PostgreSQL at .* are not those of the engine version the CLI runs: run that version's migrate\(\)/,
    );
    expect(result.stderr).not.toMatch(/violates|null value/);
  });

  it('Ctrl-C during replay --all-dead stops between two replays: those replayed stay replayed, the rest stay dead, exit 130', async () => {
    const ns = await fixture.fresh();
    const inbox = ns.inbox();
    const ids = Array.from({ length: 200 }, (_, i) => `msg_stop_${String(i).padStart(3, '0')}`);
    await seed(inbox, ids, 'dead');
    const schema = ns.args[ns.args.indexOf('--schema') + 1] as string;
    // The 50th dead letter's row held by another transaction: the CLI's replay of it waits there, where the test stops it.
    const holder = await admin.connect();
    let running: ReturnType<typeof startCli> | undefined;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".verikit_inbox WHERE id = $1 FOR UPDATE`, [ids[49]]);
      running = startCli(['inbox', 'replay', '--all-dead', '--progress', ...ns.args]);
      const waitingOnTheRow = async () =>
        Number(
          (
            await admin.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'verikit-cli' AND wait_event_type = 'Lock'",
            )
          ).rows[0]?.n,
        ) > 0;
      for (let i = 0; !(await waitingOnTheRow()); i++) {
        if (i > 400) throw new Error(`the CLI never waited on the held row:\n${running.stderr()}`);
        await sleep(25);
      }
      running.kill('SIGINT');
      // The signal is handled at once (the CLI only awaits its query); the row is let go after it.
      await sleep(300);
    } finally {
      await holder.query('COMMIT').catch(() => {});
      holder.release();
    }
    const result = await running.result;
    expect(result.code).toBe(ExitCode.interrupted);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /verikit: stopped: replayed 50 of 200 dead letters \(0 no longer dead\); run it again to replay the rest\n$/,
    );
    expect(await inbox.stats()).toMatchObject({ dead: 150, pending: 50 });
    expect((await inbox.get(ids[49] as string))?.state).toBe('pending');
    expect((await inbox.get(ids[50] as string))?.state).toBe('dead');
    for (let i = 0; (await cliConnections()) > 0; i++) {
      if (i > 100) throw new Error('a connection of the CLI is still open after it exited');
      await sleep(50);
    }
  });
});
