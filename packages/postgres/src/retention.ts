import { ConfigurationError } from '@verikit/core';
import { wholeMs } from './db.js';

/** The inbox's payload retention options (see `PostgresInboxOptions`). */
export interface PayloadRetentionOptions {
  /** How long a done event keeps its body, in ms (default 1 hour; 0: removed as it is done). Its id stays for `retentionMs`, for dedupe. */
  payloadRetentionMs?: number;
  /** The longest a dead letter keeps its body, in ms from when it was received (default 30 days); then it is purged as `purgeDead` does. */
  deadLetterRetentionMs?: number;
}

const HOUR = 60 * 60 * 1000;

/** Checks the payload retention options once, at creation, and fills their defaults. */
export function resolvePayloadRetention(options: PayloadRetentionOptions): Required<PayloadRetentionOptions> {
  const { payloadRetentionMs = HOUR, deadLetterRetentionMs = 30 * 24 * HOUR } = options;
  if (!(Number.isFinite(payloadRetentionMs) && payloadRetentionMs >= 0))
    throw new ConfigurationError('payloadRetentionMs', 'payloadRetentionMs must be a number of ms >= 0');
  if (!(Number.isFinite(deadLetterRetentionMs) && deadLetterRetentionMs > 0))
    throw new ConfigurationError('deadLetterRetentionMs', 'deadLetterRetentionMs must be a positive number of ms');
  return { payloadRetentionMs, deadLetterRetentionMs };
}

/** SQL for "the server's now, `ms` ago". */
const ago = (ms: number) => `now() - ${wholeMs(ms)} * interval '1 millisecond'`;

/**
 * A batch (`$1` rows) of the dead letters `received` (SQL on `received_at`) picks: body removed, done
 * from now, so the id is kept the whole dedupe retention. The state is checked again on the row
 * itself: one replayed meanwhile is left alone.
 */
export const purgeDeadSql = (table: string, received: string): string => `UPDATE ${table}
SET state = 'done', payload = NULL, next_run_at = NULL, owner = NULL, leased_until = NULL, finished_at = now()
WHERE id IN (SELECT id FROM ${table} WHERE state = 'dead' AND ${received} LIMIT $1) AND state = 'dead'`;

/** The inbox's upkeep, in the order the pruner runs it: dead letters past their retention, bodies past theirs, rows past the dedupe retention. */
export function inboxPruning(
  table: string,
  { retentionMs, payloadRetentionMs, deadLetterRetentionMs }: Required<PayloadRetentionOptions> & { retentionMs: number },
): string[] {
  return [
    purgeDeadSql(table, `received_at <= ${ago(deadLetterRetentionMs)}`),
    `UPDATE ${table} SET payload = NULL WHERE id IN (
  SELECT id FROM ${table} WHERE state = 'done' AND payload IS NOT NULL AND finished_at <= ${ago(payloadRetentionMs)} LIMIT $1
)`,
    `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE state = 'done' AND finished_at <= ${ago(retentionMs)} LIMIT $1)`,
  ];
}
