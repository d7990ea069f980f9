import { describe, expect, it } from 'vitest';
import { createNotifier } from '../src/notifier.js';

/** A db whose NOTIFYs stay in flight until the test lets them finish. */
function heldDb() {
  const sent: Array<{ params: unknown[]; finish(error?: Error): void }> = [];
  return {
    sent,
    db: {
      query: (_text: string, params?: unknown[]) =>
        new Promise<{ rows: [] }>((resolve, reject) => {
          sent.push({ params: params ?? [], finish: (error) => (error ? reject(error) : resolve({ rows: [] })) });
        }),
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('createNotifier', () => {
  it('sends at once, then owes one NOTIFY for everything asked while one was in flight', async () => {
    const { db, sent } = heldDb();
    const notifier = createNotifier({ bound: { db, timeoutMs: 60_000 }, channel: 'vk_inbox_test', gapMs: 0, onError: () => {} });
    notifier.notify();
    expect(sent.map((s) => s.params)).toEqual([['vk_inbox_test', '']]);
    notifier.notify();
    notifier.notify();
    expect(sent).toHaveLength(1);
    sent[0]?.finish();
    await tick();
    // Those two asked after the first was sent: one more covers both, sent after the first finished.
    expect(sent).toHaveLength(2);
    sent[1]?.finish();
    await notifier.settled();
    expect(sent).toHaveLength(2);
  });

  it('waits gapMs from the last send before the owed one, so a busy route sends a bounded number', async () => {
    const { db, sent } = heldDb();
    const notifier = createNotifier({ bound: { db, timeoutMs: 60_000 }, channel: 'c', gapMs: 50, onError: () => {} });
    notifier.notify();
    notifier.notify();
    sent[0]?.finish();
    await tick();
    expect(sent).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(sent).toHaveLength(2);
    sent[1]?.finish();
    await notifier.settled();
  });

  it('a failed NOTIFY is reported and the next one still goes', async () => {
    const { db, sent } = heldDb();
    const errors: unknown[] = [];
    const notifier = createNotifier({ bound: { db, timeoutMs: 60_000 }, channel: 'c', gapMs: 0, onError: (error) => errors.push(error) });
    notifier.notify();
    sent[0]?.finish(new Error('connection terminated'));
    await notifier.settled();
    expect(errors).toHaveLength(1);
    notifier.notify();
    expect(sent).toHaveLength(2);
    sent[1]?.finish();
    await notifier.settled();
  });
});
