import { ConfigurationError } from '@verikit/core';

/**
 * What verikit needs of a database: `query(text, params)` answering `{ rows }`. A `pg` Pool or
 * Client and a PGlite instance all fit as they are.
 */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
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
