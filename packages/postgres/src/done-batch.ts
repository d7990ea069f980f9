import { batchByTurn } from '@verikit/core';
import { type Bound, runBounded } from './bounded.js';
import { statement } from './db.js';

/** A leased event to mark done: its id and the owner that holds its lease. */
export interface DoneRow {
  id: string;
  owner: string;
}

/** Most events one UPDATE marks done: a worker's whole lease at usual concurrencies. */
const MAX_ROWS = 64;

/**
 * Marks done the events whose work wrote nothing through `ctx.sql` (no transaction to commit with):
 * those finished in one turn of the event loop share one UPDATE, one round trip and one commit for
 * all, as a worker's events leased together usually finish together. Each caller learns whether its
 * lease still held (`true`) or had gone to another owner (`false`). A failed statement fails every
 * caller in it: the worker records each as a failed attempt, and those events run again after their
 * backoff, as with one event's failed statement. `set` is the SET clause the one-event statement uses too.
 */
export function createDoneBatcher(options: { bound: Bound; table: string; set: string }): (row: DoneRow) => Promise<boolean> {
  const { bound, table, set } = options;
  const doneSql = statement(`UPDATE ${table} AS t SET ${set}
FROM unnest($1::text[], $2::text[]) AS done(id, owner)
WHERE t.id = done.id AND t.owner = done.owner AND t.state = 'pending'
RETURNING t.id, t.owner`);
  return batchByTurn<DoneRow, boolean>({
    maxItems: MAX_ROWS,
    async send(rows) {
      // In id order, the order a nested loop over the arrays locks rows in, so batches sharing a row (a
      // lease that ran out and was taken again) seldom deadlock. The plan decides, though: a deadlock (with
      // another batch, an operator's reseal or erase) is broken by PostgreSQL within a second and fails the
      // batch, whose events run again after their backoff.
      const ordered = [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const { rows: marked } = await runBounded(bound, 'marking the event done', (q) =>
        doneSql.run(q, [ordered.map((row) => row.id), ordered.map((row) => row.owner)]),
      );
      // A row has one owner, so at most one caller per id is answered true.
      const ownerOf = new Map(marked.map((row) => [String(row.id), String(row.owner)]));
      return rows.map((row) => ownerOf.get(row.id) === row.owner);
    },
  });
}
