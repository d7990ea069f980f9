import { ConfigurationError, DEFAULT_RETENTION_MS, InvalidArgumentError, type LeaseOutcome } from '@verikit/core';

/**
 * What verikit needs of a database: `query(text, params)` answering `{ rows }`. A `pg` Pool or
 * Client and a PGlite instance all fit as they are.
 */
export interface Queryable {
  query(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: Array<Record<string, unknown>>; rowCount?: number | null; affectedRows?: number }>;
}

/** A query as pg's Pool and Client also take it: by name, so each connection parses and plans it only once. */
interface NamedQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** pg's Pool (`totalCount`) and its clients (`connectionParameters`); PGlite and other `query` objects get plain text. */
const takesNamedQueries = (db: Queryable): boolean =>
  typeof (db as { totalCount?: unknown }).totalCount === 'number' ||
  typeof (db as { connectionParameters?: unknown }).connectionParameters === 'object';

/** A statement run for every delivery or event: prepared once per pg connection instead of parsed and planned each time. */
export interface Statement {
  /** Runs it on `db` (a pool, a transaction's client, PGlite) with `params`. */
  run(db: Queryable, params: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

/** A {@link Statement} for `text`. Its name comes from the text itself, so statements of two schemas on one pool never clash. */
export function statement(text: string): Statement {
  // FNV-1a over the text, twice with different offsets: a 64-bit name with no dependency.
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    a = Math.imul(a ^ text.charCodeAt(i), 0x01000193) >>> 0;
    b = Math.imul(b ^ text.charCodeAt(i), 0x811c9dc5) >>> 0;
  }
  const name = `verikit_${a.toString(36)}_${b.toString(36)}`;
  return {
    run: (db, params) =>
      takesNamedQueries(db) ? (db as unknown as NamedQueryable).query({ name, text, values: params }) : db.query(text, params),
  };
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name checked to be a plain SQL identifier, quoted (it is written into DDL, never a parameter). */
export function quotedSchema(schema: string): string {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new ConfigurationError('schema', 'schema must be a lower-case SQL identifier (letters, digits, _; at most 63)');
  }
  return `"${schema}"`;
}

/** Checks the `db` option early, so a wrong object fails at startup and not at the first delivery. */
export function checkQueryable(db: unknown): Queryable {
  if (db === null || typeof db !== 'object' || typeof (db as Queryable).query !== 'function') {
    throw new ConfigurationError('db', 'db is required: a pg Pool or Client, a PGlite instance, or anything with query(text, params)');
  }
  return db as Queryable;
}

/** Options the store and the inbox share: where their tables live, what they keep, and their upkeep. */
export interface PostgresTableOptions {
  /** Schema for verikit's tables (default `verikit`); a plain lower-case identifier. */
  schema?: string;
  /** How long handled ids are kept (default 7 days, beyond Svix's ~27.6 h of retries): a repeat within it is recognised. */
  retentionMs?: number;
  /** How often rows past their time are pruned, in ms (default 60 000; 0: never, call `prune()` yourself). */
  pruneIntervalMs?: number;
  /** Rows deleted per pruning statement (default 1 000), so pruning never holds long locks. */
  pruneBatchSize?: number;
  /** Told when background work (pruning, listening) fails (default: one line on `console.warn`); the rest keeps working, whatever it throws. */
  onError?: (error: unknown) => void;
  /**
   * The longest any of verikit's statements may take, in ms, the wait for a free pool connection
   * included (default 5 000, well within Svix's 15 s). Past it the call fails with a
   * `StorageTimeoutError` (code `timeout`): the webhook route answers 503 and the sender retries;
   * a worker tries again later. On a pg Pool the connection is destroyed, never handed back
   * mid-statement. Statements through `ctx.sql` are held to it too.
   */
  timeoutMs?: number;
}

/** What the store and the inbox have besides their contract: their tables' upkeep. */
export interface PostgresMaintenance {
  /** Creates the schema and tables when missing; safe to run from every instance at once. */
  migrate(): Promise<void>;
  /**
   * Deletes rows past their time (and, on the inbox, removes bodies past their retention) in batches;
   * answers how many rows it changed. Runs by itself every `pruneIntervalMs`.
   */
  prune(): Promise<number>;
  /** Stops background work. It never ends the `db` you passed in: that is yours. */
  close(): Promise<void>;
}

/**
 * Where background failures (pruning, a notification, a late lease handed back) go: `onError`, told
 * and never trusted, since a throw from it would be an unhandled rejection; else a warning on `console`.
 */
function reportTo(onError: ((error: unknown) => void) | undefined, what: string): (error: unknown) => void {
  if (onError === undefined) return (error) => console.warn(`verikit (${what}): ${String(error)}`);
  return (error) => {
    try {
      // An async onError's rejection would be unhandled too.
      (onError(error) as PromiseLike<unknown> | undefined)?.then?.(undefined, () => {});
    } catch {}
  };
}

/** Checks the shared options once, at creation, and fills their defaults. */
export function resolveTableOptions(
  options: (PostgresTableOptions & { db: Queryable }) | undefined,
  what: string,
): {
  db: Queryable;
  schemaName: string;
  schema: string;
  retentionMs: number;
  pruneIntervalMs: number;
  pruneBatchSize: number;
  report: (error: unknown) => void;
  timeoutMs: number;
} {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('options', `${what} needs an options object`);
  const db = checkQueryable(options.db);
  const schemaName = options.schema ?? 'verikit';
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  if (!(retentionMs > 0)) throw new ConfigurationError('retentionMs', 'retentionMs must be positive');
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new ConfigurationError('timeoutMs', 'timeoutMs must be a positive whole number of ms');
  return {
    db,
    schemaName,
    schema: quotedSchema(schemaName),
    retentionMs,
    pruneIntervalMs: options.pruneIntervalMs ?? 60_000,
    pruneBatchSize: options.pruneBatchSize ?? 1_000,
    report: reportTo(options.onError, what),
    timeoutMs,
  };
}

/** A duration as the whole, non-negative milliseconds a statement parameter takes. */
export const wholeMs = (value: number): number => Math.max(0, Math.round(value));

/** SQL for the interval of the milliseconds in `param`. */
export const msInterval = (param: string): string => `(${param}::double precision * interval '1 millisecond')`;

/** SQL for "now, on the server's clock, plus the milliseconds in `param`". */
export const msFromNow = (param: string): string => `now() + ${msInterval(param)}`;

/** An owner's call that matched its row (`RETURNING` gave one) is `ok`; one that matched none is `stale`. */
export const leaseOutcome = (rows: unknown[]): LeaseOutcome => (rows.length > 0 ? 'ok' : 'stale');

/** A time as a statement parameter; anything but a valid Date (or `null` where allowed) is refused before it reaches SQL. */
export function timestamp(value: Date | null, name: string, nullable: boolean): string | null {
  if (value === null && nullable) return null;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidArgumentError(`${name} must be a valid Date${nullable ? ' or null' : ''}`);
  }
  return value.toISOString();
}

/** A count as a statement parameter: a whole number of at least `min`, else an {@link InvalidArgumentError} naming it. */
export function wholeCount(value: unknown, name: string, min: number): number {
  if (!Number.isInteger(value) || (value as number) < min) throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
  return value as number;
}
