/** How pending work ended, as far as the answer is concerned. */
export type Outcome = 'ok' | 'failed' | 'timed-out';

/** A deadline armed for one piece of work. */
export interface Deadline {
  /** Disarms it (the work ended in time); a no-op once it has fired. */
  cancel(): void;
}

/** Deadlines of one length, armed per piece of work. */
export interface Deadlines {
  /** Calls `onExpire` once the deadline passes, unless it is cancelled first. */
  arm(onExpire: () => void): Deadline;
}

/** Makes the platform's {@link Deadlines} of a given length. */
export type DeadlinesFactory = (lengthMs: number) => Deadlines;

/**
 * A timer per deadline, armed inside the request that needs it: the plain version, right on every
 * runtime, and the only one on those that cancel a request's timers when it ends (workerd), where
 * a shared interval armed by an earlier request would never fire again.
 */
export class TimerDeadlines implements Deadlines {
  constructor(private readonly lengthMs: number) {}

  arm(onExpire: () => void): Deadline {
    const timer = setTimeout(onExpire, this.lengthMs);
    return { cancel: () => clearTimeout(timer) };
  }
}

/**
 * Settles with how `work` ended, or `timed-out` once the deadline passes first. The error of work
 * that failed in time goes to `onFailure` (after the deadline, the work is the caller's to watch).
 */
export function raceDeadline(deadlines: Deadlines, work: PromiseLike<unknown>, onFailure: (error: unknown) => void): Promise<Outcome> {
  return new Promise<Outcome>((settle) => {
    let timedOut = false;
    const deadline = deadlines.arm(() => {
      timedOut = true;
      settle('timed-out');
    });
    work.then(
      () => {
        deadline.cancel();
        settle('ok');
      },
      (error: unknown) => {
        deadline.cancel();
        if (!timedOut) onFailure(error);
        settle('failed');
      },
    );
  });
}

/** One armed deadline, linked in due order so the sweeper neither hashes nor searches. */
export class ArmedDeadline implements Deadline {
  prev: ArmedDeadline | undefined;
  next: ArmedDeadline | undefined;
  linked = true;

  constructor(
    readonly due: number,
    readonly onExpire: () => void,
    private readonly owner: DeadlineSweeper,
  ) {}

  /** Disarms it (the work ended in time); a no-op once it has fired. */
  cancel(): void {
    this.owner.unlink(this);
  }
}

/**
 * Deadlines of one length, checked by one interval while any are armed: Node's. A timer per
 * request was a measurable share of a webhook route's cost there (bench/adapters.mjs); a deadline
 * may now fire up to a tenth of its length (at most 250 ms) late. Measured on `performance.now()`,
 * which a wall-clock step cannot move. The Web build uses {@link TimerDeadlines}.
 */
export class DeadlineSweeper implements Deadlines {
  // Every entry gets the same length, so appending keeps the list in due order.
  private head: ArmedDeadline | undefined;
  private tail: ArmedDeadline | undefined;
  private readonly tickMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  /**
   * `holdsProcess`: whether a pending deadline keeps the process alive. A webhook route's work keeps
   * its own server alive, so its sweeper need not; a store's call may have nothing else holding it.
   */
  constructor(
    private readonly lengthMs: number,
    private readonly holdsProcess = false,
  ) {
    this.tickMs = Math.max(1, Math.min(250, Math.floor(lengthMs / 10)));
  }

  /** Calls `onExpire` once the deadline passes, unless it is cancelled first. */
  arm(onExpire: () => void): ArmedDeadline {
    const node = new ArmedDeadline(performance.now() + this.lengthMs, onExpire, this);
    node.prev = this.tail;
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.tickMs);
      if (!this.holdsProcess) (this.timer as { unref?: () => void }).unref?.();
    }
    return node;
  }

  /** Takes a node out of the list (cancelled or fired). */
  unlink(node: ArmedDeadline): void {
    if (!node.linked) return;
    node.linked = false;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.tail = node.prev;
    node.prev = node.next = undefined;
  }

  private sweep(): void {
    const now = performance.now();
    while (this.head !== undefined && this.head.due <= now) {
      const expired = this.head;
      this.unlink(expired);
      expired.onExpire();
    }
    if (this.head === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
