import { type Bound, runBounded } from './bounded.js';

/** Deletes rows in batches, now and then in the background. */
export interface Pruner {
  /** Runs batches until one deletes fewer than a batch; answers how many rows went. */
  prune(): Promise<number>;
  /** Starts the background interval (once; a no-op when the interval is 0). */
  start(): void;
  /** Stops it and waits for a round under way. */
  stop(): Promise<void>;
}

/**
 * A pruner over `deleteSql`, a DELETE whose `$1` is the batch size. Batches, each its own
 * statement: no long lock, and a busy table is caught up over several rounds.
 */
export function createPruner(options: {
  bound: Bound;
  deleteSql: string;
  batchSize: number;
  intervalMs: number;
  onError: (error: unknown) => void;
}): Pruner {
  const { bound, deleteSql, batchSize, intervalMs, onError } = options;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<number> | undefined;
  const prune = async (): Promise<number> => {
    let total = 0;
    for (let round = 0; round < 100; round++) {
      const { rows } = await runBounded(bound, 'a pruning batch', (q) =>
        q.query(`WITH gone AS (${deleteSql} RETURNING 1) SELECT count(*)::int AS n FROM gone`, [batchSize]),
      );
      const n = Number(rows[0]?.n ?? 0);
      total += n;
      if (n < batchSize) break;
    }
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
