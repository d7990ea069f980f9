/**
 * What the `verikit` process's exit code means, for scripts and alerting: switch on these, never on
 * a message.
 * @example
 * // sh: verikit inbox replay msg_2Zx --json; [ $? -eq 3 ] && echo "no such dead letter"
 * if (code === ExitCode.notFound) console.log('no such dead letter');
 */
export const ExitCode = {
  /** Done as asked. */
  ok: 0,
  /** Something failed that has no code of its own (the message says what). */
  failure: 1,
  /** The command line is wrong: an unknown command or option, a missing or malformed argument. */
  usage: 2,
  /** The id or refId is not there: no such event, dead letter or ledger row. */
  notFound: 3,
  /** Setup is wrong: no or a malformed URL, an engine package not installed, a malformed `VERIKIT_ENCRYPTION_KEYS`, a Redis Cluster without `--cluster` (or one server with it). */
  configuration: 4,
  /** The database or Redis could not be reached (refused, unknown host, no answer in time, authentication failed). */
  unreachable: 5,
  /** Reached, but verikit's tables (PostgreSQL) or the inbox queue (Redis) are not there, or are another engine version's: not migrated, or another schema/prefix. */
  notSetUp: 6,
  /** A stored body is sealed and could not be opened: its key is not in `VERIKIT_ENCRYPTION_KEYS`, or is not the one it was sealed with. */
  sealed: 7,
  /** `ledger check` waited and no reconciler observed the verification in time. */
  notObserved: 8,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM before the work was finished; what was done is kept. */
  interrupted: 130,
} as const;

/** One of the {@link ExitCode} names. */
export type ExitCodeName = keyof typeof ExitCode;
