import { checkLedgerKey, type EventKind, type LedgerKey } from '@verikit/core';
import { CliError } from './errors.js';

const RELATIVE = /^(\d+)(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A time given to `--since` or `--before`: an ISO date or date-time (UTC unless it names a zone:
 * `2026-05-01`, `2026-05-01T14:30`, `2026-05-01T14:30+02:00`), or a duration back from now (`90s`,
 * `30m`, `6h`, `7d`).
 */
export function parseTime(text: string, flag: string, now = Date.now()): Date {
  const relative = RELATIVE.exec(text);
  if (relative) return new Date(now - Number(relative[1]) * (UNIT_MS[relative[2] as string] as number));
  const iso = ISO.exec(text);
  // Date-only text is UTC already; a date-time without a zone would be local time to Date, so it is read as UTC.
  const date = iso ? new Date(text.includes(':') && iso[1] === undefined ? `${text.replace(' ', 'T')}Z` : text) : undefined;
  if (date === undefined || Number.isNaN(date.getTime()))
    throw new CliError(
      'usage',
      `${flag} takes an ISO date or time (2026-05-01, 2026-05-01T14:30Z) or a duration back from now (30m, 6h, 7d)`,
    );
  return date;
}

/** A whole number given to `flag`, from `min` to `max`. */
export function parseCount(text: string, flag: string, min: number, max: number): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new CliError('usage', `${flag} takes a whole number from ${min} to ${max}`);
  return value;
}

/** `kyb` or `kyc`, as `--kind` or a KIND argument. */
export function parseKind(text: string, what: string): EventKind {
  if (text !== 'kyb' && text !== 'kyc') throw new CliError('usage', `${what} is kyb or kyc, not ${JSON.stringify(text)}`);
  return text;
}

/** KIND REFID as a ledger key, checked as the ledger checks it. */
export function parseLedgerKey(kind: string, refId: string): LedgerKey {
  const checkedKind = parseKind(kind, 'KIND');
  try {
    return checkLedgerKey({ kind: checkedKind, refId });
  } catch (error) {
    throw new CliError('usage', (error as Error).message);
  }
}
