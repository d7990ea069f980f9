import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** A README's first ```js block, running as a real process from the package's own folder. */
export interface RunningSnippet {
  child: ChildProcess;
  /** Resolves when the output contains `text` (rejects if the process exits first or after `timeoutMs`). */
  waitFor(text: string, timeoutMs?: number): Promise<string>;
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  stop(): void;
}

/** Runs the first ```js block of the package's README with `env`, exactly as written. */
export function runReadmeSnippet(packageUrl: URL, env: Record<string, string>): RunningSnippet {
  const pkgDir = fileURLToPath(packageUrl);
  const readme = readFileSync(`${pkgDir}/README.md`, 'utf8');
  const code = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
  if (code === undefined) throw new Error(`${pkgDir}/README.md has no \`\`\`js snippet`);
  // Written inside the package so its imports resolve as they would in a user's project.
  const file = `${pkgDir}/.readme-snippet-${process.pid}-${Date.now()}.mjs`;
  writeFileSync(file, code);
  const running = runScript(file, pkgDir, env);
  running.child.on('exit', () => rmSync(file, { force: true }));
  return {
    ...running,
    stop: () => {
      running.stop();
      rmSync(file, { force: true });
    },
  };
}

/** Runs `file` (with `args`) with node in `cwd`, collecting its output for {@link RunningSnippet.waitFor}. */
export function runScript(file: string, cwd: string, env: Record<string, string>, args: string[] = []): RunningSnippet {
  return runCommand(process.execPath, [file, ...args], cwd, env);
}

/** Runs `command` in `cwd` (another runtime: bun, deno, workerd), collecting its output for {@link RunningSnippet.waitFor}. */
export function runCommand(command: string, args: string[], cwd: string, env: Record<string, string>): RunningSnippet {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    output: () => output,
    waitFor: (text, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (output.includes(text)) {
            clearInterval(timer);
            clearTimeout(limit);
            resolve(output);
          } else if (child.exitCode !== null) {
            clearInterval(timer);
            clearTimeout(limit);
            reject(new Error(`snippet exited (${child.exitCode}) before printing ${JSON.stringify(text)}:\n${output}`));
          }
        };
        const timer = setInterval(check, 20);
        const limit = setTimeout(() => {
          clearInterval(timer);
          reject(new Error(`snippet did not print ${JSON.stringify(text)} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
      }),
    stop: () => {
      child.kill('SIGTERM');
    },
  };
}

/** A port the OS says is free now (listened on and closed at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
