import { describe, expect, it } from 'vitest';
import { createProgress } from '../src/progress.js';

/** A stream that keeps what is written, a terminal or not. */
const stream = (isTTY: boolean) => {
  const writes: string[] = [];
  return { writes, isTTY, write: (text: string) => writes.push(text) };
};

describe('the progress line', () => {
  it('on a terminal: rewritten in place (carriage return, line cleared), the last count always shown, then a newline', () => {
    const tty = stream(true);
    const progress = createProgress(tty, 'replaying dead letters', { force: false, off: false });
    for (let done = 1; done <= 1_000; done++) progress.update(done, 1_000);
    progress.finish();
    expect(tty.writes[0]).toBe('\r\x1b[Kreplaying dead letters: 1/1000');
    // Updates in one burst are coalesced (at most one per 100 ms), and the last one is never dropped.
    expect(tty.writes.length).toBeLessThan(100);
    expect(tty.writes.slice(-2)).toEqual(['\r\x1b[Kreplaying dead letters: 1000/1000', '\n']);
  });

  it('elsewhere only when forced (--progress): whole lines; --no-progress silences even a terminal', () => {
    const log = stream(false);
    const quiet = createProgress(log, 'resealing', { force: false, off: false });
    quiet.update(5);
    quiet.finish();
    expect(log.writes).toEqual([]);
    const forced = createProgress(log, 'resealing', { force: true, off: false });
    forced.update(5);
    forced.update(6);
    forced.note('done soon');
    forced.finish();
    expect(log.writes).toEqual(['resealing: 5\n', 'resealing: done soon\n']);
    const tty = stream(true);
    const off = createProgress(tty, 'x', { force: true, off: true });
    off.update(1);
    off.finish();
    expect(tty.writes).toEqual([]);
  });
});
