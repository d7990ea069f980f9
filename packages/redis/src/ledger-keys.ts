import { ConfigurationError, type EventKind, type LedgerKey } from '@verikit/core';

/**
 * The hash tag Redis Cluster would read in `key` (the text between its first `{` and the first `}`
 * after it): the tag, `''` for an empty one (Cluster then hashes the whole key), or `undefined`.
 */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  return close === -1 ? undefined : key.slice(open + 1, close);
}

/**
 * Where every ledger key starts: the prefix when it holds a hash tag, else the prefix followed by
 * `{<its first segment>}:` (`verikit:ledger:` gives `verikit:ledger:{verikit}:`, the inbox's
 * default tag too). Braces that do not make a tag are refused: they would move keys apart.
 */
export function ledgerBase(prefix: string): string {
  const tag = hashTagOf(prefix);
  if (tag !== undefined && tag !== '') return prefix;
  if (prefix.includes('{') || prefix.includes('}')) {
    throw new ConfigurationError(
      'prefix',
      'prefix may hold braces only as one non-empty Redis Cluster hash tag, e.g. "myapp:ledger:{myapp}:"',
    );
  }
  const segment = prefix.split(':').find((part) => part !== '') ?? prefix;
  return `${prefix}{${segment}}:`;
}

// Letters, digits and `-._~` stay as they are (a refId such as `biz-42` is readable in a key);
// every other UTF-16 code unit, `%` included, becomes `%` and 4 hex digits. Fixed width and `%`
// always escaped: one encoding per refId, decodable, and lone surrogates survive (UTF-8 would
// turn each into U+FFFD and let two refIds share a key).
const UNSAFE = /[^A-Za-z0-9\-._~]/g;
const ESCAPED = /%([0-9a-f]{4})/g;

/** The row's name inside the ledger's keys: `<kind>:<encoded refId>`, one per key, never another's. */
export function memberOf({ kind, refId }: LedgerKey): string {
  return `${kind}:${refId.replace(UNSAFE, (unit) => `%${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)}`;
}

/** The key a member names (the inverse of {@link memberOf}). */
export function keyOfMember(member: string): LedgerKey {
  return {
    kind: member.slice(0, 3) as EventKind,
    refId: member.slice(4).replace(ESCAPED, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
  };
}

/** The ledger's keys under `base`: a hash per row, the due index, the per-kind indexes, the shared state. */
export function ledgerKeys(base: string) {
  const index = (kind: EventKind, final: boolean) => `${base}idx:${kind}:${final ? 'final' : 'pending'}`;
  return {
    base,
    row: (member: string) => `${base}row:${member}`,
    due: `${base}due`,
    state: `${base}state`,
    /** Every per-kind index, in the order the list and stats scripts read them. */
    indexes: [index('kyb', false), index('kyb', true), index('kyc', false), index('kyc', true)],
  };
}
