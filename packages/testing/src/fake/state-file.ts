import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FakeStateSnapshot } from './state.js';

/** What a fake keeps across restarts: its port, its signing keys (so issued links stay valid) and its state. */
export interface StateFileContents {
  version: 1;
  port: number;
  jwtKey: string;
  storageKey: string;
  state: FakeStateSnapshot;
}

/** The contents of `path`, or undefined when there is no such file; a file that is not ours is an error naming it. */
export function readStateFile(path: string): StateFileContents | undefined {
  if (!existsSync(path)) return undefined;
  let contents: StateFileContents;
  try {
    contents = JSON.parse(readFileSync(path, 'utf8')) as StateFileContents;
  } catch (error) {
    throw new Error(`fake service: the state file ${path} is not readable JSON (${(error as Error).message}); remove it to start afresh`);
  }
  if (contents?.version !== 1)
    throw new Error(`fake service: ${path} is not a fake service state file (version 1); remove it to start afresh`);
  return contents;
}

/**
 * Writes `contents` to `path` whole or not at all (a temporary file renamed over it), so a crash never
 * leaves half a file. The file holds API keys and signing keys: readable by its owner only (0600),
 * whatever rights an earlier file or a leftover temporary one had.
 */
export function writeStateFile(path: string, contents: StateFileContents): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  // Created afresh (`wx`), since `mode` applies only to a new file: a leftover temporary file would keep its rights.
  rmSync(temporary, { force: true });
  writeFileSync(temporary, JSON.stringify(contents), { mode: 0o600, flag: 'wx' });
  renameSync(temporary, path);
}
