import { createMemoryLedger, type LedgerEngine, type MemoryLedgerTransaction } from '@verikit/core';
import { describe, expect, it } from 'vitest';
import { type LedgerContractCase, ledgerContract } from '../src/index.js';

/** Effects the memory ledger commits through `ctx.sql.defer`. */
function memoryEffects() {
  const committed: string[] = [];
  return {
    write: (tx: MemoryLedgerTransaction, tag: string) => tx.defer(() => committed.push(tag)),
    count: async (tag: string) => committed.filter((t) => t === tag).length,
  };
}

describe('the memory ledger keeps the ledger contract', () => {
  for (const c of ledgerContract({ createLedger: () => createMemoryLedger(), effects: memoryEffects() })) it(c.name, c.run);
});

/** The cases a ledger changed by `breakIt` fails. */
async function failures(
  breakIt: (ledger: LedgerEngine<MemoryLedgerTransaction>) => LedgerEngine<MemoryLedgerTransaction>,
): Promise<string[]> {
  const cases: LedgerContractCase[] = ledgerContract({ createLedger: () => breakIt(createMemoryLedger()), effects: memoryEffects() });
  const failed: string[] = [];
  for (const c of cases) await c.run().catch(() => failed.push(c.name));
  return failed;
}

describe('the contract catches broken ledgers', () => {
  it('a lock that never says busy', async () => {
    const failed = await failures((ledger) => ({
      ...ledger,
      lock: async (key, options) => {
        const result = await ledger.lock(key, options);
        return result === 'busy' ? { key, token: 'second', entry: (await ledger.get(key))!, lockedAt: new Date() } : result;
      },
    }));
    expect(failed).toEqual(expect.arrayContaining([expect.stringMatching(/^one lock per row/), expect.stringMatching(/^of two locks/)]));
  });

  it('a record that runs work for the same fingerprint', async () => {
    const failed = await failures((ledger) => ({
      ...ledger,
      record: (lock, seen, next, work) => ledger.record(lock, { ...seen, fingerprint: `${seen.fingerprint}-${Math.random()}` }, next, work),
    }));
    expect(failed).toEqual(
      expect.arrayContaining([expect.stringMatching(/^the same fingerprint again/), expect.stringMatching(/committed with it, once/)]),
    );
  });

  it('a claim that hands out locked rows', async () => {
    const failed = await failures((ledger) => ({
      ...ledger,
      claimDue: async (options) => {
        const claimed = await ledger.claimDue(options);
        return [...claimed, ...claimed];
      },
    }));
    expect(failed).toEqual(expect.arrayContaining([expect.stringMatching(/^claims made at once/)]));
  });

  it('a budget that does not space reads', async () => {
    const failed = await failures((ledger) => ({ ...ledger, reserveRead: async () => 0, pauseReads: async () => {} }));
    expect(failed).toEqual([expect.stringMatching(/^reads are spaced/)]);
  });

  it('an erase that leaves the row and a checkSoon that changes nothing', async () => {
    const failed = await failures((ledger) => ({ ...ledger, erase: async () => true, checkSoon: async () => true }));
    expect(failed).toEqual([
      expect.stringMatching(/^LedgerAdmin erase removes the row/),
      expect.stringMatching(/^LedgerAdmin erase of a locked row/),
      expect.stringMatching(/^LedgerAdmin checkSoon/),
    ]);
  });

  it('a ledger without LedgerAdmin fails its cases, saying so; admin: false leaves them out', async () => {
    const without = () => ({ ...createMemoryLedger(), erase: undefined, checkSoon: undefined });
    const admin = ledgerContract({ createLedger: without }).filter((c) => c.name.startsWith('LedgerAdmin'));
    expect(admin).toHaveLength(3);
    for (const c of admin) await expect(c.run()).rejects.toThrow(/no erase and checkSoon \(LedgerAdmin\).*admin: false/);
    expect(ledgerContract({ createLedger: without, admin: false }).filter((c) => c.name.startsWith('LedgerAdmin'))).toEqual([]);
  });
});
