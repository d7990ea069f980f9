/** A progress line on long work: how far, rewritten in place on a terminal. */
export interface Progress {
  /** `done` of the work is done (of `total`, when known). */
  update(done: number, total?: number): void;
  /** A status with no count (`waiting for a reconciler`). */
  note(text: string): void;
  /** The last count, then the line is left as it stands (a terminal gets its newline). */
  finish(): void;
}

const SILENT: Progress = { update() {}, note() {}, finish() {} };

/**
 * Progress on `stream` (stderr), when it is a terminal or `force` is set; `--no-progress` silences it.
 * A terminal's line is rewritten at most every 100 ms; elsewhere (a log) a line is written at most
 * once a second, and the last count always.
 */
export function createProgress(
  stream: { write(text: string): unknown; isTTY?: boolean },
  label: string,
  mode: { force: boolean; off: boolean },
): Progress {
  if (mode.off || !(mode.force || stream.isTTY === true)) return SILENT;
  const tty = stream.isTTY === true;
  const every = tty ? 100 : 1_000;
  let last = 0;
  let pending: string | undefined;
  const write = (text: string) => {
    stream.write(tty ? `\r\x1b[K${text}` : `${text}\n`);
    pending = undefined;
    last = Date.now();
  };
  const show = (text: string, now: boolean) => {
    if (now || Date.now() - last >= every) write(text);
    else pending = text;
  };
  return {
    update: (done, total) => show(`${label}: ${done}${total === undefined ? '' : `/${total}`}`, false),
    note: (text) => show(`${label}: ${text}`, true),
    finish() {
      if (pending !== undefined) write(pending);
      if (tty && last > 0) stream.write('\n');
    },
  };
}
