import { randomBytes } from 'node:crypto';
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

/** A message and where its delivery stands. */
export interface WebhookMessage {
  id: string;
  endpoint: string;
  payload: unknown;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
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
}

interface Endpoint {
  url: string;
  org: string;
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
  private closed = false;

  constructor(options: WebhookDeliveryOptions = {}) {
    const scale = options.retryScale ?? 1;
    this.schedule = options.retrySchedule ?? SVIX_SCHEDULE_MS.map((ms) => Math.round(ms * scale));
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.onAttempt = options.onAttempt;
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

  removeEndpoint(url: string): void {
    const index = this.endpoints.findIndex((e) => e.url === url);
    if (index >= 0) this.endpoints.splice(index, 1);
  }

  /** Queues `payload` to every endpoint of `org`. */
  publish(org: string, payload: unknown): void {
    for (const endpoint of this.endpoints.filter((e) => e.org === org)) {
      const message: WebhookMessage = {
        id: `msg_${randomBytes(12).toString('base64url')}`,
        endpoint: endpoint.url,
        payload,
        state: 'pending',
        attempts: 0,
      };
      this.messages.push(message);
      const run = this.deliver(message, org).finally(() => this.pending.delete(run));
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

  private async deliver(message: WebhookMessage, org: string): Promise<void> {
    for (const [index, delay] of this.schedule.entries()) {
      if (delay > 0) await this.wait(delay);
      if (this.closed) return;
      message.attempts = index + 1;
      // Each attempt is signed afresh with its own timestamp, as Svix does.
      const signed = signWebhook({ secret: this.secrets.get(org) ?? [], payload: message.payload, id: message.id });
      let status: number | undefined;
      let error: string | undefined;
      const started = performance.now();
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
      const attempt: DeliveryAttempt = {
        messageId: message.id,
        endpoint: message.endpoint,
        attempt: index + 1,
        status,
        error,
        at: new Date(),
      };
      this.attempts.push(attempt);
      this.onAttempt?.({ ...attempt, durationMs: performance.now() - started });
      if (status !== undefined && status >= 200 && status < 300) {
        message.state = 'delivered';
        return;
      }
    }
    message.state = 'failed';
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
