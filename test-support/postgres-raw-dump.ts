import type { Queryable } from '@verikit/postgres';
import { expect } from 'vitest';

/**
 * Every column of every table in `schema`, read raw as text (around verikit): what a look at the
 * database would find. On a pg Pool or a PGlite.
 */
export async function dumpSchema(db: Queryable, schema: string): Promise<string> {
  const { rows: columns } = await db.query(
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position',
    [schema],
  );
  expect(columns.map((c) => c.table_name)).toContain('verikit_inbox');
  const values: string[] = [];
  for (const { table_name, column_name } of columns) {
    const { rows } = await db.query(`SELECT "${column_name}"::text AS v FROM "${schema}"."${table_name}"`);
    for (const row of rows) if (row.v !== null) values.push(String(row.v));
  }
  return values.join('\n');
}
