import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The real bin, as npm links it: tests read dist/ (`pnpm test` builds first). */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** How a `verikit` process ended: its exit code (null after a signal) and what it wrote where. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `verikit` process running: its output so far, a way to signal it, and how it ends. */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr contains `text` (rejects when the process ends first or after `timeoutMs`). */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Sends `signal` to the process (as a terminal's Ctrl-C does to its foreground process). */
  kill(signal: NodeJS.Signals): void;
  /** Its end, once every byte it wrote is read; a process still running after `timeoutMs` is killed (group included) and the test fails. */
  readonly result: Promise<CliResult>;
}

/**
 * The variables a test gives the CLI, and nothing of the test process's own that would point it
 * elsewhere: no `DATABASE_URL`, `REDIS_URL`, `VERIKIT_ENCRYPTION_KEYS` unless given here.
 */
function environment(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !['DATABASE_URL', 'REDIS_URL', 'VERIKIT_ENCRYPTION_KEYS', 'VERIKIT_DEBUG'].includes(name))
      base[name] = value;
  return { ...base, ...env };
}

/** Starts `verikit ...args` as a child process in a group of its own, stdout and stderr apart. */
export function startCli(args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: environment(options.env ?? {}),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const result = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {}
      reject(
        new Error(
          `verikit ${args.join(' ')} did not end within ${timeoutMs} ms (a connection left open?)\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    kill: (signal) => child.kill(signal),
    result,
    waitForStderr: (text, waitMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const deadline = Date.now() + waitMs;
        const check = () => {
          if (stderr.includes(text)) return resolve();
          if (child.exitCode !== null || child.signalCode !== null)
            return reject(new Error(`verikit ended before writing ${JSON.stringify(text)} on stderr:\n${stderr}`));
          if (Date.now() > deadline)
            return reject(new Error(`verikit did not write ${JSON.stringify(text)} on stderr in ${waitMs} ms:\n${stderr}`));
          setTimeout(check, 20);
        };
        check();
      }),
  };
}

/** Runs `verikit ...args` to its end. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(args, { env }).result;
}

/** Runs `verikit ...args --json` to its end, expecting exit code 0, and parses what it printed. */
export async function runJson<T = Record<string, unknown>>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const result = await runCli([...args, '--json'], env);
  if (result.code !== 0) throw new Error(`verikit ${args.join(' ')} --json exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
