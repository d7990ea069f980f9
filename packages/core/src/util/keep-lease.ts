import type { LeaseOutcome } from '../store/store.js';

/**
 * Extends a lease every `everyMs` for as long as `work` runs, so no other instance or worker takes
 * the id meanwhile. Stops when the work settles, or when an extension finds the lease no longer
 * the caller's (`stale`: extending again could not win it back).
 */
export function keepLeaseWhile(
  work: PromiseLike<unknown>,
  everyMs: number,
  extend: () => Promise<LeaseOutcome>,
  heard: { stale(): void; error(error: unknown): void },
): void {
  const timer = setInterval(() => {
    Promise.resolve()
      .then(extend)
      .then((outcome) => {
        if (outcome !== 'stale') return;
        clearInterval(timer);
        heard.stale();
      }, heard.error);
  }, everyMs);
  const stop = () => clearInterval(timer);
  work.then(stop, stop);
}
