#!/usr/bin/env node
// Committed launcher, so package managers can link the command before the package is built.
import { existsSync } from 'node:fs';

const built = new URL('../dist/bin.js', import.meta.url);
if (!existsSync(built)) {
  console.error('verikit-fake: @verikit/testing is not built yet; run `pnpm build` at the repository root first.');
  process.exit(1);
}
await import(built.href);
