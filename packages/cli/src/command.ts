import type { Output } from './output.js';
import type { Progress } from './progress.js';
import type { Storage } from './storage.js';

/** An option of a command, as `util.parseArgs` takes it, with its line of help. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** `--limit N`: the value's name in the help (string options). */
  value?: string;
  help: string;
}

/** The values of a command's options, as parsed. */
export type OptionValues = Record<string, string | boolean | undefined>;

/** What a command is given to run. */
export interface CommandContext {
  out: Output;
  /** `--json`: one JSON document on stdout instead of a table. */
  json: boolean;
  values: OptionValues;
  /** The arguments after the command's words. */
  args: string[];
  /** Aborted by Ctrl-C: long work stops between steps and says how far it got. */
  signal: AbortSignal;
  /** The engine, connected at the first call. */
  storage(): Promise<Storage>;
  /** A progress line on stderr (see `createProgress`). */
  progress(label: string): Progress;
  /** The current time (ms). */
  now(): number;
}

/** Whether a command uses `VERIKIT_ENCRYPTION_KEYS`: needs it, uses it when set, or never reads it. */
export type KeysUse = 'required' | 'optional' | 'unused';

/** One command of the CLI. */
export interface Command {
  /** Its words: `['inbox', 'stats']`, `['erase']`. */
  words: string[];
  /** Its arguments, for the usage line: `['KIND', 'REFID']`; `[ID]` when optional. */
  args: string[];
  /** How many arguments it takes. */
  argCount: { min: number; max: number };
  /** One line: what it does. */
  summary: string;
  /** More lines for its `--help`. */
  details?: string;
  /** Its own options (the connection options and `--json` are every command's). */
  options: Record<string, OptionSpec>;
  keys: KeysUse;
  run(context: CommandContext): Promise<void>;
}
