import type { InboxContext, InboxWorker, InboxWorkerOptions, LogFields, Logger } from '@verikit/core';
import { expect, vi } from 'vitest';

/** What the scenario needs of an engine's test: deliveries, a worker on its inbox, and the effects committed. */
export interface HungEventEngine<Tx> {
  /** Delivers a signed event through the webhook route; answers its svix id. */
  deliver(payload: unknown): Promise<{ id: string }>;
  /** A worker on the engine's inbox with these options (and the test's own polling and backoff). */
  worker(options: Pick<InboxWorkerOptions<Tx>, 'onEvent' | 'concurrency' | 'eventTimeoutMs' | 'retry' | 'logger' | 'onError'>): InboxWorker;
  /** Writes, through `ctx.sql`, that `ctx.id` ran at `ctx.attempt`. */
  write(ctx: InboxContext<Tx>): Promise<unknown> | unknown;
  /** The committed writes: the attempt each id's write came from. */
  effects(): Promise<Record<string, number>>;
}

/**
 * Issue 21, item 8, as an integrator meets it: `onEvent`s that never settle fill every slot of a
 * worker. Each is bounded by `eventTimeoutMs`: its signal aborts, its writes roll back, the attempt
 * counts as failed (retried, then dead-lettered), and the slot drains the rest of the inbox.
 */
export async function expectHungEventsBounded<Tx>(engine: HungEventEngine<Tx>): Promise<void> {
  const lines: Array<{ level: string; fields: LogFields; message: string }> = [];
  const at = (level: string) => (fields: LogFields, message: string) => {
    lines.push({ level, fields, message });
  };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const errors: Array<{ code: unknown; id: string | undefined; stage: string; attempt?: number }> = [];
  const aborted: Array<{ id: string; attempt: number; reason: unknown }> = [];
  const worker = engine.worker({
    concurrency: 2,
    // Long beside a handful of queries even on a starved machine; the hung ones never settle at all.
    eventTimeoutMs: 1_500,
    retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
    logger,
    onError: (error, { id, stage, attempt }) => errors.push({ code: (error as { code?: unknown }).code, id, stage, attempt }),
    onEvent: async (ctx) => {
      await engine.write(ctx);
      const { hang } = (ctx.event as { data: { hang: 'always' | 'first' | 'never' } }).data;
      if (hang === 'always' || (hang === 'first' && ctx.attempt === 1)) {
        ctx.signal.addEventListener('abort', () => aborted.push({ id: ctx.id, attempt: ctx.attempt, reason: ctx.signal.reason }));
        await new Promise(() => {}); // never settles
      }
    },
  });
  // Two that hang take both slots first; the third runs only once a slot is given back.
  const always = await engine.deliver({ type: 'kyb.case.status_changed', data: { hang: 'always', note: 'body-only text' } });
  const first = await engine.deliver({ type: 'kyb.case.status_changed', data: { hang: 'first' } });
  const never = await engine.deliver({ type: 'kyb.case.status_changed', data: { hang: 'never' } });
  worker.start();
  await vi.waitFor(
    async () => {
      expect(await engine.effects()).toEqual({ [first.id]: 2, [never.id]: 1 });
      expect((await worker.deadLetters()).map((d) => d.id)).toEqual([always.id]);
    },
    { timeout: 30_000, interval: 100 },
  );
  const [dead] = await worker.deadLetters();
  expect(dead).toMatchObject({ attempts: 2 });
  expect(dead?.lastError).toMatch(
    /^InboxEventTimeoutError \[event_timeout\]: onEvent for ".+" \(attempt 2\) did not settle within eventTimeoutMs \(1500 ms\)$/,
  );
  // Every hung attempt had its signal aborted with the timeout, and was told to onError as a failed attempt.
  const sorted = <T extends { id?: string; attempt?: number }>(list: T[]) =>
    [...list].sort((a, b) => (a.id ?? '').localeCompare(b.id ?? '') || (a.attempt ?? 0) - (b.attempt ?? 0));
  const hung = sorted([
    { id: always.id, attempt: 1 },
    { id: always.id, attempt: 2 },
    { id: first.id, attempt: 1 },
  ]);
  expect(sorted(aborted).map(({ id, attempt }) => ({ id, attempt }))).toEqual(hung);
  expect(aborted.every(({ reason }) => (reason as { code?: unknown }).code === 'event_timeout')).toBe(true);
  expect(sorted(errors.filter((e) => e.code === 'event_timeout'))).toEqual(
    hung.map((h) => ({ ...h, code: 'event_timeout', stage: 'event' })),
  );
  // Logged with the id and attempt (a warning, then an error once dead-lettered), never the body.
  const timeouts = lines.filter((l) => (l.fields.err as { code?: unknown } | undefined)?.code === 'event_timeout');
  expect(sorted(timeouts.map((l) => ({ id: l.fields.id as string, attempt: l.fields.attempt as number, level: l.level })))).toEqual(
    hung.map((h) => ({ ...h, level: h.id === always.id && h.attempt === 2 ? 'error' : 'warn' })),
  );
  expect(JSON.stringify(lines, (_key, value) => (value instanceof Error ? value.message : value))).not.toContain('body-only text');
}
