import type { DeadLetter, InboxRecord, InboxStats } from '@verikit/core';
import { parseCount, parseTime } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { CliError } from '../errors.js';
import { duration, fields, json, plural, printable, table, time, timeAgo, truncate } from '../output.js';
import { type CliInbox, operation, type Storage } from '../storage.js';

/** The inbox of the engine the context connects to, with the storage it came from. */
async function openInbox(context: CommandContext): Promise<{ storage: Storage; inbox: CliInbox }> {
  const storage = await context.storage();
  return { storage, inbox: await storage.inbox() };
}

const deadLetterJson = (d: DeadLetter) => ({
  id: d.id,
  attempts: d.attempts,
  lastError: d.lastError,
  receivedAt: d.receivedAt.toISOString(),
});

const stats: Command = {
  words: ['inbox', 'stats'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'how deep the inbox is: pending, retrying, dead letters, the oldest pending event',
  options: {},
  keys: 'unused',
  async run(context) {
    const { inbox } = await openInbox(context);
    const s: InboxStats = await inbox.stats();
    if (context.json) {
      context.out.stdout.write(json({ ...s, oldestPendingAt: s.oldestPendingAt?.toISOString() ?? null }));
      return;
    }
    context.out.stdout.write(
      fields([
        ['pending', String(s.pending)],
        ['  retrying', String(s.retrying)],
        ['dead', String(s.dead)],
        [
          'oldest pending',
          s.oldestPendingAt === null ? '-' : `${time(s.oldestPendingAt)} (waiting ${duration(s.oldestPendingAgeMs ?? 0)})`,
        ],
      ]),
    );
  },
};

const dead: Command = {
  words: ['inbox', 'dead'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'dead letters, oldest first, a page at a time',
  details: 'Each page ends with the --after value of the next one.',
  options: {
    since: { type: 'string', value: 'TIME', help: 'only those received at or after TIME (2026-05-01T14:00Z, or 6h, 7d back from now)' },
    limit: { type: 'string', value: 'N', help: 'at most N (default 50)' },
    after: { type: 'string', value: 'ID', help: 'the page after this dead letter (the last id of the previous page)' },
  },
  keys: 'unused',
  async run(context) {
    const limit = context.values.limit === undefined ? 50 : parseCount(String(context.values.limit), '--limit', 1, 10_000);
    const since = context.values.since === undefined ? undefined : parseTime(String(context.values.since), '--since', context.now());
    const after = context.values.after as string | undefined;
    const { storage, inbox } = await openInbox(context);
    // Before InboxAdmin, an engine's deadLetters ignored since and after: asking it would answer the wrong page.
    if (since !== undefined || after !== undefined) operation(storage, inbox, 'get', 'inbox dead --since/--after');
    const page = await inbox.deadLetters({ limit: limit + 1, since, after });
    const shown = page.slice(0, limit);
    const next = page.length > limit ? (shown[shown.length - 1]?.id ?? null) : null;
    if (context.json) {
      context.out.stdout.write(json({ deadLetters: shown.map(deadLetterJson), next }));
      return;
    }
    if (shown.length === 0) {
      context.out.stdout.write(`no dead letters${since === undefined ? '' : ` received since ${time(since)}`}\n`);
      return;
    }
    const now = context.now();
    context.out.stdout.write(
      table(
        ['ID', 'ATTEMPTS', 'RECEIVED', 'LAST ERROR'],
        shown.map((d) => [
          printable(d.id),
          String(d.attempts),
          `${time(d.receivedAt)} (${duration(now - d.receivedAt.getTime())} ago)`,
          truncate(printable(d.lastError ?? '-'), 80),
        ]),
      ),
    );
    if (next !== null) context.out.stdout.write(`more: --after ${printable(next)}\n`);
  },
};

const show: Command = {
  words: ['inbox', 'show'],
  args: ['ID'],
  argCount: { min: 1, max: 1 },
  summary: 'one stored event: its state, attempts, last error, times; its body only with --payload',
  details: 'A sealed body is opened with VERIKIT_ENCRYPTION_KEYS.',
  options: { payload: { type: 'boolean', help: 'print the stored body too (personal data: only when you must)' } },
  keys: 'optional',
  async run(context) {
    const { storage, inbox } = await openInbox(context);
    const [id] = context.args as [string];
    const withPayload = context.values.payload === true;
    const record: InboxRecord | undefined = await operation(storage, inbox, 'get', 'inbox show')(id, { withPayload });
    if (record === undefined)
      throw new CliError('notFound', `no event ${JSON.stringify(id)} in ${storage.where} (never accepted, or pruned after its retention)`);
    if (context.json) {
      const { receivedAt, finishedAt, ...rest } = record;
      context.out.stdout.write(json({ ...rest, receivedAt: receivedAt.toISOString(), finishedAt: finishedAt?.toISOString() ?? null }));
      return;
    }
    const now = context.now();
    context.out.stdout.write(
      fields([
        ['id', printable(record.id)],
        ['state', record.state],
        ['attempts', String(record.attempts)],
        ['last error', printable(record.lastError ?? '-')],
        ['received', timeAgo(record.receivedAt, now)],
        ['finished', timeAgo(record.finishedAt, now)],
        [
          'payload',
          record.payload === 'removed'
            ? 'removed (payload retention or an erasure; the id stays for dedupe)'
            : withPayload
              ? 'kept, below'
              : 'kept (print it with --payload)',
        ],
      ]),
    );
    // The body as stored, byte for byte: it is what the signature covered.
    if (record.body !== undefined) context.out.stdout.write(`\n${record.body}\n`);
  },
};

/** Every dead letter (received at or after `since`), paged through before any is replayed. */
async function collectDeadLetters(context: CommandContext, inbox: CliInbox, since: Date | undefined): Promise<DeadLetter[]> {
  const progress = context.progress('finding dead letters');
  const all: DeadLetter[] = [];
  let after: string | undefined;
  for (;;) {
    if (context.signal.aborted)
      throw new CliError('interrupted', `stopped while finding dead letters (${all.length} found); nothing was replayed`);
    const page = await inbox.deadLetters({ limit: 500, since, after });
    const last = page[page.length - 1];
    if (last === undefined) break;
    if (last.id === after)
      throw new CliError('failure', 'the engine answered the same page of dead letters twice: it does not page with after');
    all.push(...page);
    after = last.id;
    progress.update(all.length);
  }
  progress.finish();
  return all;
}

const replay: Command = {
  words: ['inbox', 'replay'],
  args: ['[ID]'],
  argCount: { min: 0, max: 1 },
  summary: 'queue a dead letter again with fresh attempts, or every one with --all-dead',
  details:
    '--all-dead lists the dead letters first, then replays that list (ones that die again meanwhile are not replayed twice).\nCtrl-C stops between two replays; run it again for the rest.',
  options: {
    'all-dead': { type: 'boolean', help: 'every dead letter (or those received since --since)' },
    since: { type: 'string', value: 'TIME', help: 'with --all-dead: only those received at or after TIME (the outage began)' },
    'dry-run': { type: 'boolean', help: 'say what would be replayed, replay nothing' },
  },
  keys: 'unused',
  async run(context) {
    const [id] = context.args;
    const all = context.values['all-dead'] === true;
    const dryRun = context.values['dry-run'] === true;
    if ((id === undefined) === !all) throw new CliError('usage', 'inbox replay takes an ID or --all-dead (one of them)');
    if (context.values.since !== undefined && !all) throw new CliError('usage', '--since goes with --all-dead');
    const since = context.values.since === undefined ? undefined : parseTime(String(context.values.since), '--since', context.now());
    const { storage, inbox } = await openInbox(context);
    if (id !== undefined) return replayOne(context, storage, inbox, id, dryRun);
    operation(storage, inbox, 'get', 'inbox replay --all-dead');
    const letters = await collectDeadLetters(context, inbox, since);
    if (dryRun) {
      if (context.json) context.out.stdout.write(json({ dryRun: true, total: letters.length, ids: letters.map((d) => d.id) }));
      else {
        const shown = letters.slice(0, 20);
        context.out.stdout.write(`would replay ${plural(letters.length, 'dead letter')}${letters.length > 0 ? ':' : ''}\n`);
        if (shown.length > 0)
          context.out.stdout.write(
            table(
              ['ID', 'RECEIVED'],
              shown.map((d) => [printable(d.id), time(d.receivedAt)]),
            ),
          );
        if (letters.length > shown.length) context.out.stdout.write(`... and ${letters.length - shown.length} more\n`);
      }
      return;
    }
    const progress = context.progress('replaying dead letters');
    let replayed = 0;
    let skipped = 0;
    for (const letter of letters) {
      if (context.signal.aborted) {
        progress.finish();
        throw new CliError(
          'interrupted',
          `stopped: replayed ${replayed} of ${letters.length} dead letters (${skipped} no longer dead); run it again to replay the rest`,
        );
      }
      if (await inbox.replay(letter.id)) replayed++;
      else skipped++;
      progress.update(replayed + skipped, letters.length);
    }
    progress.finish();
    if (context.json) context.out.stdout.write(json({ dryRun: false, total: letters.length, replayed, skipped }));
    else
      context.out.stdout.write(
        `replayed ${plural(replayed, 'dead letter')}${skipped > 0 ? ` (${skipped} no longer dead when reached: replayed or purged meanwhile)` : ''}\n`,
      );
  },
};

async function replayOne(context: CommandContext, storage: Storage, inbox: CliInbox, id: string, dryRun: boolean): Promise<void> {
  const notDead = async () => {
    const record = typeof inbox.get === 'function' ? await inbox.get(id) : undefined;
    return new CliError(
      'notFound',
      record === undefined
        ? `no dead letter ${JSON.stringify(id)} in ${storage.where}`
        : `${JSON.stringify(id)} is ${record.state}, not a dead letter: nothing to replay`,
    );
  };
  if (dryRun) {
    const record = await operation(storage, inbox, 'get', 'inbox replay ID --dry-run')(id);
    if (record?.state !== 'dead') throw await notDead();
  } else if (!(await inbox.replay(id))) throw await notDead();
  if (context.json) context.out.stdout.write(json({ dryRun, id, replayed: !dryRun }));
  else
    context.out.stdout.write(dryRun ? `would replay ${printable(id)}\n` : `replayed ${printable(id)}: queued again with fresh attempts\n`);
}

const purgeDead: Command = {
  words: ['inbox', 'purge-dead'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'remove dead letters received before a time: their bodies go, their ids stay (as done) for dedupe',
  options: { before: { type: 'string', value: 'TIME', help: 'required: those received before TIME (2026-05-01, or 30d back from now)' } },
  keys: 'unused',
  async run(context) {
    if (context.values.before === undefined) throw new CliError('usage', 'inbox purge-dead needs --before TIME');
    const before = parseTime(String(context.values.before), '--before', context.now());
    const { storage, inbox } = await openInbox(context);
    const purged = await operation(storage, inbox, 'purgeDead', 'inbox purge-dead')({ before });
    if (context.json) context.out.stdout.write(json({ purged, before: before.toISOString() }));
    else context.out.stdout.write(`purged ${plural(purged, 'dead letter')} received before ${time(before)}\n`);
  },
};

const reseal: Command = {
  words: ['inbox', 'reseal'],
  args: [],
  argCount: { min: 0, max: 0 },
  summary: 'seal every stored body again under the current key (the first of VERIKIT_ENCRYPTION_KEYS)',
  details:
    'Run it after adding a new key in front of VERIKIT_ENCRYPTION_KEYS (and in the app); then the old key can go.\nCtrl-C stops after the current batch; what was sealed stays sealed, and running it again goes on.',
  options: {},
  keys: 'required',
  async run(context) {
    const { storage, inbox } = await openInbox(context);
    const reseal = operation(storage, inbox, 'reseal', 'inbox reseal');
    const progress = context.progress('resealing stored bodies');
    let sofar = 0;
    const stopped = new Error('stopped');
    try {
      const { resealed } = await reseal({
        onProgress: (count) => {
          sofar = count;
          progress.update(count);
          // Each batch is atomic per row: stopping between two batches leaves every row sealed under one key or the other.
          if (context.signal.aborted) throw stopped;
        },
      });
      progress.finish();
      if (context.json) context.out.stdout.write(json({ resealed }));
      else context.out.stdout.write(`resealed ${plural(resealed, 'stored body', 'stored bodies')} under the current key\n`);
    } catch (error) {
      progress.finish();
      if (error === stopped) throw new CliError('interrupted', `stopped: ${sofar} resealed so far; run it again to go on`);
      throw error;
    }
  },
};

/** The `inbox` commands. */
export const inboxCommands: Command[] = [stats, dead, show, replay, purgeDead, reseal];
