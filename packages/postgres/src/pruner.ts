import { type Bound, runBounded } from './bounded.js';

/** Deletes (or strips) rows in batches, now and then in the background. */
export interface Pruner {
  /** Runs each statement's batches until one changes fewer than a batch; answers how many rows they changed. */
  prune(): Promise<number>;
  /** Starts the background interval (once; a no-op when the interval is 0). */
  start(): void;
  /** Stops it and waits for a round under way. */
  stop(): Promise<void>;
}

/**
 * Runs `sql` (a DELETE or UPDATE whose `$1` is the batch size, then `params`) batch after batch
 * until one changes fewer than `batchSize` rows or `maxRounds` have run; answers how many rows
 * changed. Each batch is its own statement within the bound: no long lock.
 */
export async function inBatches(
  bound: Bound,
  what: string,
  sql: string,
  options: { batchSize: number; params?: unknown[]; maxRounds?: number },
): Promise<number> {
  const { batchSize, params = [], maxRounds = Number.POSITIVE_INFINITY } = options;
  let total = 0;
  for (let round = 0; round < maxRounds; round++) {
    const { rows } = await runBounded(bound, what, (q) =>
      q.query(`WITH gone AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM gone`, [batchSize, ...params]),
    );
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < batchSize) break;
  }
  return total;
}

/**
 * A pruner over `statements`, each a DELETE or UPDATE whose `$1` is the batch size, run in turn in
 * batches: a busy table is caught up over several rounds (at most 100 batches per statement a round).
 */
export function createPruner(options: {
  bound: Bound;
  statements: string[];
  batchSize: number;
  intervalMs: number;
  onError: (error: unknown) => void;
}): Pruner {
  const { bound, statements, batchSize, intervalMs, onError } = options;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<number> | undefined;
  const prune = async (): Promise<number> => {
    let total = 0;
    for (const sql of statements) total += await inBatches(bound, 'a pruning batch', sql, { batchSize, maxRounds: 100 });
    return total;
  };
  return {
    prune,
    start() {
      if (timer !== undefined || intervalMs === 0) return;
      timer = setInterval(() => {
        running ??= prune()
          .catch((error: unknown) => {
            onError(error);
            return 0;
          })
          .finally(() => {
            running = undefined;
          });
      }, intervalMs);
      (timer as { unref?: () => void }).unref?.();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
