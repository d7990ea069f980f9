import { describe, expect, it } from 'vitest';
import { createInboxWorker, createWebhookHandler, type InboxEngine, MemoryIdempotencyStore, PayloadSealError } from '../src/index.node.js';
import { idleInboxStats } from './helpers/fixtures.js';
import { SECRET } from './helpers/sign.js';

const inbox = { accept: async () => 'accepted' as const };

describe('worker shutdown', () => {
  it('stop() returns by its timeout even when every running event hangs', async () => {
    const pending = [{ id: 'msg_hang', timestamp: 1, body: '{}', owner: 'o', attempt: 1 }];
    const engine = {
      accept: async () => 'accepted' as const,
      lease: async () => pending.splice(0),
      extend: async () => 'ok' as const,
      complete: async (_event: unknown, work: (tx: null) => Promise<void>) => {
        await work(null);
        return 'ok' as const;
      },
      fail: async () => 'ok' as const,
      waitForWork: (signal: AbortSignal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
      deadLetters: async () => [],
      replay: async () => false,
      stats: idleInboxStats,
    } satisfies InboxEngine<null>;
    let aborted = false;
    const worker = createInboxWorker({
      inbox: engine,
      concurrency: 1,
      onEvent: (ctx) =>
        new Promise(() => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    });
    worker.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await worker.stop({ timeoutMs: 200 });
    expect(aborted).toBe(true);
  });
});

describe('inbox mode options', () => {
  it('the handler takes store + onEvent, or inbox alone, and says which when given both', () => {
    const store = new MemoryIdempotencyStore();
    expect(() => createWebhookHandler({ secret: SECRET, inbox })).not.toThrow();
    expect(() => createWebhookHandler({ secret: SECRET, inbox, store } as never)).toThrow(/give store or inbox, not both/);
    expect(() => createWebhookHandler({ secret: SECRET, inbox, onEvent: () => {} } as never)).toThrow(/onEvent goes to createInboxWorker/);
    expect(() => createWebhookHandler({ secret: SECRET } as never)).toThrow(/store is required .* or inbox for inbox mode/);
  });

  it('the worker refuses unusable options at creation', () => {
    const engine = { lease: async () => [] } as unknown as InboxEngine;
    expect(() => createInboxWorker({ onEvent: () => {} } as never)).toThrow(/inbox is required/);
    expect(() => createInboxWorker({ inbox: engine } as never)).toThrow(/onEvent is required/);
    expect(() => createInboxWorker({ inbox: engine, onEvent: () => {}, concurrency: 0 })).toThrow(/concurrency must be a positive integer/);
    expect(() => createInboxWorker({ inbox: engine, onEvent: () => {}, retry: { maxAttempts: 1.5 } })).toThrow(/retry.maxAttempts/);
    expect(() => createInboxWorker({ inbox: engine, onEvent: () => {}, eventTimeoutMs: 0 })).toThrow(
      /eventTimeoutMs must be a positive integer/,
    );
  });
});

describe('an event whose stored body cannot be opened', () => {
  it('fails its attempt with the sealing error and never reaches onEvent; the event is kept for a retry', async () => {
    const unreadable = new PayloadSealError('unknown_key', 'old-key');
    const pending = [{ id: 'msg_sealed', timestamp: 1, body: '', owner: 'o', attempt: 1, unreadable }];
    const failures: Array<{ id: string; error: string; retryInMs: number | null }> = [];
    let recorded: () => void = () => {};
    const failed = new Promise<void>((resolve) => (recorded = resolve));
    const engine = {
      accept: async () => 'accepted' as const,
      lease: async () => pending.splice(0),
      extend: async () => 'ok' as const,
      complete: async () => 'ok' as const,
      fail: async (event: { id: string }, failure: { error: string; retryInMs: number | null }) => {
        failures.push({ id: event.id, ...failure });
        recorded();
        return 'ok' as const;
      },
      // As the engines do: an aborted signal answers at once.
      waitForWork: (signal: AbortSignal) =>
        new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve()))),
      deadLetters: async () => [],
      replay: async () => false,
      stats: idleInboxStats,
    } satisfies InboxEngine<null>;
    let ran = 0;
    const worker = createInboxWorker({ inbox: engine, logger: false, onEvent: () => void ran++ });
    worker.start();
    await failed;
    await worker.stop();
    expect(ran).toBe(0);
    expect(failures).toEqual([
      {
        id: 'msg_sealed',
        error: expect.stringMatching(/^PayloadSealError \[payload_sealed\]: .*"old-key"/),
        retryInMs: expect.any(Number),
      },
    ]);
  });
});
