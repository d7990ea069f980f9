// `pnpm bench`: every benchmark in one run. Figures, not pass/fail: the quality bars are read off this output.
// Flags: --quick (shorter runs), --verbose (print every round; sizes: verikit's files in each budgeted Worker), --only=sizes|cold|verify|client|adapters|inbox|inbox-admin|redis|redis-admin|ledger (one benchmark),
// --control (adapters: bare route vs bare route, the method's own spread),
// --frameworks=express,fastify,hono and --rounds=N (adapters and the inbox and redis accept routes: which frameworks, how many rounds),
// --json=<file> or --json <file> (also write every reported figure to a JSON file, to compare runs).
import { benchAdapters } from './adapters.mjs';
import { benchClient } from './client.mjs';
import { benchCold } from './cold.mjs';
import { benchInbox } from './inbox.mjs';
import { benchInboxAdmin } from './inbox-admin.mjs';
import { benchLedger } from './ledger.mjs';
import { writeReport } from './lib.mjs';
import { benchRedis } from './redis.mjs';
import { benchRedisAdmin } from './redis-admin.mjs';
import { benchSizes } from './sizes.mjs';
import { benchVerify } from './verify.mjs';

const quick = process.argv.includes('--quick');
const verbose = process.argv.includes('--verbose');
const control = process.argv.includes('--control');
const flagValue = (flag) => process.argv.find((arg) => arg.startsWith(`--${flag}=`))?.slice(flag.length + 3);
const frameworks = flagValue('frameworks')?.split(',');
const rounds = flagValue('rounds') === undefined ? undefined : Number(flagValue('rounds'));
const only = flagValue('only');
const jsonFlag = process.argv.indexOf('--json');
const jsonFile = flagValue('json') ?? (jsonFlag > 0 ? process.argv[jsonFlag + 1] : undefined);
if (jsonFlag > 0 && (jsonFile === undefined || jsonFile.startsWith('--'))) throw new Error('--json needs a file: --json=<file>');
/** What --frameworks and --rounds choose, for every benchmark built on the adapters' method. */
const acceptChoices = { ...(frameworks ? { frameworks } : {}), ...(rounds ? { rounds } : {}) };
const selected = (name) => only === undefined || only === name;
if (selected('sizes')) await benchSizes({ verbose });
if (selected('cold')) await benchCold({ verbose, ...(quick ? { rounds: 5 } : {}) });
if (selected('verify')) await benchVerify({ verbose, ...(quick ? { durationMs: 300, rounds: 3 } : {}) });
if (selected('client')) await benchClient({ verbose, ...(quick ? { durationMs: 400, rounds: 5 } : {}) });
if (selected('adapters')) {
  await benchAdapters({
    verbose,
    ...(control ? { control, handlerKinds: ['sync'] } : {}),
    ...(quick ? { durationSeconds: 1, rounds: 1, warmupRounds: 2, warmupSeconds: 1 } : {}),
    ...acceptChoices,
  });
}
if (selected('inbox')) {
  await benchInbox({
    accept: { verbose, ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}), ...acceptChoices },
    ...(quick ? { events: 2_000, rounds: 1, seconds: 4 } : {}),
  });
}
if (selected('inbox-admin')) await benchInboxAdmin(quick ? { rows: 20_000, kept: 2_000, rounds: 1 } : {});
if (selected('redis')) {
  await benchRedis({
    accept: { verbose, ...(quick ? { durationSeconds: 1, rounds: 1, warmupSeconds: 1 } : {}), ...acceptChoices },
    ...(quick ? { events: 40_000, windows: 1, warmupSeconds: 1 } : {}),
  });
}
if (selected('redis-admin')) await benchRedisAdmin(quick ? { jobs: 20_000, kept: 2_000, rounds: 1 } : {});
if (selected('ledger')) {
  await benchLedger(quick ? { verifications: 5_000, seconds: 20, settleSeconds: 5, warmupSeconds: 1, windows: 1 } : {});
}
if (jsonFile !== undefined) {
  await writeReport(jsonFile);
  console.log(`figures written to ${jsonFile}`);
}
