import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startProcess, type TestProcess } from './processes.js';
import { freePort } from './readme-snippet.js';
import { requireCommands } from './services.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a local Redis Cluster can be started here (`redis-server` and `redis-cli` on the PATH; with
 * `tls`, `openssl` too, which makes its certificate). Like `requireService`: a failure when
 * `VERIKIT_REQUIRE_SERVICES=1`, else skipped, saying why.
 */
export function requireRedisCluster(options: { tls?: boolean } = {}): boolean {
  return options.tls
    ? requireCommands('Redis Cluster over TLS', ['redis-server', 'redis-cli', ['openssl', 'version']])
    : requireCommands('Redis Cluster', ['redis-server', 'redis-cli']);
}

/** One redis-server of a {@link LocalRedisCluster}. */
export interface ClusterNode {
  readonly port: number;
  /** `127.0.0.1:<port>`, as the cluster names it. */
  readonly address: string;
  /** Whether its process runs (it was not killed, or was restarted since). */
  readonly running: boolean;
  /** Runs one command on this node alone (through redis-cli) and answers what it printed. */
  command(...args: string[]): Promise<string>;
  /** SIGKILLs the node (its whole process group), as a crash would; its data directory stays. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data directory (its cluster config, and its AOF when enabled). */
  restart(): Promise<void>;
}

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** Masters sharing the 16,384 slots (default 3). */
  masters?: number;
  /** Replicas of each master (default 0); with one, a killed master is replaced by its replica. */
  replicasPerMaster?: number;
  /** `cluster-node-timeout` (default 1 000 ms): how soon an unreachable node is marked failed. */
  nodeTimeoutMs?: number;
  /** redis-server settings replacing the default `appendonly no`, `save ''` (e.g. an AOF, to keep data over a kill). */
  persistence?: string[];
  /** Where the nodes' temporary directories are made (default: the system's temporary directory). */
  parentDir?: string;
  /** A password every client and node gives (`requirepass`, `masterauth`); default none. */
  password?: string;
  /**
   * TLS only (no plain port), between nodes too, as a managed Cluster with in-transit encryption
   * (ElastiCache, MemoryDB) has it: nodes named `localhost`, not by address (CLUSTER SLOTS answers
   * names), under a self-signed certificate for that name alone, made with openssl
   * ({@link LocalRedisCluster.caFile}). A client checks it against the names, so it must connect by
   * name: ioredis `dnsLookup: (address, callback) => callback(null, address)`. Default off.
   */
  tls?: boolean;
}

/** A Redis Cluster of the test's own, on free loopback ports, each node in a temporary directory. */
export interface LocalRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** Where an ioredis `Cluster` starts: `new Cluster(cluster.startupNodes)` (by name, `localhost`, over TLS). */
  readonly startupNodes: Array<{ host: string; port: number }>;
  /** With `tls`: the certificate (PEM) to trust, e.g. as ioredis's `tls: { ca }` or Node's `NODE_EXTRA_CA_CERTS`. */
  readonly caFile?: string;
  /** The node that serves `key`'s slot as master now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** The running nodes that are masters now. */
  masters(): Promise<ClusterNode[]>;
  /** Resolves once every running node says `cluster_state:ok` and every running replica is in sync with its master. */
  waitUntilOk(timeoutMs?: number): Promise<void>;
  /** Stops every node (whole process groups) and removes their directories. */
  stop(): Promise<void>;
}

interface NodeState extends ClusterNode {
  stop(): Promise<void>;
}

/** What {@link startNode} needs: the options with their defaults, and how redis-server and redis-cli reach the nodes. */
interface NodeSettings extends Required<Omit<RedisClusterOptions, 'password'>> {
  /** redis-server arguments for TLS (besides its port) and the password. */
  serverArgs: string[];
  /** redis-cli arguments for TLS and the password. */
  cliArgs: string[];
}

