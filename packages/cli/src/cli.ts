import { parseArgs } from 'node:util';
import type { Command, CommandContext, OptionSpec, OptionValues } from './command.js';
import { eraseCommand } from './commands/erase.js';
import { inboxCommands } from './commands/inbox.js';
import { ledgerCommands } from './commands/ledger.js';
import { asCliError, CliError, type FailureContext } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { COMMON_OPTIONS, commandHelp, mainHelp } from './help.js';
import { KEYS_VARIABLE, parseEncryptionKeys } from './keys.js';
import { openStorage } from './open-storage.js';
import { json, type Output } from './output.js';
import { createProgress } from './progress.js';
import { describeEngine, ENGINE_PACKAGES, installedVersion, type Storage } from './storage.js';
import { redisModeOf, resolveTarget } from './target.js';

/** Where {@link runVerikit} reads and writes; each defaults to the process's own. */
export interface VerikitIO {
  /** Results: a table, or one JSON document with `--json`. */
  stdout?: { write(text: string): unknown; isTTY?: boolean };
  /** Progress lines and the one-line error. */
  stderr?: { write(text: string): unknown; isTTY?: boolean };
  /** `DATABASE_URL`, `REDIS_URL`, `VERIKIT_ENCRYPTION_KEYS`, `VERIKIT_DEBUG`. */
  env?: Record<string, string | undefined>;
  /** Aborting it stops long work between two steps (the bin aborts it on Ctrl-C). */
  signal?: AbortSignal;
}

const COMMANDS: Command[] = [...inboxCommands, ...ledgerCommands, eraseCommand];
const GROUPS = new Set(COMMANDS.filter((c) => c.words.length > 1).map((c) => c.words[0] as string));

/** Every option any command takes, for one strict parse; each command then refuses the ones that are not its own. */
const ALL_OPTIONS: Record<string, OptionSpec> = Object.assign(
  { version: { type: 'boolean', help: '' } },
  COMMON_OPTIONS,
  ...COMMANDS.map((c) => c.options),
);

/** The command whose words begin `positionals`, or a usage error naming the choices. */
function findCommand(positionals: string[]): Command {
  const [first, second] = positionals;
  const command = COMMANDS.find((c) => c.words.every((word, i) => positionals[i] === word));
  if (command !== undefined) return command;
  if (first !== undefined && GROUPS.has(first)) {
    const choices = COMMANDS.filter((c) => c.words[0] === first).map((c) => c.words[1]);
    throw new CliError(
      'usage',
      `${second === undefined ? `verikit ${first} needs a command` : `unknown command "${first} ${second}"`}: ${choices.join(', ')} (verikit --help)`,
    );
  }
  throw new CliError('usage', `unknown command ${JSON.stringify(first ?? '')}: inbox, ledger or erase (verikit --help)`);
}

/** `text` with every secret in it replaced: a URL or its password, an encryption key. */
const redact = (text: string, secrets: string[]): string =>
  secrets.filter((s) => s.length >= 3).reduce((out, secret) => out.split(secret).join('***'), text);

/** `--version`: the CLI's, and the engine packages' installed beside it (which must be the app's). */
function versions(asJson: boolean): string {
  const engines = Object.fromEntries(
    Object.values(ENGINE_PACKAGES).map(([name]) => [name as string, installedVersion(name as string) ?? null] as const),
  );
  const cli = installedVersion('@verikit/cli') ?? 'unknown';
  if (asJson) return json({ cli, engines });
  return `@verikit/cli ${cli}\n${Object.entries(engines)
    .map(([name, version]) => `${name} ${version ?? 'not installed'}`)
    .join('\n')}\n`;
}

/**
 * Runs one `verikit` command line (without the `node` and script words) and answers its exit code
 * ({@link ExitCode}); connections it opened are closed by then. What the bin runs; usable from a
 * script of your own.
 * @example
 * const code = await runVerikit(['inbox', 'stats', '--json'], { env: { DATABASE_URL: process.env.DATABASE_URL } });
 */
