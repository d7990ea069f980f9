// `pnpm bench`: every benchmark in one run. Figures, not pass/fail: the quality bars are read off this output.
// Flags: --quick (shorter runs), --verbose (print every round).
import { benchAdapters } from './adapters.mjs';
import { benchClient } from './client.mjs';
import { benchVerify } from './verify.mjs';

const quick = process.argv.includes('--quick');
const verbose = process.argv.includes('--verbose');
await benchVerify({ verbose, ...(quick ? { durationMs: 300, rounds: 3 } : {}) });
await benchClient({ verbose, ...(quick ? { durationMs: 400, rounds: 5 } : {}) });
await benchAdapters({ verbose, ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}) });
