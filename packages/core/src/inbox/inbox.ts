import { VerikitError } from '../errors.js';
import type { PayloadSealError } from '../privacy/seal.js';
import type { LeaseOutcome } from '../store/store.js';
import type { EventSubject, IdentifyEvent } from '../webhook/identify.js';

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
  /**
   * Set when the engine could not open the stored body (a {@link PayloadSealError}: its key is
   * missing or wrong); `body` is then empty. The worker fails the attempt with it and never runs the
   * event: the stored value stays as it was, to be run or replayed once the key is given.
   */
  unreadable?: Error;
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

/** Where a stored event stands: waiting to run (or retrying), done, or dead-lettered. */
export type InboxEventState = 'pending' | 'done' | 'dead';

/** One stored event as an operator sees it ({@link InboxAdmin.get}); its body only when asked for. */
export interface InboxRecord {
  id: string;
  state: InboxEventState;
  /** Attempts so far (leases taken). */
  attempts: number;
  /** The last failed attempt's error (name, code, message: never a body), or `null`. */
  lastError: string | null;
  /** When the inbox accepted it. */
  receivedAt: Date;
  /** When it was done or dead-lettered; `null` while pending. */
  finishedAt: Date | null;
  /** Whether its body is still stored: `removed` once payload retention or an erasure took it (the id stays, for dedupe). */
  payload: 'kept' | 'removed';
  /** The body as received (opened when sealed), only when asked with `{ withPayload: true }` and still kept. */
  body?: string;
}

/** Options of {@link InboxAdmin.deadLetters}: a page of dead letters, oldest first. */
export interface DeadLetterQuery {
  /** At most this many (default 100). */
  limit?: number;
  /** Only those received at or after this time. */
  since?: Date;
  /** Only those after this dead letter in the order (`receivedAt`, then id): the last id of the previous page. */
  after?: string;
}

/** What {@link InboxAdmin.erase} did: stored bodies about the verification removed (their ids kept, for dedupe). */
export interface InboxEraseResult {
  /** Events whose body was removed; pending and dead ones among them are marked done, so nothing runs them. */
  erased: number;
}

/** What {@link InboxAdmin.reseal} did. */
export interface ResealResult {
  /** Stored values sealed again under the current key (plain ones sealed for the first time). */
  resealed: number;
}

/**
 * What an operator does with a stored inbox, beyond what a worker needs: look at one event, page
 * through and purge dead letters, erase what is stored about a verification, re-seal under a new
 * key. The PostgreSQL and Redis inboxes implement it; the `verikit` CLI drives it.
 */
export interface InboxAdmin {
  /** One stored event, or `undefined` when the inbox has no such id (never accepted, or pruned). */
  get(id: string, options?: { withPayload?: boolean }): Promise<InboxRecord | undefined>;
  /** Dead letters, oldest first, a page at a time. */
  deadLetters(options?: DeadLetterQuery): Promise<DeadLetter[]>;
  /** Queues a dead letter again with fresh attempts; false when there is no such dead letter. */
  replay(id: string): Promise<boolean>;
  /** Removes dead letters received before `before` (their ids are kept as done, for dedupe); answers how many. */
  purgeDead(options: { before: Date }): Promise<number>;
  /**
   * Removes every stored body about `subject` (read with `identify`, default {@link defaultIdentify});
   * a pending or dead event among them is marked done without running. The ids stay, for dedupe.
   */
  erase(subject: EventSubject, options?: { identify?: IdentifyEvent }): Promise<InboxEraseResult>;
  /** Seals every stored body again under the current key (`encryption.keys[0]`), in batches. */
  reseal(options?: { onProgress?: (resealed: number) => void }): Promise<ResealResult>;
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
