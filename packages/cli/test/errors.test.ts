import { type AddressInfo, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/readme-snippet.js';
import { ExitCode } from '../src/index.js';
import { runCli } from './run-cli.js';

/** A loopback port nothing listens on (the OS found it free, and nothing was started on it). */
const closedPort = freePort;

/** An error's one line: no stack trace, nothing on stdout. */
function expectOneLine(result: { stdout: string; stderr: string }): void {
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('the command line', () => {
  it.each([
    [[], /a command is needed/],
    [['inbox'], /verikit inbox needs a command: stats, dead, show, replay, purge-dead, reseal/],
    [['inbox', 'frobnicate'], /unknown command "inbox frobnicate"/],
    [['wipe'], /unknown command "wipe"/],
    [['inbox', 'stats', '--frobnicate'], /Unknown option '--frobnicate'/],
    [['inbox', 'stats', '--limit', '5'], /inbox stats does not take --limit/],
    [['inbox', 'show'], /usage: verikit inbox show ID/],
    [['ledger', 'check', 'kyb'], /usage: verikit ledger check KIND REFID/],
    [['ledger', 'check', 'kyx', 'biz-1'], /KIND is kyb or kyc, not "kyx"/],
    [['inbox', 'replay'], /an ID or --all-dead/],
    [['inbox', 'replay', 'msg_1', '--all-dead'], /an ID or --all-dead/],
    [['inbox', 'dead', '--since', 'yesterday'], /--since takes an ISO date/],
    [['inbox', 'dead', '--limit', '0'], /--limit takes a whole number from 1/],
    [['inbox', 'purge-dead'], /needs --before TIME/],
    [['ledger', 'list', '--kind', 'kyz'], /--kind is kyb or kyc/],
  ])('verikit %j is a usage error (exit code 2) in one line', async (args, message) => {
    const result = await runCli(args, { DATABASE_URL: 'postgres://127.0.0.1:1/none' });
    expect(result.code).toBe(ExitCode.usage);
    expect(result.stderr).toMatch(message);
    expectOneLine(result);
  });

  it('--help lists every command and the exit codes; a command --help its options and the connection options', async () => {
    const main = await runCli(['--help']);
    expect(main.code).toBe(0);
    for (const command of [
      'inbox stats',
      'inbox dead',
      'inbox show ID',
      'inbox replay [ID]',
      'inbox purge-dead',
      'inbox reseal',
      'ledger list',
    ])
      expect(main.stdout).toContain(command);
    expect(main.stdout).toMatch(/ledger check KIND REFID/);
    expect(main.stdout).toMatch(/erase KIND REFID/);
    expect(main.stdout).toMatch(/ {2}3 {2}notFound\n/);
    const replay = await runCli(['inbox', 'replay', '--help']);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/^Usage: verikit inbox replay \[ID\] \[options\]/);
    expect(replay.stdout).toMatch(/--all-dead/);
    expect(replay.stdout).toMatch(/--dry-run/);
    expect(replay.stdout).toMatch(/--schema NAME/);
    expect((await runCli(['inbox', 'reseal', '--help'])).stdout).toMatch(/VERIKIT_ENCRYPTION_KEYS .* is required/);
  });

  it('--version names the CLI and the engine packages installed beside it', async () => {
    const result = await runCli(['--version', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      cli: '0.1.0',
      engines: { '@verikit/postgres': expect.any(String), '@verikit/redis': expect.any(String) },
    });
  });
});

describe('where to connect', () => {
  it('no URL at all is a configuration error (4) naming the variables', async () => {
    const result = await runCli(['inbox', 'stats']);
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toMatch(/set DATABASE_URL \(PostgreSQL\) or REDIS_URL \(Redis\), or pass --url/);
    expectOneLine(result);
  });

  it('both variables set: a usage error (2) until --engine picks one', async () => {
    const port = await closedPort();
    const env = { DATABASE_URL: `postgres://127.0.0.1:${port}/db`, REDIS_URL: `redis://127.0.0.1:${port}` };
    const both = await runCli(['inbox', 'stats'], env);
    expect(both.code).toBe(ExitCode.usage);
    expect(both.stderr).toMatch(/both DATABASE_URL and REDIS_URL are set/);
    const picked = await runCli(['inbox', 'stats', '--engine', 'redis'], env);
    expect(picked.stderr).toMatch(/cannot reach Redis at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });

  it('a malformed URL is a configuration error (4) that does not echo it (it may hold a password)', async () => {
    const result = await runCli(['inbox', 'stats'], { DATABASE_URL: 'postgres://admin:hunter2@[::1/db' });
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toMatch(/DATABASE_URL is not a valid URL/);
    expect(result.stderr).not.toContain('hunter2');
    expectOneLine(result);
  });

  it('a URL of another scheme is a configuration error (4) naming the ones the CLI takes', async () => {
    const result = await runCli(['ledger', 'stats', '--url', 'mysql://root:hunter2@127.0.0.1/app']);
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toMatch(/has the scheme "mysql:": the CLI connects to postgres:\/\/, postgresql:\/\/, redis:\/\/ or rediss:\/\//);
    expect(result.stderr).not.toContain('hunter2');
  });

  it.each([
    ['postgres', (port: number) => `postgres://admin:hunter2@127.0.0.1:${port}/app`, /cannot reach PostgreSQL at 127\.0\.0\.1:\d+\/app/],
    ['redis', (port: number) => `redis://admin:hunter2@127.0.0.1:${port}/0`, /cannot reach Redis at 127\.0\.0\.1:\d+\/0/],
  ])('a refused %s port is "cannot reach" (5), without the password, in human and JSON form', async (_engine, url, message) => {
    const port = await closedPort();
    const human = await runCli(['inbox', 'stats', '--url', url(port)]);
    expect(human.code).toBe(ExitCode.unreachable);
    expect(human.stderr).toMatch(message);
    expect(human.stderr).toMatch(/\(ECONNREFUSED\)/);
    expect(human.stderr).not.toContain('hunter2');
    expectOneLine(human);
    const asJson = await runCli(['ledger', 'stats', '--json', '--url', url(port)]);
    expect(asJson.code).toBe(ExitCode.unreachable);
    expect(asJson.stdout).toBe('');
    expect(JSON.parse(asJson.stderr)).toEqual({ error: { reason: 'unreachable', exitCode: 5, message: expect.stringMatching(message) } });
    expect(asJson.stderr).not.toContain('hunter2');
  });

  it.each([
    [
      'postgres',
      (port: number) => ['--url', `postgres://127.0.0.1:${port}/app`],
      /PostgreSQL at 127\.0\.0\.1:\d+\/app \(schema verikit\) did not answer in time/,
    ],
    ['redis', (port: number) => ['--url', `redis://127.0.0.1:${port}`], /Redis at 127\.0\.0\.1:\d+ did not answer in time/],
    [
      'a redis cluster',
      (port: number) => ['--cluster', '--url', `redis://127.0.0.1:${port}`],
      /Redis Cluster at 127\.0\.0\.1:\d+ did not answer in time/,
    ],
  ])('%s that accepts the connection and never answers is "did not answer in time" (5), not a hang', async (_engine, args, message) => {
    // A server stopped (SIGSTOP) or a proxy in front of a dead one: TCP connects, nothing answers.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket.on('error', () => {}));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const result = await runCli(['inbox', 'stats', ...args((silent.address() as AddressInfo).port)]);
      expect(result.code).toBe(ExitCode.unreachable);
      expect(result.stderr).toMatch(message);
      expectOneLine(result);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('an unknown host is "cannot reach" (5)', async () => {
    const result = await runCli(['inbox', 'stats', '--url', 'redis://verikit-no-such-host.invalid:6379']);
    expect(result.code).toBe(ExitCode.unreachable);
    expect(result.stderr).toMatch(/cannot reach Redis at verikit-no-such-host\.invalid:6379 \((ENOTFOUND|EAI_AGAIN)\)/);
  });
});

describe('a Redis Cluster (--cluster)', () => {
  it.each([
    [['--url', 'postgres://127.0.0.1:1/db'], ExitCode.usage, /--cluster is for a Redis Cluster, and --url holds a PostgreSQL URL/],
    [['--engine', 'postgres', '--url', 'redis://127.0.0.1:1'], ExitCode.usage, /--cluster is for a Redis Cluster, not --engine postgres/],
    [['--url', 'redis://127.0.0.1:1/3'], ExitCode.configuration, /a Redis Cluster has database 0 only: remove the \/<db> from --url/],
    [['--url', 'redis://127.0.0.1:1,rediss://127.0.0.1:2'], ExitCode.configuration, /the seeds in --url mix redis:\/\/ and rediss:\/\//],
    [
      ['--url', 'redis://:hunter2@127.0.0.1:1,redis://:hunter3@127.0.0.1:2'],
      ExitCode.configuration,
      /the seeds in --url give different users or passwords/,
    ],
    [['--url', 'redis://127.0.0.1:1?family=6'], ExitCode.configuration, /--cluster takes seed URLs without options/],
    [['--url', 'redis://127.0.0.1:1,redis://[::1'], ExitCode.configuration, /seed 2 of --url is not a valid URL/],
  ])(
    'verikit inbox stats --cluster %j is refused before connecting (exit %i), in one line, without a password',
    async (args, code, message) => {
      const result = await runCli(['inbox', 'stats', '--cluster', ...args]);
      expect(result.code).toBe(code);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/hunter/);
      expectOneLine(result);
    },
  );

  it('several URLs without --cluster are a configuration error (4) naming it, without the passwords', async () => {
    const result = await runCli(['ledger', 'stats'], { REDIS_URL: 'redis://:hunter2@10.0.1.11:6379,redis://:hunter2@10.0.2.12:6379' });
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toBe(
      'verikit: REDIS_URL holds 2 URLs: several are the seed nodes of a Redis Cluster, which the CLI reaches with --cluster\n',
    );
  });

  it('--cluster reads REDIS_URL when DATABASE_URL is set too, and says so when it is not set', async () => {
    const port = await closedPort();
    const both = await runCli(['inbox', 'stats', '--cluster'], {
      DATABASE_URL: 'postgres://127.0.0.1:1/db',
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(both.code).toBe(ExitCode.unreachable);
    expect(both.stderr).toBe(`verikit: cannot reach Redis Cluster at 127.0.0.1:${port} (ECONNREFUSED)\n`);
    const none = await runCli(['inbox', 'stats', '--cluster'], { DATABASE_URL: 'postgres://127.0.0.1:1/db' });
    expect(none.code).toBe(ExitCode.configuration);
    expect(none.stderr).toMatch(/--cluster reads REDIS_URL, which is not set: set it or pass --url/);
  });

  it('seeds that refuse are "cannot reach" (5) naming every seed, never the password (a comma in it included), in human and JSON form', async () => {
    const [first, second] = [await closedPort(), await closedPort()];
    const url = `redis://admin:hun%2Cter,2@127.0.0.1:${first},redis://127.0.0.1:${second}`;
    const message = `cannot reach Redis Cluster at 127.0.0.1:${first}, 127.0.0.1:${second} (ECONNREFUSED)`;
    const human = await runCli(['inbox', 'stats', '--cluster', '--url', url]);
    expect(human.code).toBe(ExitCode.unreachable);
    expect(human.stderr).toBe(`verikit: ${message}\n`);
    const asJson = await runCli(['ledger', 'stats', '--cluster', '--json'], { REDIS_URL: url });
    expect(asJson.code).toBe(ExitCode.unreachable);
    expect(JSON.parse(asJson.stderr)).toEqual({ error: { reason: 'unreachable', exitCode: 5, message } });
  });

  it('--help lists --cluster among the connection options', async () => {
    expect((await runCli(['inbox', 'stats', '--help'])).stdout).toMatch(
      /--cluster +Redis Cluster: REDIS_URL or --url names one or more of its nodes/,
    );
  });
});

describe('encryption keys', () => {
  it('inbox reseal without VERIKIT_ENCRYPTION_KEYS is a configuration error (4), before connecting', async () => {
    const result = await runCli(['inbox', 'reseal'], { DATABASE_URL: `postgres://127.0.0.1:${await closedPort()}/db` });
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toMatch(/inbox reseal needs VERIKIT_ENCRYPTION_KEYS: the app's keys, id:base64, the current key first/);
  });

  it.each([
    ['k1', /entry 1 is not "id:base64-key"/],
    ['k1:c2hvcnQ=', /entry 1 \(id "k1"\) is not base64 of 32 bytes/],
    [`k1:${'A'.repeat(43)}=,bad id:${'A'.repeat(43)}=`, /entry 2 has an id that is not 1-32 of A-Z a-z 0-9 _ -/],
    [`k1:${'A'.repeat(43)}=,k1:${'B'.repeat(43)}=`, /entry 2 repeats the id "k1"/],
  ])('a malformed VERIKIT_ENCRYPTION_KEYS (%s) is a configuration error (4) naming the entry, never the key', async (keys, message) => {
    const result = await runCli(['inbox', 'reseal'], {
      DATABASE_URL: `postgres://127.0.0.1:${await closedPort()}/db`,
      VERIKIT_ENCRYPTION_KEYS: keys,
    });
    expect(result.code).toBe(ExitCode.configuration);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/c2hvcnQ|AAAAAAAA|BBBBBBBB/);
    expectOneLine(result);
  });
});
