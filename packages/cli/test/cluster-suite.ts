import { fileURLToPath } from 'node:url';
import { createRedisInbox, createRedisLedger } from '@verikit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../test-support/readme-snippet.js';
import { type LocalRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { codeBlocks } from '../../../test-support/snippets.js';
import { ExitCode } from '../src/index.js';
import { cliSuite, seed } from './cli-suite.js';
import { appCluster, nodeUrl, redisClusterFixture, seedUrls } from './engines.js';
import { runCli, runJson } from './run-cli.js';

/** A loopback port nothing listens on (the OS found it free, and nothing was started on it). */
const closedPort = freePort;

/**
 * The CLI on a local 3-master Redis Cluster of the test's own (started and stopped here, process
 * groups included), given `--cluster` and two seed URLs: every command of the engine-neutral suite,
 * then how it reaches the Cluster (a node given without `--cluster`, seeds that are down, the
 * README's lines) and, per the Cluster's options, its password and its certificate.
 */
export function clusterCliSuite(options: { tls?: boolean; password?: string } = {}): void {
  const { password } = options;
  let cluster: LocalRedisCluster;
  const trusted = process.env.NODE_EXTRA_CA_CERTS;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, ...options });
    // The CLI processes this file starts trust the Cluster's certificate, as an operator's would a private CA.
    if (cluster.caFile !== undefined) process.env.NODE_EXTRA_CA_CERTS = cluster.caFile;
  }, 120_000);
  // Registered before the suite's own afterAll, so it runs after it (hooks unwind as a stack): namespaces first, then the nodes.
  afterAll(async () => {
    if (trusted === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = trusted;
    await cluster?.stop();
  });

  /** Connections the CLI holds on any node (it names them verikit-cli; ioredis names its slot reader after them). */
  const cliConnections = async () => {
    const lists = await Promise.all(cluster.nodes.map((node) => node.command('client', 'list')));
    return lists.flatMap((list) => list.split('\n')).filter((line) => / name=\S*verikit-cli /.test(line)).length;
  };
  const fixture = redisClusterFixture(() => cluster, { password });
  cliSuite(fixture, cliConnections);

  describe('reaching the Cluster', () => {
    it('a node addressed as one server (no --cluster) is a configuration error (4) in one line naming --cluster', async () => {
      const ns = await fixture.fresh();
      await seed(ns.inbox(), ['msg_moved'], 'dead');
      const prefix = ns.args[ns.args.indexOf('--prefix') + 1] as string;
      // A node that does not serve the queue's slot: it redirects every command about it.
      const owner = await cluster.masterOf(prefix);
      const other = cluster.nodes.find((node) => node !== owner) as (typeof cluster.nodes)[number];
      const url = nodeUrl(cluster, other.port, { password });
      const result = await runCli(['inbox', 'dead', '--url', url, '--prefix', prefix]);
      expect(result.code).toBe(ExitCode.configuration);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `verikit: Redis at ${new URL(url).hostname}:${other.port} is a node of a Redis Cluster (it answered MOVED): add --cluster, and the CLI reaches every node from it\n`,
      );
      // The fix, as the message names it.
      const fixed = await runJson<{ deadLetters: Array<{ id: string }> }>(['inbox', 'dead', '--cluster', '--url', url, '--prefix', prefix]);
      expect(fixed.deadLetters.map((d) => d.id)).toEqual(['msg_moved']);
    });

    it('a seed that is down is passed over for the next; every seed down is "cannot reach" (5), naming them', async () => {
      const ns = await fixture.fresh();
      await seed(ns.inbox(), ['msg_p1', 'msg_p2'], 'pending');
      const prefix = ns.args[ns.args.indexOf('--prefix') + 1] as string;
      const [down, alsoDown] = [await closedPort(), await closedPort()];
      const live = cluster.nodes[2]?.port as number;
      const stats = await runJson(['inbox', 'stats', '--cluster', '--prefix', prefix], {
        REDIS_URL: [down, live].map((port) => nodeUrl(cluster, port, { password })).join(','),
      });
      expect(stats).toMatchObject({ pending: 2, dead: 0 });

      const none = await runCli(['inbox', 'stats', '--cluster', '--prefix', prefix], {
        REDIS_URL: [down, alsoDown].map((port) => nodeUrl(cluster, port, { password })).join(','),
      });
      expect(none.code).toBe(ExitCode.unreachable);
      const host = new URL(nodeUrl(cluster, down)).hostname;
      expect(none.stderr).toBe(`verikit: cannot reach Redis Cluster at ${host}:${down}, ${host}:${alsoDown} (ECONNREFUSED)\n`);
    });

    it("the README's --cluster commands run as written, REDIS_URL naming one node", async () => {
      const readme = fileURLToPath(new URL('../README.md', import.meta.url));
      const lines = codeBlocks(readme, 'sh')
        .flatMap((block) => block.code.split('\n'))
        .filter((line) => line.startsWith('verikit ') && line.includes(' --cluster'));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      // The app's inbox and ledger under their default names, as an app that kept them has them.
      const app = appCluster(cluster, { password });
      const inbox = createRedisInbox({ redis: app, persistence: 'ignore', logger: false, pruneIntervalMs: 0 });
      try {
        await seed(inbox, ['msg_readme_1', 'msg_readme_2'], 'dead');
        await createRedisLedger({ redis: app, persistence: 'ignore', logger: false }).track(
          { kind: 'kyb', refId: 'business-42' },
          { nextCheckAt: new Date(Date.now() + 3_600_000) },
        );
        const env = { REDIS_URL: nodeUrl(cluster, cluster.nodes[0]?.port as number, { password }) };
        for (const line of lines) {
          const result = await runCli(line.split(' ').slice(1), env);
          expect(result, line).toMatchObject({ code: 0, stderr: '' });
          expect(result.stdout.length, line).toBeGreaterThan(0);
        }
        // A dry run among them: nothing replayed.
        expect(await inbox.stats()).toMatchObject({ dead: 2, pending: 0 });
      } finally {
        await inbox.close();
        await app.quit();
      }
    });

    if (password !== undefined)
      it('a wrong password is "cannot use ... authentication failed" (5), in one line, without either password', async () => {
        const result = await runCli(['inbox', 'stats', '--cluster', '--url', seedUrls(cluster, { password: 'hunter2-wrong' })]);
        expect(result.code).toBe(ExitCode.unreachable);
        expect(result.stderr).toMatch(/^verikit: cannot use Redis Cluster at \S+:\d+, \S+:\d+: authentication failed\n$/);
        expect(result.stderr).not.toContain('hunter2');
        expect(result.stderr).not.toContain(password as string);
      });

    if (options.tls)
      it('a certificate the CLI does not trust is "cannot reach" (5), naming why and NODE_EXTRA_CA_CERTS', async () => {
        const ns = await fixture.fresh();
        const result = await runCli(['inbox', 'stats', ...ns.args], { NODE_EXTRA_CA_CERTS: '' });
        expect(result.code).toBe(ExitCode.unreachable);
        expect(result.stderr).toMatch(
          /^verikit: cannot reach Redis Cluster at localhost:\d+, localhost:\d+: its TLS certificate was refused \(self-signed certificate\); a private CA: NODE_EXTRA_CA_CERTS=<its PEM file>\n$/,
        );
      });
  });
}
