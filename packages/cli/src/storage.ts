import { createRequire } from 'node:module';
import type { EncryptionOptions, InboxAdmin, InboxEngine, LedgerAdmin, LedgerEngine } from '@verikit/core';
import { CliError } from './errors.js';
import type { EngineName, RedisMode } from './target.js';

/** An inbox as the CLI drives it: the worker's side it always has, the operator's side when the engine version has it. */
export type CliInbox = Pick<InboxEngine, 'stats' | 'deadLetters' | 'replay'> & Partial<InboxAdmin>;

/** A ledger as the CLI drives it: it reads rows and asks for a check, and never records an observation itself. */
export type CliLedger = Pick<LedgerEngine, 'get' | 'list' | 'stats'> & Partial<LedgerAdmin>;

/** Where verikit keeps its data, with the app's names for it (the engines' defaults unless the app changed them). */
export interface StorageOptions {
  /** PostgreSQL: the schema of verikit's tables (`--schema`, default `verikit`). */
  schema?: string;
  /** Redis: the inbox's BullMQ queue name (`--queue`, default `verikit-inbox`). */
  queue?: string;
  /** Redis: the inbox's BullMQ key prefix (`--prefix`, default `{verikit}`). */
  prefix?: string;
  /** Redis: the ledger's key prefix (`--ledger-prefix`, default `verikit:ledger:`). */
  ledgerPrefix?: string;
  /** The app's keys, to open, erase and re-seal sealed bodies. */
  encryption?: EncryptionOptions;
}

/** An open connection to one engine: its inbox and ledger, made at their first use, and what closes them all. */
export interface Storage {
  readonly engine: EngineName;
  /** How messages name it (no password). */
  readonly where: string;
  /** What to pass to point the CLI at the app's tables or keys. */
  readonly setUpHint: string;
  /** The engine package's name and version, for a message that asks for another version. */
  readonly engineVersion: string;
  /** Redis: one server, or a Cluster (`--cluster`). */
  readonly redisMode?: RedisMode;
  /** The inbox; `notSetUp` when its table or queue is not there. */
  inbox(): Promise<CliInbox>;
  /** The ledger; `notSetUp` when its table is not there. */
  ledger(): Promise<CliLedger>;
  /** Closes the engines and the connection; safe to call more than once. */
  close(): Promise<void>;
}

/** Installs that make each engine work beside the CLI. */
export const ENGINE_PACKAGES: Record<EngineName, string[]> = {
  postgres: ['@verikit/postgres', 'pg'],
  redis: ['@verikit/redis', 'ioredis', 'bullmq'],
};

/** What to pass to point the CLI at the app's tables or keys, per engine. */
const SET_UP_HINT: Record<EngineName, string> = { postgres: '--schema', redis: '--queue and --prefix' };

/**
 * What messages say of an engine: where it is, what points the CLI at the app's names, which engine
 * package is installed, and on Redis whether it is one server or a Cluster.
 */
export function describeEngine(
  engine: EngineName,
  where: string,
  redisMode?: RedisMode,
): Pick<Storage, 'engine' | 'where' | 'setUpHint' | 'engineVersion' | 'redisMode'> {
  const name = ENGINE_PACKAGES[engine][0] as string;
  return {
    engine,
    where,
    setUpHint: SET_UP_HINT[engine],
    engineVersion: `${name} ${installedVersion(name) ?? ''}`.trim(),
    ...(redisMode !== undefined && { redisMode }),
  };
}

/** How long connecting may take, the server's first answer included (the engines' own default bound). */
export const CONNECT_TIMEOUT_MS = 5_000;

/** How long one command to the server may take once connected: a server that stops answering mid-run ends the CLI (exit code 5) instead of holding it. */
export const COMMAND_TIMEOUT_MS = 30_000;

/**
 * Imports one of an engine's optional peer dependencies, or says what to install: the CLI drives the
 * engine package the app uses, so it is the app's to install, at the app's version.
 */
export async function loadPeer<T>(engine: EngineName, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    const missing = /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message)?.[1];
    const packages = ENGINE_PACKAGES[engine];
    throw new CliError(
      'configuration',
      `${engine === 'postgres' ? 'a PostgreSQL' : 'a Redis'} URL needs ${packages.join(', ')} installed beside @verikit/cli` +
        `${missing === undefined ? '' : ` (${missing.replace(/\/.*node_modules\//, '')} is missing)`}: npm install ${packages.join(' ')}` +
        ', at the versions your app runs',
    );
  }
}

/** The installed version of `name` beside the CLI, or `undefined` when it is not installed. */
export function installedVersion(name: string): string | undefined {
  try {
    return (createRequire(import.meta.url)(`${name}/package.json`) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/** A method of the operator's interface, or a message that the installed engine package predates it. */
export function operation<T, K extends keyof T>(
  storage: Pick<Storage, 'engineVersion'>,
  engine: T,
  method: K,
  command: string,
): NonNullable<T[K]> {
  const fn = engine[method];
  if (typeof fn !== 'function')
    throw new CliError(
      'configuration',
      `${command} needs ${String(method)}() of the engine, which ${storage.engineVersion} does not have: install the @verikit/* version your app runs, at or past the one that added it`,
    );
  return (fn as (...args: unknown[]) => unknown).bind(engine) as NonNullable<T[K]>;
}
