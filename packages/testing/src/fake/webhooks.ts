import { randomBytes } from 'node:crypto';
import { ConfigurationError } from '@verikit/core';
import { signWebhook } from '../sign.js';

/** Svix's retry schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const SVIX_SCHEDULE_MS: readonly number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** One delivery attempt, recorded for assertions. */
export interface DeliveryAttempt {
  messageId: string;
  endpoint: string;
  attempt: number;
  /** HTTP status, or undefined when the request failed (refused, timeout). */
  status: number | undefined;
  error: string | undefined;
  at: Date;
}

/**
 * A message and where its delivery stands: `pending` (attempts to come), `delivered` (a 2xx),
 * `failed` (out of retries: lost, as with Svix), `dropped` (never attempted: `dropRate`).
 */
export interface WebhookMessage {
  id: string;
  endpoint: string;
  payload: unknown;
  state: 'pending' | 'delivered' | 'failed' | 'dropped';
  attempts: number;
  /** Whether it is delivered twice (`duplicateRate`): one more attempt of the same svix-id after its first 2xx. */
  duplicate: boolean;
  /** The delay before its first attempt, in ms (`delayMs`). */
  delayMs: number;
}

/**
 * How imperfect the deliveries are (`fake.webhooks.configure`); by default every message is sent
 * once, at once, and retried on Svix's schedule.
 */
export interface WebhookBehaviour {
  /** Share of messages never delivered, 0 to 1: recorded as `dropped`, never attempted, not waited for by `settle()`. */
  dropRate?: number;
  /** Share of messages delivered twice, 0 to 1: after the first 2xx, one more attempt of the same svix-id. */
  duplicateRate?: number;
  /** A random delay in ms before a message's first attempt (and before a duplicate's second), so messages arrive out of order. */
  delayMs?: { min: number; max: number };
  /**
   * The random source, 0 <= x < 1 (default `Math.random`), for reproducible runs. Each message draws,
   * in this order and only for what is switched on: drop, duplicate, delay, the duplicate's delay.
   */
  random?: () => number;
}

/** Delivery settings. */
export interface WebhookDeliveryOptions {
  /** Delays before each attempt (default Svix's schedule scaled by `retryScale`). */
  retrySchedule?: readonly number[];
  /** Multiplies Svix's schedule (default 1; `0.001` turns hours into seconds). Ignored with `retrySchedule`. */
  retryScale?: number;
  /** Per-attempt timeout in ms (default 15 000, as Svix). */
  timeoutMs?: number;
  /** Told about every delivery attempt as it ends, with its duration. */
  onAttempt?: (attempt: DeliveryAttempt & { durationMs: number }) => void;
  /** Told about every message dropped (`dropRate`), which has no attempts to tell of. */
  onDropped?: (message: WebhookMessage) => void;
}

interface Endpoint {
  url: string;
  org: string;
}

/** The `error` of every attempt made while the organization's endpoints are down (`fake.webhooks.down()`): as if they did not answer. */
export const ENDPOINT_DOWN_ERROR = 'endpoint down (fake.webhooks.down()): connection refused';

/** `value` as a share from 0 to 1, or a ConfigurationError naming `option`. */
function share(option: string, value: number): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1))
    throw new ConfigurationError(option, `${option} must be a number from 0 to 1`);
  return value;
}

/** Sends Svix-signed deliveries to registered endpoints and retries them like Svix. */
export class WebhookDispatcher {
  readonly attempts: DeliveryAttempt[] = [];
  readonly messages: WebhookMessage[] = [];
  private readonly endpoints: Endpoint[] = [];
  private readonly secrets = new Map<string, string[]>();
  private readonly pending = new Set<Promise<void>>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly schedule: readonly number[];
  private readonly timeoutMs: number;
  private readonly onAttempt: WebhookDeliveryOptions['onAttempt'];
  private readonly onDropped: WebhookDeliveryOptions['onDropped'];
  private readonly down = new Set<string>();
  private behaviour: Required<Omit<WebhookBehaviour, 'delayMs'>> & Pick<WebhookBehaviour, 'delayMs'> = {
    dropRate: 0,
    duplicateRate: 0,
    random: Math.random,
  };
  private closed = false;

  constructor(options: WebhookDeliveryOptions = {}) {
    const scale = options.retryScale ?? 1;
    this.schedule = options.retrySchedule ?? SVIX_SCHEDULE_MS.map((ms) => Math.round(ms * scale));
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.onAttempt = options.onAttempt;
    this.onDropped = options.onDropped;
  }

  /** Changes the given settings (the others keep theirs), for messages published from now on. */
  configure(behaviour: WebhookBehaviour): void {
    const next = { ...this.behaviour };
    if (behaviour.dropRate !== undefined) next.dropRate = share('dropRate', behaviour.dropRate);
    if (behaviour.duplicateRate !== undefined) next.duplicateRate = share('duplicateRate', behaviour.duplicateRate);
    if (behaviour.delayMs !== undefined) {
      const { min, max } = behaviour.delayMs;
      if (!(Number.isFinite(min) && Number.isFinite(max) && min >= 0 && min <= max))
        throw new ConfigurationError('delayMs', 'delayMs must be { min, max } with 0 <= min <= max (ms)');
      next.delayMs = { min, max };
    }
    if (behaviour.random !== undefined) {
      if (typeof behaviour.random !== 'function') throw new ConfigurationError('random', 'random must be a function returning 0 <= x < 1');
      next.random = behaviour.random;
    }
    this.behaviour = next;
  }

