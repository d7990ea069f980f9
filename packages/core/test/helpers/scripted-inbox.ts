import { vi } from 'vitest';
import {
  ConfigurationError,
  createInboxWorker,
  type InboxEngine,
  type InboxEvent,
  type InboxStats,
  type InboxWorker,
} from '../../src/index.node.js';
import { idleInboxStats } from './fixtures.js';

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';

/** An inbox engine for a worker under test: it leases what the test queues, completes and fails at once, and answers `stats` (counted). */
export function scriptedInbox(stats: () => Promise<InboxStats> = idleInboxStats) {
  const queue: InboxEvent[] = [];
  const engine = {
    accept: async () => 'accepted' as const,
    lease: async (_owner: string, limit: number) => queue.splice(0, limit),
    extend: async () => 'ok' as const,
    complete: async (_event: InboxEvent, work: (tx: null) => Promise<void>) => {
      await work(null);
      return 'ok' as const;
    },
    fail: async () => 'ok' as const,
    waitForWork: () => new Promise<void>((resolve) => setTimeout(resolve, 5)),
    deadLetters: async () => [],
    replay: async () => false,
    stats: vi.fn(stats),
  } satisfies InboxEngine<null>;
  /** An event as a lease hands it over: this attempt's number, a body naming biz-1. */
  const event = (id: string, attempt: number, body = BODY): InboxEvent => ({ id, timestamp: 1, body, owner: 'o', attempt });
  return { engine, queue, event };
}

/** A worker on `engine`, one event at a time, two attempts each: `msg_bad` fails (invalid_config), anything else is done. */
export function failingOnBad(engine: InboxEngine<null>): InboxWorker {
  return createInboxWorker({
    inbox: engine,
    logger: false,
    concurrency: 1,
    retry: { maxAttempts: 2, baseDelayMs: 10 },
    onEvent: (ctx) => {
      if (ctx.id === 'msg_bad') throw new ConfigurationError('x', 'bad event');
    },
  });
}
