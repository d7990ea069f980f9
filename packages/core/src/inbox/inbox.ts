import { VerikitError } from '../errors.js';
import type { LeaseOutcome } from '../store/store.js';

/** A verified delivery as the webhook route hands it to an inbox: its id, timestamp and exact body. */
export interface InboxDelivery {
  /** `svix-id`: the key; a second delivery with it changes nothing. */
  id: string;
  /** `svix-timestamp`, seconds since the epoch. */
  timestamp: number;
  /** The verified body, as received (JSON text). */
  body: string;
}

/** What accepting found: newly stored and queued, or already there (a repeat). */
export type AcceptResult = 'accepted' | 'duplicate';

/**
 * The receiving side of an inbox: stores a verified event and queues it in one atomic step keyed
 * by `svix-id`. The webhook route answers 204 only once `accept` has resolved.
 */
export interface Inbox {
  accept(delivery: InboxDelivery): Promise<AcceptResult>;
}

/** An event a worker has leased: run it, then complete, fail or release it. */
export interface InboxEvent extends InboxDelivery {
  /** Who holds the lease (this worker). */
  owner: string;
  /** This attempt's number, from 1. */
  attempt: number;
  /**
   * When the inbox accepted it, on the clock the engine's ledger uses too (when the engine knows):
   * the ledger settles an event without a fetch of its own when a fetch for its refId started after it.
   */
  receivedAt?: Date;
}

/** An event that ran out of attempts, kept for an operator to inspect and replay. */
export interface DeadLetter {
  id: string;
  attempts: number;
  lastError: string | null;
  receivedAt: Date;
}

/** How deep an inbox is, for a readiness check or a dashboard. */
export interface InboxStats {
  /** Events neither done nor dead: due, leased, or waiting out a retry's backoff. */
  pending: number;
  /** Of `pending`, those waiting out a retry's backoff after a failed attempt. */
  retrying: number;
  /** Dead letters: out of attempts, kept until replayed or removed. */
  dead: number;
  /** When the oldest pending event was accepted (the clock `receivedAt` is on), or `null` when none is pending. */
  oldestPendingAt: Date | null;
  /** How long the oldest pending event has waited, in ms, measured on that same clock; `null` when none is pending. */
  oldestPendingAgeMs: number | null;
}

/**
 * The working side of an inbox, which `createInboxWorker` drives. `Tx` is what `ctx.sql` is: the
 * engine's transaction, in which the event is also marked done (an integrator's writes and "done"
 * commit together, or not at all).
 */
export interface InboxEngine<Tx = unknown> extends Inbox {
  /** Leases up to `limit` due events to `owner` for `leaseMs` (each lease counts an attempt). */
  lease(owner: string, limit: number, leaseMs: number): Promise<InboxEvent[]>;
  /** Moves the lease's expiry to `leaseMs` from now while the work runs; `stale` when it is not the owner's. */
  extend(event: InboxEvent, leaseMs: number): Promise<LeaseOutcome>;
  /**
   * Runs `work` in a transaction that also marks the event done; a throw rolls both back. `stale` (nothing run) when not the
   * owner's. Once `work` has settled, `tx` refuses every query with a {@link TransactionEndedError}.
   */
  complete(event: InboxEvent, work: (tx: Tx) => Promise<void>): Promise<LeaseOutcome>;
  /** Records a failed attempt: due again in `retryInMs`, or dead-lettered when it is `null`. */
  fail(event: InboxEvent, failure: { error: string; retryInMs: number | null }): Promise<LeaseOutcome>;
  /** Resolves when new work may be there (a notification) or after `maxWaitMs`, whichever first, or when `signal` aborts. */
  waitForWork(signal: AbortSignal, maxWaitMs: number): Promise<void>;
  /** Dead-lettered events, oldest first. */
  deadLetters(options?: { limit?: number }): Promise<DeadLetter[]>;
  /** Queues a dead-lettered event again with fresh attempts; false when there is no such dead letter. */
  replay(id: string): Promise<boolean>;
  /** Counts pending, retrying and dead events and ages the oldest pending one, in one read. */
  stats(): Promise<InboxStats>;
}

/**
 * `ctx.sql` was used after its event's transaction had ended: its `onEvent` had returned or thrown
 * (a write then would land outside the transaction that marks the event done, once per attempt), or
 * a statement in it did not answer in time. The query was not run.
 */
export class TransactionEndedError extends VerikitError {
  override name = 'TransactionEndedError';
  constructor() {
    super(
      'transaction_ended',
      "the event's transaction had ended (onEvent had returned or thrown, or a statement in it did not answer in time), so this ctx.sql query was not run: await every ctx.sql query inside onEvent",
    );
  }
}