/** Starts a redis-server with cluster mode on, answering once it accepts connections; tries other ports when one was taken meanwhile. */
async function startNode(dir: string, options: NodeSettings): Promise<NodeState> {
  for (let attempt = 1; ; attempt++) {
    const [port, busPort] = [await freePort(), await freePort()];
    const args = [
      // Over TLS, the node's one port is its TLS port (the cluster bus is TLS too: tls-cluster).
      ...(options.tls ? ['--port', '0', '--tls-port', String(port)] : ['--port', String(port)]),
      '--cluster-port',
      String(busPort),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs),
      '--dir',
      dir,
      '--logfile',
      '',
      '--maxmemory-policy',
      'noeviction',
      ...options.persistence,
      ...options.serverArgs,
    ];
    let server: TestProcess | undefined = startProcess('redis-server', args, { cwd: dir });
    try {
      await server.waitFor('Ready to accept connections', 20_000);
    } catch (error) {
      await server.stop({ signal: 'SIGKILL' });
      if (attempt < 3 && /Address already in use/.test(server.output())) continue;
      throw error;
    }
    const node: NodeState = {
      port,
      address: `127.0.0.1:${port}`,
      get running() {
        return server !== undefined;
      },
      async command(...words) {
        const { stdout } = await run('redis-cli', [...options.cliArgs, '-p', String(port), ...words], { timeout: 10_000 });
        return stdout;
      },
      async kill() {
        await server?.stop({ signal: 'SIGKILL' });
        server = undefined;
      },
      async restart() {
        if (server !== undefined) throw new Error(`node ${node.address} is running`);
        const again = startProcess('redis-server', args, { cwd: dir });
        server = again;
        await again.waitFor('Ready to accept connections', 20_000);
      },
      async stop() {
        await node.kill();
      },
    };
    return node;
  }
}

/** The key file beside a certificate made by {@link selfSignedCertificate}. */
const keyFileOf = (certFile: string) => certFile.replace(/\.pem$/, '.key');

/**
 * Makes, in `dir`, a self-signed certificate for `localhost` alone (a day long, its key beside it,
 * unencrypted) with openssl, and answers its path: the nodes' certificate and the CA clients trust.
 */
async function selfSignedCertificate(dir: string): Promise<string> {
  const certFile = join(dir, 'cluster.pem');
  await run(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      keyFileOf(certFile),
      '-out',
      certFile,
    ],
    { timeout: 60_000 },
  );
  return certFile;
}

/** A field of `CLUSTER INFO` or `INFO`, as printed by redis-cli. */
const field = (text: string, name: string) => new RegExp(`^${name}:([^\\r\\n]*)`, 'm').exec(text)?.[1];

