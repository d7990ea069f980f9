/** Where the CLI writes: its results on `stdout`, progress and errors on `stderr`. */
export interface Output {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean };
}

/**
 * Text from storage (a refId, an error message) as a terminal may show it: control characters
 * (escape sequences that could rewrite the screen, newlines that would break a table) written as `\uXXXX`.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text` cut to `max` characters, with an ellipsis when cut. */
export const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** Rows under their headers, each column as wide as its widest cell, two spaces apart. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] as number)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

/** Label and value pairs, the values lined up. */
export function fields(pairs: Array<[string, string]>): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return `${pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n')}\n`;
}

/** A duration as an operator reads it: `850ms`, `42s`, `4m 12s`, `3h 5m`, `2d 4h`. */
export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.floor(ms / 1_000);
  if (s < 60) return `${s}s`;
  const [m, h, d] = [Math.floor(s / 60), Math.floor(s / 3_600), Math.floor(s / 86_400)];
  if (m < 60) return `${m}m ${s % 60}s`;
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${d}d ${h % 24}h`;
}

/** A time as the tables show it (UTC, to the second), or `-`. */
export const time = (date: Date | null | undefined): string => (date ? `${date.toISOString().slice(0, 19)}Z` : '-');

/** A time and how long ago it was, from `now`. */
export const timeAgo = (date: Date | null | undefined, now: number): string =>
  date ? `${time(date)} (${duration(now - date.getTime())} ago)` : '-';

/** A value as `--json` writes it: one line, dates as ISO text. */
export const json = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** `n thing` or `n things`. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
