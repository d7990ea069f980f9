/**
 * A Node-style writable (an `http.ServerResponse`, a file stream), typed by the few members
 * `writeTo` uses, so this module needs no Node built-in and loads on every runtime.
 */
export interface WritableLike {
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  destroy(error?: Error): unknown;
  once(event: 'drain' | 'finish' | 'close' | 'error', listener: () => void): unknown;
  off(event: 'drain' | 'finish' | 'close' | 'error', listener: () => void): unknown;
  readonly destroyed?: boolean;
  readonly writableFinished?: boolean;
}

/** How {@link DocumentDownload.writeTo} ended when it did not throw. */
export type WriteOutcome =
  /** Every byte was written and the destination has finished. */
  | { outcome: 'finished'; bytes: number }
  /** The destination closed first (the browser went away): the download was cancelled, its connection freed. */
  | { outcome: 'destination-closed'; bytes: number };

/**
 * Copies `body` into `destination` with backpressure and ends it. The destination closing or
 * failing first cancels `body`, so an abandoned transfer never keeps its upstream connection; a
 * failing `body` destroys the destination (a cut-off file must not look complete) and rejects
 * with `failure(error)`.
 */
export async function writeBody(
  body: ReadableStream<Uint8Array>,
  destination: WritableLike,
  failure: (error: unknown) => Error,
): Promise<WriteOutcome> {
  const reader = body.getReader();
  let bytes = 0;
  let ending = false;
  let gone = destination.destroyed === true;
  let wake: (() => void) | undefined;
  const onGone = (): void => {
    if (ending) return;
    gone = true;
    // A pending read resolves as done once cancelled; a pending drain wait is woken here.
    reader.cancel().catch(() => {});
    wake?.();
  };
  destination.once('close', onGone);
  destination.once('error', onGone);
  try {
    while (!gone) {
      const { done, value } = await reader.read();
      if (done || gone) break;
      bytes += value.byteLength;
      if (!destination.write(value) && !gone) await untilDrained(destination, (w) => (wake = w));
    }
    if (gone) {
      await reader.cancel().catch(() => {});
      return { outcome: 'destination-closed', bytes };
    }
    ending = true;
    const finished = await ended(destination);
    return { outcome: finished ? 'finished' : 'destination-closed', bytes };
  } catch (error) {
    const failed = failure(error);
    await reader.cancel(failed).catch(() => {});
    destination.destroy(failed);
    throw failed;
  } finally {
    destination.off('close', onGone);
    destination.off('error', onGone);
    reader.releaseLock();
  }
}

/** Waits for `drain`; `setWake` hands over the resolver so that the destination going away wakes it too. */
function untilDrained(destination: WritableLike, setWake: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      destination.off('drain', done);
      resolve();
    };
    destination.once('drain', done);
    setWake(done);
  });
}

/** Ends the destination; true once it finished, false when it closed before flushing everything. */
function ended(destination: WritableLike): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (): void => {
      destination.off('finish', settle);
      destination.off('close', settle);
      destination.off('error', settle);
      resolve(destination.writableFinished !== false);
    };
    destination.once('finish', settle);
    destination.once('close', settle);
    destination.once('error', settle);
    destination.end();
  });
}
