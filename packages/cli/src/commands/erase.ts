import { parseLedgerKey } from '../args.js';
import type { Command } from '../command.js';
import { asCliError, CliError } from '../errors.js';
import { fields, json, plural, printable } from '../output.js';
import { operation } from '../storage.js';

const PARTS = ['inbox', 'ledger'] as const;

/** `erase KIND REFID`: what is stored about one verification, in the inbox and the ledger. */
export const eraseCommand: Command = {
  words: ['erase'],
  args: ['KIND', 'REFID'],
  argCount: { min: 2, max: 2 },
  summary: 'erase what is stored about a verification: its webhook bodies in the inbox, its ledger row',
  details: [
    "Bodies are read with verikit's default identify (the refId at the top, under data, or under",
    'data.kybCase/object/session/user): an app with its own identify erases from its code',
    '(inbox.erase(subject, { identify })). Ids stay, for dedupe; pending and dead events among them are marked done,',
    'never run. Sealed bodies are opened with VERIKIT_ENCRYPTION_KEYS: one that cannot be opened is an',
    'error (exit code 7) after the rest is erased; run it again with the key.',
  ].join('\n'),
  options: { only: { type: 'string', value: 'PART', help: 'only the inbox or only the ledger (when the other is elsewhere)' } },
  keys: 'optional',
  async run(context) {
    const key = parseLedgerKey(context.args[0] as string, context.args[1] as string);
    const only = context.values.only as string | undefined;
    if (only !== undefined && !(PARTS as readonly string[]).includes(only)) throw new CliError('usage', '--only is inbox or ledger');
    const storage = await context.storage();
    const progress = context.progress(`erasing ${printable(`${key.kind} ${key.refId}`)}`);
    let bodies: number | undefined;
    let row: boolean | undefined;
    let unopened: CliError | undefined;
    try {
      if (only !== 'ledger') {
        progress.note('scanning stored bodies');
        const inbox = await storage.inbox();
        try {
          bodies = (await operation(storage, inbox, 'erase', 'erase')(key)).erased;
        } catch (error) {
          // The engine erased every body it could open before it threw: the ledger row goes too, and the error is said after.
          unopened = asCliError(error, storage);
          if (unopened.reason !== 'sealed') throw unopened;
        }
      }
      if (only !== 'inbox') {
        progress.note('removing the ledger row');
        const ledger = await storage.ledger();
        row = await operation(storage, ledger, 'erase', 'erase')(key);
      }
    } finally {
      progress.finish();
    }
    if (context.json) {
      context.out.stdout.write(
        json({
          kind: key.kind,
          refId: key.refId,
          inbox: only === 'ledger' ? null : { erased: bodies ?? null, complete: unopened === undefined },
          ledger: only === 'inbox' ? null : { erased: row },
        }),
      );
    } else {
      context.out.stdout.write(
        fields([
          ['verification', printable(`${key.kind} ${key.refId}`)],
          ...(only === 'ledger'
            ? []
            : ([
                [
                  'inbox',
                  unopened === undefined
                    ? `${plural(bodies ?? 0, 'stored body', 'stored bodies')} removed (ids kept for dedupe)`
                    : 'bodies that opened were removed; one or more could not be opened (below)',
                ],
              ] as Array<[string, string]>)),
          ...(only === 'inbox' ? [] : ([['ledger', row ? 'row removed' : 'no row']] as Array<[string, string]>)),
        ]),
      );
    }
    if (unopened !== undefined) throw new CliError('sealed', `not everything was erased: ${unopened.message}; run erase again once it is`);
  },
};
