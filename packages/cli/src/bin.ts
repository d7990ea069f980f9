#!/usr/bin/env node
import { runVerikit } from './cli.js';
import { ExitCode } from './exit-codes.js';

// Ctrl-C (or SIGTERM) stops long work between two steps, which then says how far it got and closes
// its connections; a second one ends the process at once.
const stopping = new AbortController();
const stop = () => {
  if (stopping.signal.aborted) process.exit(ExitCode.interrupted);
  stopping.abort();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

process.exitCode = await runVerikit(process.argv.slice(2), { signal: stopping.signal });
