import type { Command, OptionSpec } from './command.js';
import { ExitCode } from './exit-codes.js';

/** The options every command takes: where to connect, how the app names its tables and keys, how to print. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: 'URL', help: 'postgres://... or redis://... (default: DATABASE_URL or REDIS_URL)' },
  engine: { type: 'string', value: 'NAME', help: 'postgres or redis: which variable to read when both are set' },
  cluster: { type: 'boolean', help: 'Redis Cluster: REDIS_URL or --url names one or more of its nodes, comma-separated' },
  schema: { type: 'string', value: 'NAME', help: "PostgreSQL: the schema of verikit's tables (default verikit)" },
  queue: { type: 'string', value: 'NAME', help: "Redis: the inbox's BullMQ queue (default verikit-inbox)" },
  prefix: { type: 'string', value: 'PREFIX', help: "Redis: the inbox's BullMQ prefix (default {verikit})" },
  'ledger-prefix': { type: 'string', value: 'PREFIX', help: "Redis: the ledger's key prefix (default verikit:ledger:)" },
  json: { type: 'boolean', help: 'one JSON document on stdout instead of a table' },
  progress: { type: 'boolean', help: 'a progress line on stderr even when it is not a terminal' },
  'no-progress': { type: 'boolean', help: 'no progress line, even on a terminal' },
  help: { type: 'boolean', help: 'this help' },
};

const optionLines = (options: Record<string, OptionSpec>): string[] => {
  const names = Object.entries(options).map(([name, spec]) => [`--${name}${spec.value ? ` ${spec.value}` : ''}`, spec.help] as const);
  const width = Math.max(...names.map(([flag]) => flag.length));
  return names.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`);
};

/** A command's usage line. */
export const usageOf = (command: Command): string =>
  `verikit ${[...command.words, ...command.args].join(' ')}${Object.keys(command.options).length > 0 ? ' [options]' : ''}`;

/** `verikit <command> --help`. */
export function commandHelp(command: Command): string {
  const own = Object.keys(command.options).length > 0 ? ['', 'Options:', ...optionLines(command.options)] : [];
  const keys =
    command.keys === 'unused'
      ? []
      : [
          '',
          `VERIKIT_ENCRYPTION_KEYS (id:base64,id:base64, the current key first)${command.keys === 'required' ? ' is required.' : ' opens sealed bodies.'}`,
        ];
  return `${[
    `Usage: ${usageOf(command)}`,
    '',
    `${command.summary[0]?.toUpperCase()}${command.summary.slice(1)}.`,
    ...(command.details ? [command.details] : []),
    ...own,
    ...keys,
    '',
    'Connection and output:',
    ...optionLines(COMMON_OPTIONS),
  ].join('\n')}\n`;
}

/** `verikit --help`. */
export function mainHelp(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.words.join(' ').length + c.args.join(' ').length + 1));
  const codes = Object.entries(ExitCode).map(([name, code]) => `  ${String(code).padStart(3)}  ${name}`);
  return `${[
    'Usage: verikit <command> [options]',
    '',
    "Operates verikit's inbox and verification ledger on PostgreSQL or Redis, with the app's own",
    '@verikit/postgres or @verikit/redis. Connects to --url, else DATABASE_URL or REDIS_URL;',
    'a Redis Cluster with --cluster.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${[...c.words, ...c.args].join(' ').padEnd(width)}  ${c.summary}`),
    '',
    'verikit <command> --help for its options. --version: the CLI and the engines installed beside it.',
    '',
    'Exit codes:',
    ...codes,
  ].join('\n')}\n`;
}
