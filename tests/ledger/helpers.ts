import { createClient, type LedgerChangeContext, type LogFields, type Logger, type VerikitClient } from '@verikit/core';
import { createFakeService, type FakeService, type FakeServiceOptions } from '@verikit/testing';

/** A fake service and a client of it that never retries on its own. */
export async function fakeWithClient(options: FakeServiceOptions = {}): Promise<{ fake: FakeService; client: VerikitClient }> {
  const fake = await createFakeService(options);
  const client = createClient({ ...fake.clientOptions, maxRetries: 0, logger: false });
  return { fake, client };
}

/** A logger that keeps every line. */
export function recordingLogger(): Logger & { lines: Array<{ level: string; fields: LogFields; message: string }> } {
  const lines: Array<{ level: string; fields: LogFields; message: string }> = [];
  const at = (level: string) => (fields: LogFields, message: string) => lines.push({ level, fields, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** What onChange saw, one line per change. */
export type Seen = Pick<LedgerChangeContext, 'kind' | 'refId' | 'previous' | 'current' | 'version' | 'source'>;

/** An onChange that records what it is told. */
export function recordChanges(): { seen: Seen[]; onChange: (ctx: LedgerChangeContext) => void } {
  const seen: Seen[] = [];
  return {
    seen,
    onChange: ({ kind, refId, previous, current, version, source }) => {
      seen.push({ kind, refId, previous, current, version, source });
    },
  };
}

/** Polls `check` until it is true (or fails after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
