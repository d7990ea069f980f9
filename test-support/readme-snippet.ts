import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startProcess, type TestProcess } from './processes.js';

/** A README's first ```js block (or any program a test runs), as a real process: see {@link TestProcess}. */
export type RunningSnippet = TestProcess;

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
  void running.closed.then(() => rmSync(file, { force: true }));
  return running;
}

/** Runs `file` (with `args`) with node in `cwd`, collecting its output for {@link RunningSnippet.waitFor}. */
export function runScript(file: string, cwd: string, env: Record<string, string>, args: string[] = []): RunningSnippet {
  return runCommand(process.execPath, [file, ...args], cwd, env);
}

/** Runs `command` in `cwd` (another runtime: bun, deno, workerd), collecting its output for {@link RunningSnippet.waitFor}. */
export function runCommand(command: string, args: string[], cwd: string, env: Record<string, string>): RunningSnippet {
  return startProcess(command, args, { cwd, env });
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
