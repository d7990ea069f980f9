import { type AcceptResult, batchByTurn, InvalidArgumentError } from '@verikit/core';
import { type Bound, runBounded } from './bounded.js';

/** One delivery to store: its `svix-id`, the body as stored (sealed when encryption is on), its `svix-timestamp`. */
export interface AcceptRow {
  id: string;
  payload: string;
  timestamp: number;
}

/** Most rows one INSERT carries, so a statement stays small (3 parameters a row; PostgreSQL allows 65 535). */
const MAX_ROWS = 64;

/**
 * Stores deliveries as the webhook route accepts them: those of one turn of the event loop go to
 * the database as one multi-row INSERT ... ON CONFLICT DO NOTHING, one round trip and one commit for
 * all. Each caller is answered once that statement has committed: `accepted` for the row it wrote,
 * `duplicate` for an id stored before or repeated earlier in the same turn. A failed statement
 * fails every caller in it (503, the sender retries); `accept` refuses a row that could fail on its
 * own (see `checkAcceptRow`) before it joins a batch.
 */
export function createAcceptBatcher(options: { bound: Bound; table: string }): (row: AcceptRow) => Promise<AcceptResult> {
  const { bound, table } = options;
  const statements: string[] = [];
  /** The INSERT for `count` rows, made once per count. */
  const insertOf = (count: number): string => {
    statements[count] ??= `INSERT INTO ${table} (id, payload, svix_timestamp) VALUES ${Array.from(
      { length: count },
      (_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`,
    ).join(', ')} ON CONFLICT (id) DO NOTHING RETURNING id`;
    return statements[count];
  };
  return batchByTurn<AcceptRow, AcceptResult>({
    maxItems: MAX_ROWS,
    async send(rows) {
      // A repeat within the turn is sent once; the caller that came first is the one told it was written.
      const unique = new Map<string, AcceptRow>();
      for (const row of rows) if (!unique.has(row.id)) unique.set(row.id, row);
      // In id order, as every batch inserts: two batches sharing ids (repeats from another instance) cannot deadlock.
      const ordered = [...unique.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const params: unknown[] = [];
      for (const row of ordered) params.push(row.id, row.payload, row.timestamp);
      // Not prepared: for the one-row INSERT, planning cost the server less than pg's handling of a named query cost the route,
      // and the text changes with the row count.
      const { rows: written } = await runBounded(bound, 'the accept', (q) => q.query(insertOf(unique.size), params));
      const fresh = new Set(written.map((row) => String(row.id)));
      return rows.map((row) => (fresh.delete(row.id) ? 'accepted' : 'duplicate'));
    },
  });
}

/**
 * Refuses a row PostgreSQL would reject (a NUL in the id or body, which text cannot hold; a timestamp
 * that is not a whole number of seconds), so it fails alone instead of failing its batch. The webhook
 * route never hands one over: its bodies are verified JSON, which has no raw NUL.
 */
export function checkAcceptRow(row: AcceptRow): void {
  if (typeof row.id !== 'string' || row.id === '' || row.id.includes('\0'))
    throw new InvalidArgumentError('accept needs an id: a non-empty string without NUL characters');
  if (typeof row.payload !== 'string' || row.payload.includes('\0'))
    throw new InvalidArgumentError('accept needs a body: a string without NUL characters');
  if (!Number.isSafeInteger(row.timestamp)) throw new InvalidArgumentError('accept needs a timestamp: whole seconds since the epoch');
}
