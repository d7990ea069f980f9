import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * A process a test started (a server, a runtime, a worker), in a process group of its own. Runtimes
 * from `node_modules/.bin` are shell wrappers around the real binary, and servers start children of
 * their own (Next.js, workerd): signalling the group reaches every one of them.
 */
export interface TestProcess {
  readonly child: ChildProcess;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the output contains `text` (rejects if the process exits first or after `timeoutMs`). */
  waitFor(text: string, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (null after a signal) once the process has exited and its output is read. */
  readonly closed: Promise<number | null>;
  /**
   * Ends the whole process group: `signal` (default SIGTERM), then SIGKILL after `graceMs` (default
   * 5 s); resolves once no process of the group is left.
   */
  stop(options?: { signal?: NodeJS.Signals; graceMs?: number }): Promise<void>;
}

/** Options of {@link startProcess}. */
export interface StartProcessOptions {
  cwd: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** An IPC channel (a Node child's `process.send`). */
  ipc?: boolean;
}

/** Groups started and not yet stopped: ended when this process exits, so none outlives a crashed test file. */
const started = new Set<number>();
process.once('exit', () => {
  for (const group of started) signalGroup(group, 'SIGKILL');
});

function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return false; // ESRCH: no process left in the group
  }
}

/** Whether a process of the group is still running (a zombie, already dead, does not count). */
function groupAlive(group: number): boolean {
  if (!signalGroup(group, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true; // no /proc: the signal's answer is all there is
  }
  return pids.some((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The fields after the command (which may hold spaces and parentheses): state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === group && state !== 'Z';
    } catch {
      return false; // ended while we looked
    }
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function groupEnded(group: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (groupAlive(group)) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

/** Starts `command` in a process group of its own, collecting its output; stop it with {@link TestProcess.stop}. */
export function startProcess(command: string, args: string[], options: StartProcessOptions): TestProcess {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  const group = child.pid;
  if (group !== undefined) started.add(group);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const closed = new Promise<number | null>((resolve) => {
    child.once('close', (code) => {
      // Gone with every process of its group: forget the group id, which the system may give to another.
      if (group !== undefined && !groupAlive(group)) started.delete(group);
      resolve(code);
    });
    // A command that cannot start (ENOENT) closes too, after this error.
    child.once('error', (error) => {
      output += `\n${String(error)}`;
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    child,
    output: () => output,
    closed,
    waitFor: (text, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (output.includes(text)) {
            clearInterval(timer);
            clearTimeout(limit);
            resolve(output);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearInterval(timer);
            clearTimeout(limit);
            reject(
              new Error(`${command} exited (${child.exitCode ?? child.signalCode}) before printing ${JSON.stringify(text)}:\n${output}`),
            );
          }
        };
        const timer = setInterval(check, 20);
        const limit = setTimeout(() => {
          clearInterval(timer);
          reject(new Error(`${command} did not print ${JSON.stringify(text)} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
      }),
    stop: ({ signal = 'SIGTERM', graceMs = 5_000 } = {}) =>
      (stopping ??= (async () => {
        if (group === undefined || !started.has(group)) return;
        signalGroup(group, signal);
        if (!(await groupEnded(group, graceMs))) {
          signalGroup(group, 'SIGKILL');
          if (!(await groupEnded(group, 5_000))) throw new Error(`process group ${group} (${command}) survived SIGKILL`);
        }
        started.delete(group);
        // The leader's pipes close with it; a grandchild that kept them open is gone too by now.
        await Promise.race([closed, sleep(1_000)]);
      })()),
  };
}
