import type { AcceptResult } from '@verikit/core';
import { type Bound, runBounded } from './bounded.js';

/** One delivery to store: its `svix-id`, the body as stored (sealed when encryption is on), its `svix-timestamp`. */
export interface AcceptRow {
  id: string;
  payload: string;
  timestamp: number;
}

/** Most rows one INSERT carries, so a statement stays small (3 parameters a row; PostgreSQL allows 65 535). */
const MAX_ROWS = 64;

/** One caller's promise, to settle. */
interface Waiter {
  resolve: (result: AcceptResult) => void;
  reject: (error: unknown) => void;
}

/** A row waiting for its statement, its caller, and repeats of its id in the same turn (told `duplicate` once it is stored). */
interface Waiting {
  row: AcceptRow;
  first: Waiter;
  repeats: Waiter[];
}

/** The next turn of the event loop, after the I/O of this one: where Node, Bun and Deno have it, `setImmediate`. */
const nextTurn: (run: () => void) => void =
  typeof globalThis.setImmediate === 'function' ? (run) => globalThis.setImmediate(run) : (run) => setTimeout(run, 0);

/**
 * Stores deliveries as the webhook route accepts them: those that arrive in one turn of the event
 * loop (under load, every request read in one poll) go to the database as one multi-row INSERT ...
 * ON CONFLICT DO NOTHING, one round trip and one commit for all of them. Each caller is answered once
 * that statement has committed, `accepted` for a row it wrote and `duplicate` for an id already
 * stored; never before. A failed statement fails every caller in it (503, the sender retries): the
 * rows come from verified, parsed JSON, so none of them fails on its own.
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
  let open: Map<string, Waiting> | undefined;

  const send = (batch: Map<string, Waiting>): void => {
    const waiting = [...batch.values()];
    const params: unknown[] = [];
    for (const { row } of waiting) params.push(row.id, row.payload, row.timestamp);
    runBounded(bound, 'the accept', (q) => q.query(insertOf(waiting.length), params)).then(
      ({ rows }) => {
        const written = new Set(rows.map((row) => String(row.id)));
        for (const { row, first, repeats } of waiting) {
          first.resolve(written.has(row.id) ? 'accepted' : 'duplicate');
          for (const repeat of repeats) repeat.resolve('duplicate');
        }
      },
      (error: unknown) => {
        for (const { first, repeats } of waiting) for (const waiter of [first, ...repeats]) waiter.reject(error);
      },
    );
  };

  return (row) =>
    new Promise<AcceptResult>((resolve, reject) => {
      if (open === undefined || open.size >= MAX_ROWS) {
        const batch = new Map<string, Waiting>();
        open = batch;
        nextTurn(() => {
          if (open === batch) open = undefined;
          send(batch);
        });
      }
      const same = open.get(row.id);
      if (same === undefined) open.set(row.id, { row, first: { resolve, reject }, repeats: [] });
      else same.repeats.push({ resolve, reject });
    });
}
