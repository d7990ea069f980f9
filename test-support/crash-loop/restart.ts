import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeadLetter } from '@verikit/core';
import { expect } from 'vitest';
import { startProcess } from '../processes.js';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue 21, item 9, as an operator meets it: an event whose onEvent kills its worker process (a
 * SIGKILL, here in onEvent itself). The worker is restarted each time it dies, as a supervisor
 * would, until the event is dead-lettered (or `maxRestarts` is reached): with `retry.maxAttempts`
 * 2, onEvent runs exactly twice, and the third lease dead-letters it without running it.
 */
export async function expectCrashLoopDeadLettered(options: {
  engine: 'postgres' | 'redis';
  url: string;
  /** The schema or key prefix the inbox is on; the event is already accepted there. */
  namespace: string;
  id: string;
  deadLetters(): Promise<DeadLetter[]>;
  maxRestarts?: number;
}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verikit-crash-loop-'));
  const runsFile = join(dir, 'runs');
  const runs = () => (existsSync(runsFile) ? readFileSync(runsFile, 'utf8').trim().split('\n') : []);
  const deadLettered = async () => (await options.deadLetters()).some((d) => d.id === options.id);
  try {
    let starts = 0;
    while (!(await deadLettered()) && starts < (options.maxRestarts ?? 6)) {
      starts++;
      const worker = startProcess(process.execPath, [WORKER, options.engine, options.url, options.namespace, runsFile], {
        cwd: dir,
      });
      try {
        // Until it kills itself, or until the event is dead-lettered (then it lives on, idle).
        let exited = false;
        void worker.closed.then(() => {
          exited = true;
        });
        const deadline = Date.now() + 30_000;
        while (!exited && !(await deadLettered())) {
          if (Date.now() > deadline)
            throw new Error(`worker ${starts} neither died nor dead-lettered the event in 30 s:\n${worker.output()}`);
          await sleep(100);
        }
        if (exited) expect(worker.child.signalCode, worker.output()).toBe('SIGKILL');
      } finally {
        await worker.stop();
      }
    }
    expect(runs()).toEqual([`${options.id} 1`, `${options.id} 2`]);
    const dead = (await options.deadLetters()).find((d) => d.id === options.id);
    expect(dead?.attempts).toBe(3);
    expect(dead?.lastError).toMatch(
      /^InboxEventAbandonedError \[event_abandoned\]: ".+" was leased 3 times, more than retry\.maxAttempts \(2\): an attempt never finished \(its worker crashed or stalled\)/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
