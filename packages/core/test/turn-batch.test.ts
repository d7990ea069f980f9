import { describe, expect, it, vi } from 'vitest';
import { batchByTurn } from '../src/index.node.js';

describe('batchByTurn', () => {
  it('sends the calls of one turn together, at most maxItems a send, and answers each with its own result', async () => {
    const sent: number[][] = [];
    const double = batchByTurn<number, number>({
      maxItems: 4,
      send: async (items) => {
        sent.push(items);
        return items.map((n) => n * 2);
      },
    });
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => double(n)));
    expect(answers).toEqual([2, 4, 6, 8, 10, 12]);
    expect(sent).toEqual([
      [1, 2, 3, 4],
      [5, 6],
    ]);
    // A later turn is a batch of its own.
    expect(await double(7)).toBe(14);
    expect(sent.at(-1)).toEqual([7]);
  });

  it('settles nothing before its send has: a call waits for the batch it is in', async () => {
    let finish: (results: string[]) => void = () => {};
    const answer = batchByTurn<string, string>({ maxItems: 8, send: () => new Promise((resolve) => (finish = resolve)) });
    const settled: string[] = [];
    const calls = ['a', 'b'].map((item) => answer(item).then((result) => settled.push(result)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toEqual([]);
    finish(['A', 'B']);
    await Promise.all(calls);
    expect(settled).toEqual(['A', 'B']);
  });

  it('a send that rejects or throws rejects every call of its batch, and the next turn sends again', async () => {
    let fail: 'reject' | 'throw' | undefined = 'reject';
    const send = batchByTurn<string, string>({
      maxItems: 8,
      send: (items) => {
        if (fail === 'throw') throw new Error('thrown');
        if (fail === 'reject') return Promise.reject(new Error('rejected'));
        return Promise.resolve(items);
      },
    });
    expect(await Promise.allSettled([send('a'), send('b')])).toEqual([
      { status: 'rejected', reason: new Error('rejected') },
      { status: 'rejected', reason: new Error('rejected') },
    ]);
    fail = 'throw';
    await expect(send('c')).rejects.toThrow('thrown');
    fail = undefined;
    expect(await Promise.all([send('d'), send('e')])).toEqual(['d', 'e']);
  });

  it('a send that answers other than a result per item rejects its batch rather than answer anyone wrongly', async () => {
    const short = batchByTurn<string, string>({ maxItems: 8, send: async (items) => items.slice(1) });
    const none = batchByTurn<string, string>({ maxItems: 8, send: async () => undefined as unknown as string[] });
    const outcomes = await Promise.allSettled([short('a'), short('b'), none('c')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/1 results for 2 items/);
  });

  it('still sends when a test fakes the timers after verikit loaded', async () => {
    const echo = batchByTurn<string, string>({ maxItems: 8, send: async (items) => items });
    vi.useFakeTimers();
    try {
      expect(await echo('x')).toBe('x');
    } finally {
      vi.useRealTimers();
    }
  });
});
