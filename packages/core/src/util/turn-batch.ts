/** Options of {@link batchByTurn}. */
export interface TurnBatchOptions<T, R> {
  /** Most items one call of `send` takes; more in one turn go in further calls. */
  maxItems: number;
  /** Does the work for a batch: one result per item, in order (anything else rejects the batch). A rejection rejects every item of the batch. */
  send(items: T[]): Promise<R[]>;
}

// Taken when this module loads: a test that fakes timers afterwards (Jest and Vitest fake
// setImmediate too) must not leave every accept waiting for a turn that never comes. Timers faked
// before verikit loads are the ones it takes: such a test advances them (or leaves setImmediate out of toFake).
const immediate = typeof globalThis.setImmediate === 'function' ? globalThis.setImmediate : undefined;
const timeout = globalThis.setTimeout;

/** The next turn of the event loop, after this one's I/O: `setImmediate` where the runtime has it (Node, Bun), else a 0 ms timer. */
const nextTurn = (run: () => void): void => {
  if (immediate !== undefined) immediate(run);
  else timeout(run, 0);
};

/**
 * Gathers the calls made in one turn of the event loop (under load, every request read in one poll)
 * and does them with one `send`: an engine's accept then costs one round trip and one write for many
 * deliveries. Each call settles with its own item's result once its batch's `send` has, never before.
 * @example
 * const insert = batchByTurn({ maxItems: 64, send: async (rows) => { await db.insertMany('events', rows); return rows.map(() => 'accepted' as const); } });
 * await insert({ id, body }); // 'accepted', once the whole batch is inserted
 */
export function batchByTurn<T, R>(options: TurnBatchOptions<T, R>): (item: T) => Promise<R> {
  const { maxItems, send } = options;
  let open: Array<{ item: T; resolve: (result: R) => void; reject: (error: unknown) => void }> | undefined;
  const flush = (batch: NonNullable<typeof open>) => {
    if (open === batch) open = undefined;
    // Called through a promise: a send that throws rejects its batch instead of escaping the timer.
    Promise.resolve(batch.map((waiting) => waiting.item))
      .then(send)
      .then((results) => {
        // A result per item, or nobody is answered with something that was not theirs.
        if (!Array.isArray(results) || results.length !== batch.length)
          throw new TypeError(
            `batchByTurn: send answered ${Array.isArray(results) ? results.length : typeof results} results for ${batch.length} items`,
          );
        return results;
      })
      .then(
        (results) => {
          for (const [i, waiting] of batch.entries()) waiting.resolve(results[i] as R);
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      );
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (open === undefined || open.length >= maxItems) {
        const batch: NonNullable<typeof open> = [];
        open = batch;
        nextTurn(() => flush(batch));
      }
      open.push({ item, resolve, reject });
    });
}
