import type { LedgerEntry, LedgerKey, LedgerStats } from '@verikit/core';
import { parseCount, parseKind, parseLedgerKey } from '../args.js';
import type { Command } from '../command.js';
import { CliError } from '../errors.js';
import { duration, fields, json, plural, printable, table, time, timeAgo } from '../output.js';
import { type CliLedger, operation } from '../storage.js';

/** A row as `--json` writes it: its times as ISO text. */
export const entryJson = (e: LedgerEntry) => ({
  ...e,
  observedAt: e.observedAt?.toISOString() ?? null,
  trackedAt: e.trackedAt.toISOString(),
  nextCheckAt: e.nextCheckAt?.toISOString() ?? null,
});

/** `IN_REVIEW v2` / `not observed yet`. */
const statusOf = (e: LedgerEntry): string =>
  e.status === null ? 'not observed yet' : `${printable(e.status)}${e.final ? ' (final)' : ''} v${e.version}`;

const list: Command = {
  words: ['ledger', 'list'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'verifications the ledger tracks, soonest due for a check first',
  options: {
    pending: { type: 'boolean', help: 'only those not final yet' },
    kind: { type: 'string', value: 'KIND', help: 'only kyb or only kyc' },
    limit: { type: 'string', value: 'N', help: 'at most N (default 100)' },
  },
  keys: 'unused',
  async run(context) {
    const kind = context.values.kind === undefined ? undefined : parseKind(String(context.values.kind), '--kind');
    const limit = context.values.limit === undefined ? 100 : parseCount(String(context.values.limit), '--limit', 1, 10_000);
    const ledger = await (await context.storage()).ledger();
    const entries = await ledger.list({ pending: context.values.pending === true, kind, limit });
    if (context.json) {
      context.out.stdout.write(json({ entries: entries.map(entryJson) }));
      return;
    }
    if (entries.length === 0) {
      context.out.stdout.write('no verifications\n');
      return;
    }
    context.out.stdout.write(
      table(
        ['KIND', 'REF ID', 'STATUS', 'FINAL', 'VERSION', 'OBSERVED', 'SOURCE', 'NEXT CHECK'],
        entries.map((e) => [
          e.kind,
          printable(e.refId),
          printable(e.status ?? '-'),
          e.final ? 'yes' : 'no',
          String(e.version),
          time(e.observedAt),
          e.source ?? '-',
          e.nextCheckAt === null ? 'never' : time(e.nextCheckAt),
        ]),
      ),
    );
  },
};

const stats: Command = {
  words: ['ledger', 'stats'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'pending verifications by kind (and the oldest), final ones, when a webhook last led to an observation',
  options: {},
  keys: 'unused',
  async run(context) {
    const ledger = await (await context.storage()).ledger();
    const s: LedgerStats = await ledger.stats();
    if (context.json) {
      const kinds = Object.fromEntries(
        Object.entries(s.pendingByKind).map(([kind, p]) => [
          kind,
          { pending: p.pending, oldestTrackedAt: p.oldestTrackedAt?.toISOString() ?? null },
        ]),
      );
      context.out.stdout.write(json({ ...s, pendingByKind: kinds, lastWebhookAt: s.lastWebhookAt?.toISOString() ?? null }));
      return;
    }
    const now = context.now();
    const kind = (name: 'kyb' | 'kyc') => {
      const p = s.pendingByKind[name];
      return `${p.pending}${p.oldestTrackedAt === null ? '' : `, oldest tracked ${timeAgo(p.oldestTrackedAt, now)}`}`;
    };
    context.out.stdout.write(
      fields([
        ['pending', String(s.pending)],
        ['  kyb', kind('kyb')],
        ['  kyc', kind('kyc')],
        ['final', String(s.final)],
        ['last webhook', s.lastWebhookAt === null ? 'none observed' : timeAgo(s.lastWebhookAt, now)],
      ]),
    );
  },
};

/**
 * Waits until a reconciler has checked the row since `before` (its observation moved, or its failed
 * checks changed: a read that failed), polling; the row, or `undefined` when `until` passes first.
 */
async function observedAfter(
  ledger: CliLedger,
  key: LedgerKey,
  before: LedgerEntry,
  until: number,
  signal: AbortSignal,
): Promise<LedgerEntry | undefined> {
  const moved = (row: LedgerEntry) => observedSince(before, row) || row.failures !== before.failures;
  for (;;) {
    const row = await ledger.get(key);
    if (row === undefined)
      throw new CliError('notFound', `${key.kind} ${JSON.stringify(key.refId)} left the ledger while waiting (erased?)`);
    if (moved(row)) return row;
    if (Date.now() >= until) return undefined;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, 250);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
    if (signal.aborted)
      throw new CliError('interrupted', `stopped waiting; ${key.kind} ${JSON.stringify(key.refId)} stays due now for the reconciler`);
  }
}

/** Whether `row` holds an observation newer than `before`'s. */
const observedSince = (before: LedgerEntry, row: LedgerEntry): boolean =>
  row.version !== before.version || row.observedAt?.getTime() !== before.observedAt?.getTime();

const check: Command = {
  words: ['ledger', 'check'],
  args: ['KIND', 'REFID'],
  argCount: { min: 2, max: 2 },
  summary: "have the app's running reconciler check a verification now, and wait for it to",
  details: [
    'The CLI records nothing itself: it makes the row due now, and a reconciler of the app observes it',
    'within the shared read budget and runs your onChange for any change, once. Then it shows the row',
    'before and after. With no reconciler running, it says so after --timeout (exit code 8).',
  ].join('\n'),
  options: {
    timeout: { type: 'string', value: 'SECONDS', help: 'how long to wait for the observation (default 30)' },
    'no-wait': { type: 'boolean', help: 'only make it due now; do not wait' },
  },
  keys: 'unused',
  async run(context) {
    const key = parseLedgerKey(context.args[0] as string, context.args[1] as string);
    const timeoutS = context.values.timeout === undefined ? 30 : parseCount(String(context.values.timeout), '--timeout', 1, 86_400);
    const storage = await context.storage();
    const ledger = await storage.ledger();
    const name = `${key.kind} ${JSON.stringify(key.refId)}`;
    const before = await ledger.get(key);
    const untracked = () => new CliError('notFound', `${name} is not in the ledger of ${storage.where}`);
    if (before === undefined) throw untracked();
    if (!(await operation(storage, ledger, 'checkSoon', 'ledger check')(key))) throw untracked();
    if (context.values['no-wait'] === true) {
      if (context.json) context.out.stdout.write(json({ kind: key.kind, refId: key.refId, scheduled: true, before: entryJson(before) }));
      else context.out.stdout.write(`${printable(name)} is due now: a running reconciler checks it next, within the read budget\n`);
      return;
    }
    const progress = context.progress(`${printable(name)} due now`);
    progress.note(`waiting up to ${timeoutS}s for a reconciler to observe it`);
    const started = Date.now();
    const after = await observedAfter(ledger, key, before, started + timeoutS * 1_000, context.signal).finally(() => progress.finish());
    const observed = after !== undefined && observedSince(before, after);
    // Checked, but the read of its result failed: the reconciler tries again by its schedule's backoff.
    const failed = after !== undefined && !observed;
    const changed = observed && after.version !== before.version;
    if (context.json) {
      context.out.stdout.write(
        json({
          kind: key.kind,
          refId: key.refId,
          scheduled: true,
          observed,
          failed,
          changed,
          before: entryJson(before),
          after: after === undefined ? null : entryJson(after),
        }),
      );
    } else {
      const now = context.now();
      const line = (e: LedgerEntry) => `${statusOf(e)}, observed ${timeAgo(e.observedAt, now)}${e.source ? ` by ${e.source}` : ''}`;
      context.out.stdout.write(
        fields([
          ['verification', printable(name)],
          ['before', line(before)],
          [
            'after',
            after === undefined
              ? '-'
              : failed
                ? `the check failed (${plural(after.failures, 'failed check')} in a row)`
                : `${line(after)}${changed ? ' (changed: onChange ran)' : ' (unchanged)'}`,
          ],
        ]),
      );
    }
    if (failed)
      throw new CliError(
        'failure',
        `a reconciler checked ${name} but could not read its result (${plural(after.failures, 'failed check')} in a row; the app's log says why): it tries again by its schedule, or run this again`,
      );
    if (after === undefined)
      throw new CliError(
        'notObserved',
        `no reconciler observed ${name} within ${duration(timeoutS * 1_000)}: is one running on this ledger (createReconciler(...).start()), with read budget to spare? It stays due now.`,
      );
  },
};

/** The `ledger` commands. */
export const ledgerCommands: Command[] = [list, stats, check];
