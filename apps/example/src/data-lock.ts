import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExampleConfigError } from './config.js';

/** Whether a process with this id exists (one we may not signal exists too). */
function running(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data folder for this process, or throws an {@link ExampleConfigError} saying that
 * another instance probably runs on it: two instances on one folder would open the same PGlite
 * files (and corrupt them) and want the same fake-service port. A lock left by an instance that
 * is gone (killed, crashed) is taken over (not atomically: two instances started at the same
 * instant after a crash could both take it). Returns the release, which removes the lock if still ours.
 */
export function lockDataFolder(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'instance.lock');
  const mine = String(process.pid);
  for (;;) {
    try {
      writeFileSync(path, mine, { flag: 'wx' });
      return () => {
        if (readFileSync(path, 'utf8') === mine) rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder: number;
    try {
      holder = Number(readFileSync(path, 'utf8'));
    } catch {
      continue; // released between our attempt and this read: try again
    }
    if (running(holder))
      throw new ExampleConfigError(
        `another instance is probably running on the data folder ${dir} (process ${holder}): stop it first, or give this one a folder of its own with VERIKIT_EXAMPLE_DATA (if no instance runs, remove ${path})`,
      );
    rmSync(path, { force: true });
  }
}
