import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningExample, type StartOptions, startExample } from '../../src/start.js';

/** A running example with its data in a fresh temporary folder, which `stop` removes. */
export interface TestExample {
  example: RunningExample;
  dataDir: string;
  stop(): Promise<void>;
}

/** Starts the example on a free loopback port, its data in a new temporary folder; quick worker retries. */
export async function startInTempFolder(options: Partial<StartOptions> = {}): Promise<TestExample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'verikit-example-'));
  const example = await startExample({
    port: 0,
    retry: { maxAttempts: 2, baseDelayMs: 50, maxDelayMs: 100 },
    ...options,
    env: { VERIKIT_EXAMPLE_DATA: dataDir, ...options.env },
  });
  return {
    example,
    dataDir,
    stop: async () => {
      await example.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
