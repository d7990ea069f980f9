import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Queryable } from '@verikit/postgres';
import pg from 'pg';

/** Where the example keeps its data: PGlite in a folder (the default), or a PostgreSQL server. */
export type StorageChoice = { kind: 'pglite'; dir: string } | { kind: 'postgres'; url: string };

/** An open database, with the way to close it. */
export interface Storage {
  db: Queryable;
  /** Said at start: where the data is. */
  description: string;
  close(): Promise<void>;
}

/** `DATABASE_URL` selects a PostgreSQL server; otherwise PGlite keeps everything in `dataDir/pglite`. */
export function chooseStorage(env: Record<string, string | undefined>, dataDir: string): StorageChoice {
  const url = env.DATABASE_URL;
  return url ? { kind: 'postgres', url } : { kind: 'pglite', dir: join(dataDir, 'pglite') };
}

/** Opens the chosen database. */
export async function openStorage(choice: StorageChoice): Promise<Storage> {
  if (choice.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: choice.url, max: 10 });
    // A connection the server drops while idle is reported here; without a listener Node would end the process.
    pool.on('error', (error) => console.error(`verikit example: database connection lost: ${error.message}`));
    await pool.query('SELECT 1');
    return { db: pool, description: `PostgreSQL at ${new URL(choice.url).host}`, close: () => pool.end() };
  }
  mkdirSync(choice.dir, { recursive: true });
  const db = new PGlite(choice.dir);
  await db.waitReady;
  return { db, description: `PGlite in ${choice.dir}`, close: () => db.close() };
}
