import type { VerikitClient } from '../client/client.js';
import { extrasOf } from '../client/seam.js';
import { ConfigurationError } from '../errors.js';
import type { FetchedResult, WebhookContext } from './handler.js';
import type { EventSubject, IdentifyEvent } from './identify.js';

/**
 * The `ctx` of one delivery. A class, so nothing is computed or allocated per delivery for what
 * `onEvent` does not read: the subject is identified, and the AbortController behind `signal`
 * made, only when first asked for.
 */
export class DeliveryContext implements WebhookContext {
  #controller: AbortController | undefined;
  #expired: unknown;
  #identified: EventSubject | null | undefined;

  constructor(
    readonly event: unknown,
    readonly id: string,
    readonly timestamp: number,
    identify: IdentifyEvent,
    client: VerikitClient | undefined,
  ) {
    this.#identify = identify;
    this.#client = client;
  }

  readonly #identify: IdentifyEvent;
  readonly #client: VerikitClient | undefined;

  get subject(): EventSubject | null {
    if (this.#identified === undefined) {
      try {
        this.#identified = this.#identify(this.event) ?? null;
      } catch {
        this.#identified = null;
      }
    }
    return this.#identified;
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    this.#abortIfExpired();
    return this.#controller.signal;
  }

  // A getter, so `({ fetchResult }) => ...` keeps working; the function is made only when read.
  get fetchResult(): () => Promise<FetchedResult> {
    return () => fetchResult(this.#client, this.subject);
  }

  /** The deadline passed: abort the signal with `reason` (now, or whenever it is first read). */
  expire(reason: unknown = new Error('webhook handler deadline passed')): void {
    this.#expired ??= reason;
    this.#abortIfExpired();
  }

  #abortIfExpired(): void {
    if (this.#expired !== undefined && this.#controller && !this.#controller.signal.aborted) {
      this.#controller.abort(this.#expired);
    }
  }
}

async function fetchResult(client: VerikitClient | undefined, subject: EventSubject | null): Promise<FetchedResult> {
  if (client === undefined) throw new ConfigurationError('client', 'ctx.fetchResult() needs the handler option client');
  // Carried by the client: a handler whose app makes no client bundles none of the reading.
  return extrasOf(client, 'ctx.fetchResult()').fetchResult(client, subject);
}
