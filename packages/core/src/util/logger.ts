import { ConfigurationError } from '../errors.js';
import { LeaseLostError } from '../store/store.js';

/** Structured fields of a log line: ids, stages, codes, the error. Never a secret, key or body. */
export type LogFields = Record<string, unknown>;

/**
 * Where verikit says what went wrong: pino, `console`, or anything with these four methods. Fields
 * come first and the message second, as pino takes them (`console` prints both as they are).
 */
export interface Logger {
  /** Expected refusals: a bad signature, a repeat delivery (reason codes only). */
  debug(fields: LogFields, message: string): void;
  /** Normal events worth a line (unused by default). */
  info(fields: LogFields, message: string): void;
  /** Failures that are retried or recovered: a failing attempt, a client retry, a slow `onEvent`. */
  warn(fields: LogFields, message: string): void;
  /** Failures someone must look at: a dead-lettered event, a store or inbox that failed. */
  error(fields: LogFields, message: string): void;
}

/** An error as one line: its name, code and message (verikit's messages carry no secret). */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${error.name}${typeof code === 'string' ? ` [${code}]` : ''}: ${error.message}`;
}

/** A short reason for an error: its stable `code` when it has one, else its class name. */
export function errorReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : typeof error;
}

/** A failure's level: a lost lease is a warning (the store changed nothing; its new owner does the work), anything else an error. */
export const failureLevel = (error: unknown): 'warn' | 'error' => (error instanceof LeaseLostError ? 'warn' : 'error');

function line(message: string, fields: LogFields): string {
  const { err, ...rest } = fields;
  const details = Object.entries(rest)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  return `verikit: ${message}${details ? ` (${details})` : ''}${err === undefined ? '' : `: ${describeError(err)}`}`;
}

/** The default: warnings and errors as one line each on `console`; debug and info dropped. */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (fields, message) => console.warn(line(message, fields)),
  error: (fields, message) => console.error(line(message, fields)),
};

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** Calls an integrator's listener (an `onError`): told, never trusted, so one that throws or rejects changes nothing. */
export function tell<A extends unknown[]>(listener: ((...args: A) => unknown) | undefined, ...args: A): void {
  try {
    // An async listener's rejection would otherwise be unhandled, which ends a Node process.
    (listener?.(...args) as Promise<unknown> | undefined)?.catch?.(() => {});
  } catch {}
}

/** The `logger` option: a {@link Logger} (guarded: a call that throws is ignored), `false` for silence, or undefined for {@link consoleLogger}. */
export function resolveLogger(option: Logger | false | undefined): Logger {
  if (option === undefined) return consoleLogger;
  if (option === false) return silentLogger;
  // Told, never trusted: a sink that throws must not turn a refusal into a 500, hang an answer or stop
  // a worker's loop. Called as methods, looked up at each call: pino's and console's need their `this`.
  const guarded = {} as Logger;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (typeof option?.[level] !== 'function') {
      throw new ConfigurationError('logger', `logger must have debug, info, warn and error methods, or be false`);
    }
    guarded[level] = (fields, message) => tell(option[level].bind(option), fields, message);
  }
  return guarded;
}
