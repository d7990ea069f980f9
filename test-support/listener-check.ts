import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * vitest global setup: fails the run when a process started by a test is still listening on a TCP
 * port once every test has finished (a server a test forgot to stop, or stopped only its shell
 * wrapper). Processes are recognised by a variable of this run in their environment, which every
 * child inherits, and which stays with an orphan after its parent has died.
 */
const MARKER = 'VERIKIT_TEST_RUN';

/** A listening socket and the process holding it. */
interface Listener {
  pid: number;
  port: number;
  command: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Inodes of listening TCP sockets (IPv4 and IPv6) and their ports, from /proc/net. */
function listeningSockets(): Map<string, number> {
  const sockets = new Map<string, number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is the tenth field.
      if (fields[3] !== '0A') continue;
      sockets.set(fields[9] as string, Number.parseInt((fields[1] as string).split(':')[1] as string, 16));
    }
  }
  return sockets;
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // gone, or not ours to read
  }
};

/** Listeners held by processes of this run, but not by the processes in `exclude` (vitest's own). */
function listenersOfRun(run: string, exclude: Set<number>): Listener[] {
  const sockets = listeningSockets();
  if (sockets.size === 0) return [];
  const found: Listener[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || exclude.has(pid)) continue;
    if (!read(`/proc/${pid}/environ`)?.split('\0').includes(`${MARKER}=${run}`)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const port = sockets.get(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? '');
      if (port === undefined) continue;
      const command = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').join(' ').trim().slice(0, 200);
      found.push({ pid, port, command });
    }
  }
  return found;
}

/** vitest's own processes: this one and its workers (whose listeners are in-process servers, gone when the run ends). */
function vitestProcesses(): Set<number> {
  const own = new Set([process.pid]);
  for (const name of readdirSync('/proc')) {
    const stat = read(`/proc/${name}/stat`);
    if (stat === undefined) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === process.pid && /vitest/.test(read(`/proc/${name}/cmdline`) ?? '')) own.add(Number(name));
  }
  return own;
}

export default function setup(): (() => Promise<void>) | undefined {
  if (read('/proc/net/tcp') === undefined) {
    console.warn('listener check: no /proc here; servers left running by tests are not detected');
    return undefined;
  }
  const run = `${process.pid}-${Date.now().toString(36)}`;
  process.env[MARKER] = run;
  return async function teardown() {
    // A server stopped as the last test ended may still be closing: give it a moment.
    const deadline = Date.now() + 3_000;
    let left = listenersOfRun(run, vitestProcesses());
    while (left.length > 0 && Date.now() < deadline) {
      await sleep(100);
      left = listenersOfRun(run, vitestProcesses());
    }
    if (left.length === 0) return;
    for (const pid of new Set(left.map((l) => l.pid))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // An error in a teardown is printed but does not fail a run by itself.
    process.exitCode = 1;
    throw new Error(
      `tests left ${left.length} server(s) listening (now killed); stop each with the TestProcess from test-support/processes.ts:\n${left
        .map((l) => `  pid ${l.pid} on port ${l.port}: ${l.command}`)
        .join('\n')}`,
    );
  };
}
