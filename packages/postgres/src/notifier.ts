import { type Bound, runBounded } from './bounded.js';
import { statement } from './db.js';

/** Wakes the inbox's workers on every instance, coalescing wake-ups that come faster than NOTIFY can go out. */
export interface Notifier {
  /** Asks for a NOTIFY after now: sent at once, or right after the one in flight. Never throws. */
  notify(): void;
  /** Resolves when no NOTIFY is in flight or owed. */
  settled(): Promise<void>;
}

/**
 * NOTIFY serialises: PostgreSQL commits notifying transactions one at a time, holding a global lock
 * through the commit's disk flush. Notifying inside every accept capped the webhook route at one
 * accept per flush (~1,600/s here). Sent apart, after the row is committed, at most one is in flight,
 * and the next goes `gapMs` after it at the earliest: accepts meanwhile share that next one, which
 * their rows precede, so no wake-up is lost. The first accept after a quiet spell notifies at once;
 * under load workers are busy anyway, and lease again without waiting to be told. The default gap
 * is 50 ms: at 10 ms the stream of NOTIFY commits cost the accept route a quarter more CPU per
 * delivery than a bare INSERT (bench/inbox.mjs), at 50 ms no more than with none at all, and a
 * remote worker idle under load learns of new work within 50 ms still.
 */
export function createNotifier(options: { bound: Bound; channel: string; gapMs?: number; onError: (error: unknown) => void }): Notifier {
  const { bound, channel, onError, gapMs = 50 } = options;
  const send = statement('SELECT pg_notify($1, $2)');
  let inFlight: Promise<void> | undefined;
  let owed = false;
  const notify = (): void => {
    if (inFlight !== undefined) {
      owed = true;
      return;
    }
    const sentAt = performance.now();
    inFlight = runBounded(bound, 'a wake-up NOTIFY', (q) => send.run(q, [channel, '']))
      .then(
        () => {},
        // Workers also poll: a wake-up that failed delays work by one poll interval at most.
        onError,
      )
      .then(async () => {
        if (!owed) return;
        const wait = sentAt + gapMs - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      })
      .finally(() => {
        inFlight = undefined;
        if (owed) {
          owed = false;
          notify();
        }
      });
  };
  return {
    notify,
    async settled() {
      while (inFlight !== undefined) await inFlight;
    },
  };
}