  /** Takes the organization's endpoints down (every attempt fails, retries go on) or back up. */
  setDown(org: string, down: boolean): void {
    if (down) this.down.add(org);
    else this.down.delete(org);
  }

  /** Whether the organization's endpoints are down. */
  isDown(org: string): boolean {
    return this.down.has(org);
  }

  setSecret(org: string, secret: string): void {
    this.secrets.set(org, [secret]);
  }

  /** Starts a rotation: the new secret signs alongside the current ones until `endRotation`. */
  rotate(org: string): string {
    const next = `whsec_${randomBytes(24).toString('base64')}`;
    this.secrets.set(org, [...(this.secrets.get(org) ?? []), next]);
    return next;
  }

  /** Ends a rotation: only the newest secret signs from now on. */
  endRotation(org: string): void {
    const all = this.secrets.get(org) ?? [];
    this.secrets.set(org, all.slice(-1));
  }

  addEndpoint(org: string, url: string): void {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new Error('fake service: webhook endpoints must be http(s) URLs');
    this.endpoints.push({ url, org });
  }

  /** The URLs of the organization's endpoints. */
  endpointsOf(org: string): string[] {
    return this.endpoints.filter((e) => e.org === org).map((e) => e.url);
  }

  removeEndpoint(url: string): void {
    const index = this.endpoints.findIndex((e) => e.url === url);
    if (index >= 0) this.endpoints.splice(index, 1);
  }

  /** Queues `payload` to every endpoint of `org`, dropped, duplicated or delayed as configured. */
  publish(org: string, payload: unknown): void {
    const { dropRate, duplicateRate, delayMs, random } = this.behaviour;
    const delay = () => (delayMs === undefined ? 0 : Math.round(delayMs.min + random() * (delayMs.max - delayMs.min)));
    for (const endpoint of this.endpoints.filter((e) => e.org === org)) {
      const dropped = dropRate > 0 && random() < dropRate;
      const duplicate = !dropped && duplicateRate > 0 && random() < duplicateRate;
      const message: WebhookMessage = {
        id: `msg_${randomBytes(12).toString('base64url')}`,
        endpoint: endpoint.url,
        payload,
        state: dropped ? 'dropped' : 'pending',
        attempts: 0,
        duplicate,
        delayMs: dropped ? 0 : delay(),
      };
      this.messages.push(message);
      if (dropped) {
        this.onDropped?.(message);
        continue;
      }
      const run = this.deliver(message, org, duplicate ? delay() : 0).finally(() => this.pending.delete(run));
      this.pending.add(run);
    }
  }

  /** Resolves once no delivery is pending (all delivered or out of retries), or rejects after `timeoutMs`. */
  async settle(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new Error(
          `fake service: ${this.pending.size} webhook deliveries still pending after ${timeoutMs} ms${this.pendingAnswers()}`,
        );
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([Promise.allSettled([...this.pending]), new Promise((resolve) => (timer = setTimeout(resolve, remaining)))]);
      clearTimeout(timer);
    }
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** What the receiver answered each pending message so far, so a stuck settle() says why. */
  private pendingAnswers(): string {
    const lines = this.messages
      .filter((message) => message.state === 'pending')
      .slice(0, 5)
      .map((message) => {
        const answers = this.attempts.filter((a) => a.messageId === message.id).map((a) => a.status ?? a.error ?? 'no answer');
        return `\n  ${message.id} -> ${message.endpoint}: ${answers.length > 0 ? answers.join(', ') : 'not attempted yet'}`;
      });
    return lines.length > 0 ? `; answers so far:${lines.join('')}` : '';
  }

  /** Runs a message's attempts on the schedule, then its duplicate (after `duplicateDelayMs`) when it has one. */
  private async deliver(message: WebhookMessage, org: string, duplicateDelayMs: number): Promise<void> {
    if (message.delayMs > 0) await this.wait(message.delayMs);
    for (const delay of this.schedule) {
      if (delay > 0) await this.wait(delay);
      if (this.closed) return;
      if (await this.attempt(message, org)) {
        message.state = 'delivered';
        if (message.duplicate) {
          if (duplicateDelayMs > 0) await this.wait(duplicateDelayMs);
          if (!this.closed) await this.attempt(message, org);
        }
        return;
      }
    }
    message.state = 'failed';
  }

  /** One attempt, recorded; true on a 2xx. */
  private async attempt(message: WebhookMessage, org: string): Promise<boolean> {
    message.attempts += 1;
    let status: number | undefined;
    let error: string | undefined;
    const started = performance.now();
    if (this.down.has(org)) error = ENDPOINT_DOWN_ERROR;
    else {
      // Each attempt is signed afresh with its own timestamp, as Svix does.
      const signed = signWebhook({ secret: this.secrets.get(org) ?? [], payload: message.payload, id: message.id });
      try {
        const response = await fetch(message.endpoint, {
          method: 'POST',
          headers: { ...signed.headers, 'user-agent': 'Svix-Webhooks/1.0 (verikit fake service)' },
          body: signed.body,
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: 'manual',
        });
        status = response.status;
        // Read to the end, as Svix does: cancelling a half-read body resets the connection, which
        // some receivers (Next.js's edge runtime) log as an uncaught "aborted".
        await response.arrayBuffer();
      } catch (cause) {
        error = cause instanceof Error ? cause.message : String(cause);
      }
    }
    const attempt: DeliveryAttempt = {
      messageId: message.id,
      endpoint: message.endpoint,
      attempt: message.attempts,
      status,
      error,
      at: new Date(),
    };
    this.attempts.push(attempt);
    this.onAttempt?.({ ...attempt, durationMs: performance.now() - started });
    return status !== undefined && status >= 200 && status < 300;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}