/**
 * Starts a local Redis Cluster: `masters * (1 + replicasPerMaster)` redis-servers with
 * `--cluster-enabled yes` (no data on disk unless `persistence` says so), joined by
 * `redis-cli --cluster create`, and answers once every node says `cluster_state:ok`. Stop it with
 * {@link LocalRedisCluster.stop}; a crashed test file's nodes are ended with it (processes.ts).
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<LocalRedisCluster> {
  const parentDir = options.parentDir ?? tmpdir();
  const dirs: string[] = [];
  const nodes: NodeState[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  let caFile: string | undefined;
  try {
    if (options.tls) {
      const dir = mkdtempSync(join(parentDir, 'verikit-redis-cluster-tls-'));
      dirs.push(dir);
      caFile = await selfSignedCertificate(dir);
    }
    const { password } = options;
    const settings: NodeSettings = {
      masters: options.masters ?? 3,
      replicasPerMaster: options.replicasPerMaster ?? 0,
      nodeTimeoutMs: options.nodeTimeoutMs ?? 1_000,
      persistence: options.persistence ?? ['--appendonly', 'no', '--save', ''],
      parentDir,
      tls: caFile !== undefined,
      serverArgs: [
        ...(password === undefined ? [] : ['--requirepass', password, '--masterauth', password]),
        ...(caFile === undefined
          ? []
          : [
              '--tls-cluster',
              'yes',
              '--cluster-announce-hostname',
              'localhost',
              '--cluster-preferred-endpoint-type',
              'hostname',
              '--tls-replication',
              'yes',
              '--tls-auth-clients',
              'no',
              '--tls-cert-file',
              caFile,
              '--tls-key-file',
              keyFileOf(caFile),
              '--tls-ca-cert-file',
              caFile,
            ]),
      ],
      cliArgs: [
        ...(password === undefined ? [] : ['-a', password, '--no-auth-warning']),
        ...(caFile === undefined ? [] : ['--tls', '--cacert', caFile]),
      ],
    };
    const total = settings.masters * (1 + settings.replicasPerMaster);
    for (let i = 0; i < total; i++) {
      const dir = mkdtempSync(join(settings.parentDir, 'verikit-redis-cluster-'));
      dirs.push(dir);
      nodes.push(await startNode(dir, settings));
    }
    await run(
      'redis-cli',
      [
        ...settings.cliArgs,
        '--cluster',
        'create',
        ...nodes.map((node) => node.address),
        '--cluster-replicas',
        String(settings.replicasPerMaster),
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const byAddress = (address: string) => {
    const node = nodes.find((candidate) => candidate.address === address);
    if (node === undefined) throw new Error(`no node of this cluster at ${address}`);
    return node;
  };
  /** `CLUSTER NODES` as seen by a running node: each node's address, whether master, and its master's id. */
  const topology = async () => {
    const reporter = nodes.find((node) => node.running);
    if (reporter === undefined) throw new Error('no node of the cluster is running');
    return (await reporter.command('cluster', 'nodes'))
      .trim()
      .split('\n')
      .map((line) => {
        const [id, address, flags, master, , , , , ...slots] = line.split(' ');
        const flagList = (flags as string).split(',');
        return {
          id: id as string,
          address: (address as string).split('@')[0] as string,
          master: flagList.includes('master') && !flagList.includes('fail'),
          masterId: master as string,
          slots: slots.map((range) => range.split('-').map(Number) as [number, number?]),
        };
      });
  };

  const cluster: LocalRedisCluster = {
    nodes,
    startupNodes: nodes.map((node) => ({ host: caFile === undefined ? '127.0.0.1' : 'localhost', port: node.port })),
    ...(caFile !== undefined && { caFile }),
    async masterOf(key) {
      const reporter = nodes.find((node) => node.running) as NodeState;
      const slot = Number((await reporter.command('cluster', 'keyslot', key)).trim());
      const owner = (await topology()).find((entry) => entry.master && entry.slots.some(([from, to = from]) => slot >= from && slot <= to));
      if (owner === undefined) throw new Error(`no master serves slot ${slot} now`);
      return byAddress(owner.address);
    },
    async masters() {
      return (await topology()).filter((entry) => entry.master).map((entry) => byAddress(entry.address));
    },
    async waitUntilOk(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await Promise.all(
          nodes
            .filter((node) => node.running)
            .map(async (node) => {
              const info = await node.command('cluster', 'info').catch(() => '');
              if (field(info, 'cluster_state') !== 'ok') return `${node.address}: ${field(info, 'cluster_state') ?? 'no answer'}`;
              const replication = await node.command('info', 'replication').catch(() => '');
              if (field(replication, 'role') === 'slave' && field(replication, 'master_link_status') !== 'up')
                return `${node.address}: replica not in sync`;
              return undefined;
            }),
        );
        const waiting = states.filter((state) => state !== undefined);
        if (waiting.length === 0) return;
        if (Date.now() > deadline) throw new Error(`the Redis Cluster is not ok after ${timeoutMs} ms: ${waiting.join('; ')}`);
        await sleep(100);
      }
    },
    stop,
  };
  try {
    await cluster.waitUntilOk();
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}
