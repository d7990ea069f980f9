// `pnpm bench`: every benchmark in one run. Figures, not pass/fail: the quality bars are read off this output.
// Flags: --quick (shorter runs), --verbose (print every round), --only=sizes|cold|verify|client|adapters|inbox|redis|ledger (one benchmark),
// --control (adapters: bare route vs bare route, the method's own spread).
import { benchAdapters } from './adapters.mjs';
import { benchClient } from './client.mjs';
import { benchCold } from './cold.mjs';
import { benchInbox } from './inbox.mjs';
import { benchLedger } from './ledger.mjs';
import { benchRedis } from './redis.mjs';
import { benchSizes } from './sizes.mjs';
import { benchVerify } from './verify.mjs';

const quick = process.argv.includes('--quick');
const verbose = process.argv.includes('--verbose');
const control = process.argv.includes('--control');
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
const selected = (name) => only === undefined || only === name;
if (selected('sizes')) await benchSizes();
if (selected('cold')) await benchCold({ verbose, ...(quick ? { rounds: 5 } : {}) });
if (selected('verify')) await benchVerify({ verbose, ...(quick ? { durationMs: 300, rounds: 3 } : {}) });
if (selected('client')) await benchClient({ verbose, ...(quick ? { durationMs: 400, rounds: 5 } : {}) });
if (selected('adapters')) {
  await benchAdapters({
    verbose,
    ...(control ? { control, handlerKinds: ['sync'] } : {}),
    ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}),
  });
}
if (selected('inbox')) {
  await benchInbox({
    accept: { verbose, ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}) },
    ...(quick ? { events: 2_000, rounds: 1, seconds: 4 } : {}),
  });
}
if (selected('redis')) {
  await benchRedis({
    accept: { verbose, ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}) },
    ...(quick ? { events: 40_000, windows: 1, warmupSeconds: 1 } : {}),
  });
}
if (selected('ledger')) {
  await benchLedger(quick ? { verifications: 2_000, seconds: 20, settleSeconds: 5, warmupSeconds: 1, windows: 3 } : {});
}
