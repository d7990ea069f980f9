import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StorageTimeoutError, sharedTimeouts, VerikitError, withTimeout } from '../src/index.node.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('withTimeout', () => {
  it('settles as the call does when it answers in time, and leaves no timer behind', async () => {
    await expect(withTimeout(Promise.resolve('rows'), 1_000, 'a claim')).resolves.toBe('rows');
    await expect(withTimeout(Promise.reject(new Error('refused')), 1_000, 'a claim')).rejects.toThrow('refused');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with a StorageTimeoutError (code timeout) once the bound passes, and ignores a later answer', async () => {
    let answer!: (value: string) => void;
    const bounded = withTimeout(new Promise<string>((resolve) => (answer = resolve)), 1_000, 'the accept');
    const outcome = bounded.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1_000);
    answer('too late');
    const error = await outcome;
    expect(error).toBeInstanceOf(StorageTimeoutError);
    expect(error).toBeInstanceOf(VerikitError);
    expect(error).toMatchObject({ name: 'StorageTimeoutError', code: 'timeout', timeoutMs: 1_000 });
    expect((error as Error).message).toBe(
      'the database did not answer the accept within 1000 ms (down, unreachable or every connection busy?)',
    );
  });

  it('rejects with the subclass an engine names', async () => {
    class EngineTimeoutError extends StorageTimeoutError {
      override name = 'EngineTimeoutError';
      constructor(what: string, timeoutMs: number) {
        super(what, timeoutMs, 'Engine');
      }
    }
    const outcome = withTimeout(new Promise(() => {}), 50, 'a lease', EngineTimeoutError).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(50);
    expect(await outcome).toMatchObject({
      name: 'EngineTimeoutError',
      code: 'timeout',
      message: expect.stringMatching(/^Engine did not answer a lease/),
    });
  });
});

describe('sharedTimeouts', () => {
  it('settles each call as it does when it answers in time, and stops its one interval once nothing is pending', async () => {
    const bounded = sharedTimeouts(1_000);
    const calls = [bounded(Promise.resolve('rows'), 'a claim'), bounded(Promise.reject(new Error('refused')), 'a claim')];
    expect(vi.getTimerCount()).toBe(1);
    await expect(calls[0]).resolves.toBe('rows');
    await expect(calls[1]).rejects.toThrow('refused');
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects each late call with the named error once its own bound passes, however many share the interval', async () => {
    class EngineTimeoutError extends StorageTimeoutError {
      override name = 'EngineTimeoutError';
      constructor(what: string, timeoutMs: number) {
        super(what, timeoutMs, 'Engine');
      }
    }
    const bounded = sharedTimeouts(1_000, EngineTimeoutError);
    let answer!: (value: string) => void;
    const first = bounded(new Promise<string>((resolve) => (answer = resolve)), 'the accept').catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(500);
    const second = bounded(new Promise(() => {}), 'a claim').catch((error: unknown) => error);
    const settled: string[] = [];
    void first.then(() => settled.push('first'));
    void second.then(() => settled.push('second'));
    await vi.advanceTimersByTimeAsync(600);
    expect(settled).toEqual(['first']);
    answer('too late');
    expect(await first).toMatchObject({ name: 'EngineTimeoutError', code: 'timeout', timeoutMs: 1_000 });
    expect(((await first) as Error).message).toMatch(/^Engine did not answer the accept within 1000 ms/);
    await vi.advanceTimersByTimeAsync(500);
    expect(settled).toEqual(['first', 'second']);
    expect(await second).toBeInstanceOf(EngineTimeoutError);
  });
});