export async function runVerikit(args: readonly string[], io: VerikitIO = {}): Promise<number> {
  const out: Output = { stdout: io.stdout ?? process.stdout, stderr: io.stderr ?? process.stderr };
  const env = io.env ?? process.env;
  const signal = io.signal ?? new AbortController().signal;
  const asJson = args.includes('--json');
  const secrets: string[] = [];
  let failureContext: FailureContext | undefined;
  let opened: Promise<Storage> | undefined;
  try {
    let parsed: ReturnType<typeof parseArgs<{ options: typeof ALL_OPTIONS; allowPositionals: true; tokens: true; strict: true }>>;
    try {
      parsed = parseArgs({ args: [...args], options: ALL_OPTIONS, allowPositionals: true, strict: true, tokens: true });
    } catch (error) {
      // Node's own words ("Unknown option '--x'"), without its advice on positionals that start with '-'.
      throw new CliError('usage', `${(error as Error).message.split('. ')[0]} (verikit --help)`);
    }
    const values = parsed.values as OptionValues;
    const answer = (text: string) => {
      out.stdout.write(text);
      return ExitCode.ok;
    };
    if (values.version === true) return answer(versions(asJson));
    if (parsed.positionals.length === 0) {
      if (values.help === true) return answer(mainHelp(COMMANDS));
      throw new CliError('usage', 'a command is needed (verikit --help)');
    }
    if (values.help === true && GROUPS.has(parsed.positionals[0] as string) && parsed.positionals.length === 1)
      return answer(mainHelp(COMMANDS));
    const command = findCommand(parsed.positionals);
    if (values.help === true) return answer(commandHelp(command));
    const name = command.words.join(' ');
    for (const token of parsed.tokens ?? [])
      if (token.kind === 'option' && !(token.name in COMMON_OPTIONS) && !(token.name in command.options))
        throw new CliError('usage', `${name} does not take --${token.name} (verikit ${name} --help)`);
    const rest = parsed.positionals.slice(command.words.length);
    if (rest.length < command.argCount.min || rest.length > command.argCount.max)
      throw new CliError('usage', `usage: verikit ${[...command.words, ...command.args].join(' ')} (verikit ${name} --help)`);

    const open = async (): Promise<Storage> => {
      const target = resolveTarget(
        { url: values.url as string | undefined, engine: values.engine as string | undefined, cluster: values.cluster === true },
        env,
      );
      secrets.push(...target.secrets);
      failureContext = describeEngine(target.engine, target.where, redisModeOf(target));
      const keysText = env[KEYS_VARIABLE] || undefined;
      // The keys, never their ids (a message names the id of a key that would not open a body).
      if (keysText !== undefined) secrets.push(keysText, ...keysText.split(',').map((entry) => entry.slice(entry.indexOf(':') + 1).trim()));
      if (command.keys === 'required' && keysText === undefined)
        throw new CliError('configuration', `${name} needs ${KEYS_VARIABLE}: the app's keys, id:base64, the current key first`);
      const encryption = command.keys !== 'unused' && keysText !== undefined ? parseEncryptionKeys(keysText) : undefined;
      const storage = await openStorage(target, {
        schema: values.schema as string | undefined,
        queue: values.queue as string | undefined,
        prefix: values.prefix as string | undefined,
        ledgerPrefix: values['ledger-prefix'] as string | undefined,
        encryption,
      });
      failureContext = storage;
      return storage;
    };
    const context: CommandContext = {
      out,
      json: asJson,
      values,
      args: rest,
      signal,
      storage: () => (opened ??= open()),
      progress: (label) => createProgress(out.stderr, label, { force: values.progress === true, off: values['no-progress'] === true }),
      now: () => Date.now(),
    };
    await command.run(context);
    return ExitCode.ok;
  } catch (error) {
    const failure = asCliError(error, failureContext);
    const message = redact(failure.message, secrets);
    if (asJson) out.stderr.write(json({ error: { reason: failure.reason, exitCode: failure.exitCode, message } }));
    else out.stderr.write(`verikit: ${message}\n`);
    // The stack only when asked: an expected failure is its one line.
    if (failure.reason === 'failure' && env.VERIKIT_DEBUG && error instanceof Error && error.stack)
      out.stderr.write(`${redact(error.stack, secrets)}\n`);
    return failure.exitCode;
  } finally {
    const storage = await opened?.catch(() => undefined);
    await storage?.close().catch(() => {});
  }
}
