import type { LedgerAdmin, LedgerChange, LedgerEngine, LedgerKey, LedgerLock, Observation, ObservationSource } from '@verikit/core';

/** One check of the ledger contract; run it with any test runner (`it(c.name, c.run)`). */
export interface LedgerContractCase {
  name: string;
  run: () => Promise<void>;
}

/** How a contract case writes an effect through `ctx.sql` and counts what was committed. */
export interface LedgerEffects<Tx> {
  /** Writes one effect tagged `tag` through the record's transaction. */
  write(tx: Tx, tag: string): void | Promise<void>;
  /** How many effects tagged `tag` are committed now. */
  count(tag: string): Promise<number>;
}

/** Options of {@link ledgerContract}. */
export interface LedgerContractOptions<Tx> {
  /** Makes a ledger over empty storage (its own schema or key prefix): cases count and claim every due row. */
  createLedger: () => LedgerEngine<Tx> | Promise<LedgerEngine<Tx>>;
  /** Effects through `ctx.sql`: adds the cases that check a change and its effect commit together. */
  effects?: LedgerEffects<Tx>;
  /** Called after each case with the ledger it made (close connections here). */
  disposeLedger?: (ledger: LedgerEngine<Tx>) => void | Promise<void>;
  /**
   * Runs the cases of `LedgerAdmin` (`erase`, `checkSoon`), which every verikit ledger has (default
   * true): a ledger without them fails those cases, saying so. Pass false for an engine without them.
   */
  admin?: boolean;
}

/** Thrown when a ledger breaks the contract; the message says which rule. */
export class LedgerContractError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerContractError';
  }
}

function expectEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new LedgerContractError(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function lockOf(result: LedgerLock | 'busy' | 'untracked', what: string): LedgerLock {
  if (typeof result === 'string') throw new LedgerContractError(`${what}: expected a lock, got ${JSON.stringify(result)}`);
  if (typeof result.token !== 'string' || result.token === '') throw new LedgerContractError(`${what}: a lock must carry a token`);
  return result;
}

async function expectRejects(promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expectEqual((error as { code?: unknown }).code, code, `${what}: error code`);
    return;
  }
  throw new LedgerContractError(`${what}: expected a rejection with code ${code}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LONG = { leaseMs: 30_000 };
const HOUR = 60 * 60 * 1000;
// Engines on another machine's clock (a database server) may disagree with ours by a little.
const CLOCK_SLACK_MS = 1_000;
const inAnHour = () => new Date(Date.now() + HOUR);
const past = () => new Date(Date.now() - HOUR);
const observation = (status: string, fingerprint: string, source: ObservationSource = 'webhook', final = false) => ({
  status,
  final,
  fingerprint,
  source,
});
const none = async () => {};

/**
 * The rules every `LedgerEngine` must keep (row per kind and refId, one lock per row, a change
 * recorded with its effect or not at all, due rows claimed once, the shared read budget), as
 * runner-neutral cases.
 * @example
 * for (const c of ledgerContract({ createLedger: () => createMemoryLedger() })) it(c.name, c.run);
 */
export function ledgerContract<Tx>(options: LedgerContractOptions<Tx>): LedgerContractCase[] {
  const run = `ledger-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const kyb = (refId: string): LedgerKey => ({ kind: 'kyb', refId: `${run}-${refId}` });
  const withLedger = (body: (ledger: LedgerEngine<Tx>) => Promise<void>) => async (): Promise<void> => {
    const ledger = await options.createLedger();
    try {
      await body(ledger);
    } finally {
      await options.disposeLedger?.(ledger);
    }
  };
  /** Tracks `key` and records one observation of it through the lock. */
  const observe = async (
    ledger: LedgerEngine<Tx>,
    key: LedgerKey,
    seen: Observation & { source: ObservationSource },
    work: (change: LedgerChange, tx: Tx) => Promise<void> = none,
  ) => {
    await ledger.track(key, { nextCheckAt: inAnHour() });
    const lock = lockOf(await ledger.lock(key, LONG), 'lock');
    return { lock, outcome: await ledger.record(lock, seen, () => inAnHour(), work) };
  };

  const cases: Array<[string, (ledger: LedgerEngine<Tx>) => Promise<void>]> = [
    [
      'track is idempotent: a new row is unobserved, due when asked, and tracking again changes nothing',
      async (ledger) => {
        const key = kyb('track');
        const due = inAnHour();
        expectEqual(await ledger.track(key, { nextCheckAt: due }), 'tracked', 'first track');
        const entry = await ledger.get(key);
        if (entry === undefined) throw new LedgerContractError('get after track: no row');
        expectEqual(entry.version, 0, 'version of a new row');
        expectEqual(entry.status, null, 'status of a new row');
        expectEqual(entry.fingerprint, null, 'fingerprint of a new row');
        expectEqual(entry.final, false, 'final of a new row');
        expectEqual(entry.nextCheckAt?.getTime(), due.getTime(), 'nextCheckAt of a new row');
        if (Math.abs(entry.trackedAt.getTime() - Date.now()) > CLOCK_SLACK_MS + 5_000)
          throw new LedgerContractError(`trackedAt is not now: ${entry.trackedAt.toISOString()}`);
        expectEqual(await ledger.track(key, { nextCheckAt: past() }), 'already-tracked', 'second track');
        expectEqual((await ledger.get(key))?.nextCheckAt?.getTime(), due.getTime(), 'nextCheckAt after a second track');
        expectEqual(await ledger.get(kyb('never-tracked')), undefined, 'get of an untracked key');
      },
    ],
    [
      'a bad key is refused with invalid_argument: unknown kind, empty, oversized or ill-formed refId',
      async (ledger) => {
        const bad = [
          { kind: 'kyx', refId: 'x' },
          { kind: 'kyb', refId: '' },
          { kind: 'kyc', refId: 'x'.repeat(257) },
          { kind: 'kyb', refId: 42 },
          { kind: 'kyb', refId: 'a\uD800' },
        ] as unknown as LedgerKey[];
        for (const key of bad) {
          await expectRejects(ledger.track(key, { nextCheckAt: inAnHour() }), 'invalid_argument', `track ${JSON.stringify(key)}`);
          await expectRejects(ledger.lock(key, LONG), 'invalid_argument', `lock ${JSON.stringify(key)}`);
        }
        expectEqual(await ledger.track({ kind: 'kyc', refId: 'y'.repeat(256) }, { nextCheckAt: inAnHour() }), 'tracked', '256 characters');
      },
    ],
    [
      'refIds are rows of their own, whatever they hold, and kyb and kyc of one refId are two rows',
      async (ledger) => {
        const refIds = ['a', 'a:b', 'a:', ':a', '{a}', 'a}', 'a\u0000b', 'a b', '王芳', 'é', 'e\u0301', '%3A', 'a/b', '*', 'z'.repeat(256)];
        for (const refId of refIds) {
          expectEqual(
            await ledger.track({ kind: 'kyb', refId }, { nextCheckAt: inAnHour() }),
            'tracked',
            `track kyb ${JSON.stringify(refId)}`,
          );
          expectEqual(
            await ledger.track({ kind: 'kyc', refId }, { nextCheckAt: inAnHour() }),
            'tracked',
            `track kyc ${JSON.stringify(refId)}`,
          );
        }
        const lock = lockOf(await ledger.lock({ kind: 'kyb', refId: 'a:b' }, LONG), 'lock a:b');
        await ledger.record(lock, observation('IN_REVIEW', 'f1'), () => inAnHour(), none);
        for (const refId of refIds) {
          const entry = await ledger.get({ kind: 'kyb', refId });
          expectEqual(entry?.refId, refId, `refId read back for ${JSON.stringify(refId)}`);
          expectEqual(entry?.version, refId === 'a:b' ? 1 : 0, `version of kyb ${JSON.stringify(refId)}`);
          expectEqual((await ledger.get({ kind: 'kyc', refId }))?.version, 0, `version of kyc ${JSON.stringify(refId)}`);
        }
        expectEqual((await ledger.stats()).pending, refIds.length * 2, 'pending rows');
      },
    ],
    [
      'one lock per row: untracked, then a lock, then busy until it is released or runs out',
      async (ledger) => {
        const key = kyb('lock');
        expectEqual(await ledger.lock(key, LONG), 'untracked', 'lock before track');
        await ledger.track(key, { nextCheckAt: inAnHour() });
        const first = lockOf(await ledger.lock(key, LONG), 'first lock');
        expectEqual(first.key.refId, key.refId, 'the lock names its refId');
        expectEqual(await ledger.lock(key, LONG), 'busy', 'lock while held');
        expectEqual(await ledger.release(first, { nextCheckAt: inAnHour(), failures: 1 }), 'ok', 'release by the holder');
        expectEqual((await ledger.get(key))?.failures, 1, 'failures stored by release');
        const second = lockOf(await ledger.lock(key, { leaseMs: 100 }), 'lock after release');
        if (second.token === first.token) throw new LedgerContractError('each lock must get its own token');
        await sleep(400);
        const third = lockOf(await ledger.lock(key, LONG), 'lock after the lease ran out');
        expectEqual(
          await ledger.release(second, { nextCheckAt: inAnHour(), failures: 0 }),
          'stale',
          'release by a holder whose lock another took',
        );
        expectEqual(await ledger.lock(key, LONG), 'busy', 'the new holder keeps its lock');
        expectEqual(await ledger.release(third, { nextCheckAt: inAnHour(), failures: 0 }), 'ok', 'release by the new holder');
      },
    ],
    [
      'of two locks taken at once, exactly one is granted',
      async (ledger) => {
        const key = kyb('race');
        await ledger.track(key, { nextCheckAt: inAnHour() });
        const results = await Promise.all(Array.from({ length: 6 }, () => ledger.lock(key, LONG)));
        expectEqual(results.filter((r) => typeof r !== 'string').length, 1, 'locks granted');
        expectEqual(results.filter((r) => r === 'busy').length, 5, 'busy answers');
      },
    ],
    [
      'a first observation is change 1: work is told previous null and runs once; the row stores it and the lock is released',
      async (ledger) => {
        const key = kyb('first');
        await ledger.track(key, { nextCheckAt: inAnHour() });
        const lock = lockOf(await ledger.lock(key, LONG), 'lock');
        const next = new Date(Date.now() + 5 * 60_000);
        const changes: LedgerChange[] = [];
        let askedChanged: boolean | undefined;
        const outcome = await ledger.record(
          lock,
          observation('IN_REVIEW', 'fp-1', 'reconcile'),
          (changed) => {
            askedChanged = changed;
            return next;
          },
          async (change) => {
            changes.push(change);
          },
        );
        expectEqual(outcome, 'changed', 'record');
        expectEqual(askedChanged, true, 'next() told it changed');
        expectEqual(changes.length, 1, 'work runs');
        const [change] = changes as [LedgerChange];
        expectEqual(change.previous, null, 'previous');
        expectEqual(change.current, 'IN_REVIEW', 'current');
        expectEqual(change.version, 1, 'version');
        expectEqual(change.source, 'reconcile', 'source');
        expectEqual(change.kind, 'kyb', 'kind');
        expectEqual(change.refId, key.refId, 'refId');
        const entry = await ledger.get(key);
        expectEqual(entry?.version, 1, 'stored version');
        expectEqual(entry?.status, 'IN_REVIEW', 'stored status');
        expectEqual(entry?.fingerprint, 'fp-1', 'stored fingerprint');
        expectEqual(entry?.source, 'reconcile', 'stored source');
        expectEqual(entry?.observedAt?.getTime(), lock.lockedAt.getTime(), 'observedAt is when the lock (and the fetch) started');
        expectEqual(entry?.nextCheckAt?.getTime(), next.getTime(), 'nextCheckAt from next()');
        lockOf(await ledger.lock(key, LONG), 'lock after record');
      },
    ],
    [
      'the same fingerprint again is no change: nothing runs, the version stays, the time and source move',
      async (ledger) => {
        const key = kyb('same');
        await observe(ledger, key, observation('IN_PROGRESS', 'fp-a', 'webhook'));
        const lock = lockOf(await ledger.lock(key, LONG), 'second lock');
        let ran = false;
        let askedChanged: boolean | undefined;
        const outcome = await ledger.record(
          lock,
          observation('IN_PROGRESS', 'fp-a', 'reconcile'),
          (changed) => {
            askedChanged = changed;
            return null;
          },
          async () => {
            ran = true;
          },
        );
        expectEqual(outcome, 'unchanged', 'record');
        expectEqual(ran, false, 'work for no change');
        expectEqual(askedChanged, false, 'next() told it did not change');
        const entry = await ledger.get(key);
        expectEqual(entry?.version, 1, 'version');
        expectEqual(entry?.source, 'reconcile', 'source');
        expectEqual(entry?.nextCheckAt, null, 'nextCheckAt null: never again');
      },
    ],
    [
      'changes count up one by one, each told the status before it, and a final status is kept as final',
      async (ledger) => {
        const key = kyb('versions');
        const seen: Array<[number, string | null, string]> = [];
        const statuses = ['NOT_STARTED', 'IN_PROGRESS', 'IN_REVIEW', 'COMPLETED', 'IN_PROGRESS', 'REJECTED'];
        for (const [i, status] of statuses.entries()) {
          const { outcome } = await observe(
            ledger,
            key,
            observation(status, `fp-${i}`, 'webhook', status === 'COMPLETED' || status === 'REJECTED'),
            async (c) => {
              seen.push([c.version, c.previous, c.current]);
            },
          );
          expectEqual(outcome, 'changed', `record ${status}`);
        }
        expectEqual(JSON.stringify(seen.map(([v]) => v)), JSON.stringify([1, 2, 3, 4, 5, 6]), 'versions');
        expectEqual(JSON.stringify(seen.map(([, p]) => p)), JSON.stringify([null, ...statuses.slice(0, -1)]), 'previous statuses');
        const entry = await ledger.get(key);
        expectEqual(entry?.final, true, 'final');
        const stats = await ledger.stats();
        expectEqual(stats.final, 1, 'final rows');
        expectEqual(stats.pending, 0, 'pending rows');
      },
    ],
    [
      'a throw from work records nothing and the caller still holds the lock',
      async (ledger) => {
        const key = kyb('throw');
        await ledger.track(key, { nextCheckAt: inAnHour() });
        const lock = lockOf(await ledger.lock(key, LONG), 'lock');
        const boom = new Error('onChange failed');
        let thrown: unknown;
        try {
          await ledger.record(
            lock,
            observation('COMPLETED', 'fp-x', 'webhook', true),
            () => null,
            async () => {
              throw boom;
            },
          );
        } catch (error) {
          thrown = error;
        }
        expectEqual(thrown, boom, 'record rethrows what work threw');
        const entry = await ledger.get(key);
        expectEqual(entry?.version, 0, 'version after a throw');
        expectEqual(entry?.status, null, 'status after a throw');
        expectEqual(await ledger.lock(key, LONG), 'busy', 'the lock is still held');
        expectEqual(await ledger.release(lock, { nextCheckAt: past(), failures: 1 }), 'ok', 'release after a throw');
      },
    ],
    [
      'a lock another holder took records nothing and runs nothing (stale); a lock that ran out with nobody taking it still records',
      async (ledger) => {
        const key = kyb('stale');
        await ledger.track(key, { nextCheckAt: inAnHour() });
        const old = lockOf(await ledger.lock(key, { leaseMs: 100 }), 'first lock');
        await sleep(400);
        const current = lockOf(await ledger.lock(key, LONG), 'second lock');
        let ran = false;
        const work = async () => {
          ran = true;
        };
        expectEqual(await ledger.record(old, observation('IN_REVIEW', 'old'), () => null, work), 'stale', 'record by the old holder');
        expectEqual(ran, false, 'work of a stale record');
        expectEqual((await ledger.get(key))?.version, 0, 'version after a stale record');
        expectEqual(await ledger.record(current, observation('COMPLETED', 'new'), () => null, work), 'changed', 'record by the holder');
        const lapsed = lockOf(await ledger.lock(key, { leaseMs: 100 }), 'third lock');
        await sleep(400);
        expectEqual(
          await ledger.record(lapsed, observation('REJECTED', 'newer'), () => null, none),
          'changed',
          'record by a holder whose lease ran out unclaimed',
        );
        expectEqual((await ledger.get(key))?.version, 2, 'version');
      },
    ],
    [
      'forget removes a row never observed, and only such a row',
      async (ledger) => {
        const unobserved = kyb('forget-1');
        const observed = kyb('forget-2');
        await ledger.track(unobserved, { nextCheckAt: inAnHour() });
        await observe(ledger, observed, observation('NOT_STARTED', 'f'));
        expectEqual(await ledger.forget(unobserved), true, 'forget an unobserved row');
        expectEqual(await ledger.get(unobserved), undefined, 'the row is gone');
        expectEqual(await ledger.forget(observed), false, 'forget an observed row');
        expectEqual((await ledger.get(observed))?.version, 1, 'the observed row stays');
        expectEqual(await ledger.forget(kyb('forget-3')), false, 'forget an absent row');
      },
    ],
    [
      'claimDue locks due rows, soonest first, at most limit; never a row not due, locked or never due',
      async (ledger) => {
        const now = Date.now();
        for (let i = 0; i < 5; i++) await ledger.track(kyb(`due-${i}`), { nextCheckAt: new Date(now - (i + 1) * 60_000) });
        await ledger.track(kyb('later'), { nextCheckAt: inAnHour() });
        await observe(ledger, kyb('never'), observation('COMPLETED', 'f', 'webhook', true));
        const never = lockOf(await ledger.lock(kyb('never'), LONG), 'lock never');
        await ledger.record(never, observation('COMPLETED', 'f', 'reconcile', true), () => null, none);
        const held = lockOf(await ledger.lock(kyb('due-4'), LONG), 'lock due-4');
        const first = await ledger.claimDue({ limit: 3, leaseMs: 30_000 });
        expectEqual(
          JSON.stringify(first.map((l) => l.key.refId)),
          JSON.stringify([3, 2, 1].map((i) => kyb(`due-${i}`).refId)),
          'first claim',
        );
        const second = await ledger.claimDue({ limit: 10, leaseMs: 30_000 });
        expectEqual(JSON.stringify(second.map((l) => l.key.refId)), JSON.stringify([kyb('due-0').refId]), 'second claim');
        expectEqual((await ledger.claimDue({ limit: 10, leaseMs: 30_000 })).length, 0, 'third claim');
        expectEqual(await ledger.lock(kyb('due-3'), LONG), 'busy', 'a claimed row is locked');
        for (const lock of first)
          expectEqual(await ledger.release(lock, { nextCheckAt: past(), failures: 0 }), 'ok', 'release a claimed row');
        expectEqual((await ledger.claimDue({ limit: 10, leaseMs: 30_000 })).length, 3, 'released rows are due again');
        await ledger.release(held, { nextCheckAt: past(), failures: 0 });
      },
    ],
    [
      'claims made at once never hand out one row twice',
      async (ledger) => {
        for (let i = 0; i < 40; i++) await ledger.track(kyb(`p-${i}`), { nextCheckAt: past() });
        const claims = await Promise.all(Array.from({ length: 4 }, () => ledger.claimDue({ limit: 15, leaseMs: 30_000 })));
        const refIds = claims.flat().map((l) => l.key.refId);
        expectEqual(new Set(refIds).size, refIds.length, 'distinct rows');
        expectEqual(refIds.length, 40, 'rows claimed');
      },
    ],
    [
      'reads are spaced by the interval across callers, and a pause holds them back',
      async (ledger) => {
        const interval = 200;
        const waits = await Promise.all(Array.from({ length: 4 }, () => ledger.reserveRead({ intervalMs: interval })));
        const slots = waits.sort((a, b) => a - b);
        if ((slots[0] as number) > 50) throw new LedgerContractError(`the first read of an idle budget waits ${slots[0]} ms`);
        for (let i = 1; i < slots.length; i++) {
          const gap = (slots[i] as number) - (slots[i - 1] as number);
          if (gap < interval - 50) throw new LedgerContractError(`reads ${gap} ms apart; the interval is ${interval} ms`);
        }
        await ledger.pauseReads(3_000);
        const after = await ledger.reserveRead({ intervalMs: interval });
        if (after < 2_500) throw new LedgerContractError(`a read after a 3 s pause waits only ${after} ms`);
      },
    ],
    [
      'list and stats: pending and final rows, by kind; the last webhook observation is remembered',
      async (ledger) => {
        expectEqual((await ledger.stats()).lastWebhookAt, null, 'lastWebhookAt of an empty ledger');
        await ledger.track({ kind: 'kyc', refId: `${run}-c1` }, { nextCheckAt: past() });
        await observe(ledger, kyb('l1'), observation('IN_PROGRESS', 'a', 'reconcile'));
        await observe(ledger, kyb('l2'), observation('COMPLETED', 'b', 'webhook', true));
        const stats = await ledger.stats();
        expectEqual(stats.pending, 2, 'pending');
        expectEqual(stats.final, 1, 'final');
        expectEqual(stats.pendingByKind.kyb.pending, 1, 'pending KYB');
        expectEqual(stats.pendingByKind.kyc.pending, 1, 'pending KYC');
        for (const kind of ['kyb', 'kyc'] as const) {
          const oldest = stats.pendingByKind[kind].oldestTrackedAt;
          if (oldest === null || Math.abs(oldest.getTime() - Date.now()) > CLOCK_SLACK_MS + 5_000)
            throw new LedgerContractError(`the oldest pending ${kind} row's trackedAt is not about now: ${oldest?.toISOString()}`);
        }
        if (stats.lastWebhookAt === null || Math.abs(stats.lastWebhookAt.getTime() - Date.now()) > CLOCK_SLACK_MS + 5_000)
          throw new LedgerContractError(`lastWebhookAt is not about now: ${stats.lastWebhookAt?.toISOString()}`);
        expectEqual((await ledger.list()).length, 3, 'list');
        expectEqual((await ledger.list({ pending: true })).length, 2, 'list pending');
        expectEqual((await ledger.list({ kind: 'kyc' }))[0]?.refId, `${run}-c1`, 'list kyc');
        expectEqual((await ledger.list({ limit: 1 })).length, 1, 'list with a limit');
        expectEqual((await ledger.list())[0]?.refId, `${run}-c1`, 'soonest due first');
      },
    ],
  ];

  if (options.admin !== false) {
    /** The ledger's LedgerAdmin side, or a contract error naming what is missing. */
    const adminOf = (ledger: LedgerEngine<Tx>): LedgerAdmin => {
      const admin = ledger as LedgerEngine<Tx> & Partial<LedgerAdmin>;
      if (typeof admin.erase !== 'function' || typeof admin.checkSoon !== 'function')
        throw new LedgerContractError('the ledger has no erase and checkSoon (LedgerAdmin): implement them, or pass admin: false');
      return admin as LedgerAdmin;
    };
    const soon = (date: Date | null | undefined) => date != null && Math.abs(date.getTime() - Date.now()) <= CLOCK_SLACK_MS + 5_000;
    cases.push(
      [
        'LedgerAdmin erase removes the row, observed or not, and only it; false when there is none; tracked again, it starts over',
        async (ledger) => {
          const admin = adminOf(ledger);
          const observed = kyb('erase-observed');
          const unobserved = kyb('erase-unobserved');
          const otherKind: LedgerKey = { kind: 'kyc', refId: observed.refId };
          await observe(ledger, observed, observation('COMPLETED', 'f', 'webhook', true));
          await ledger.track(unobserved, { nextCheckAt: inAnHour() });
          await ledger.track(otherKind, { nextCheckAt: inAnHour() });
          expectEqual(await admin.erase(observed), true, 'erase an observed row');
          expectEqual(await ledger.get(observed), undefined, 'the erased row');
          expectEqual(await admin.erase(observed), false, 'erase it again');
          expectEqual(await admin.erase(kyb('erase-never')), false, 'erase an untracked row');
          expectEqual((await ledger.get(otherKind))?.refId, observed.refId, 'the other kind of the same refId stays');
          expectEqual(await admin.erase(unobserved), true, 'erase an unobserved row');
          const stats = await ledger.stats();
          expectEqual(stats.final, 0, 'final rows after erasing the final one');
          expectEqual(stats.pending, 1, 'pending rows');
          expectEqual(
            JSON.stringify((await ledger.list()).map((e) => e.refId)),
            JSON.stringify([observed.refId]),
            'list: the kyc row only',
          );
          expectEqual(await ledger.track(observed, { nextCheckAt: inAnHour() }), 'tracked', 'track after erase');
          expectEqual((await ledger.get(observed))?.version, 0, 'version of the row tracked again');
          await expectRejects(admin.erase({ kind: 'kyx', refId: 'a' } as unknown as LedgerKey), 'invalid_argument', 'erase a bad key');
        },
      ],
      [
        "LedgerAdmin erase of a locked row: the holder's record and release are stale, and the row does not come back",
        async (ledger) => {
          const admin = adminOf(ledger);
          const key = kyb('erase-locked');
          await observe(ledger, key, observation('IN_REVIEW', 'f1'));
          const lock = lockOf(await ledger.lock(key, LONG), 'lock');
          expectEqual(await admin.erase(key), true, 'erase a locked row');
          const outcome = await ledger.record(lock, observation('COMPLETED', 'f2', 'reconcile', true), () => null, none);
          expectEqual(outcome, 'stale', 'record by the holder of an erased row');
          expectEqual(await ledger.get(key), undefined, 'the erased row after the record');
          expectEqual(await ledger.release(lock, { nextCheckAt: past(), failures: 0 }), 'stale', 'release of an erased row');
          expectEqual(await ledger.get(key), undefined, 'the erased row after the release');
        },
      ],
      [
        'LedgerAdmin checkSoon makes a tracked row due now, a final row never due again included; false for an untracked one',
        async (ledger) => {
          const admin = adminOf(ledger);
          const later = kyb('soon-later');
          const final = kyb('soon-final');
          await ledger.track(later, { nextCheckAt: inAnHour() });
          await observe(ledger, final, observation('COMPLETED', 'f', 'webhook', true));
          const never = lockOf(await ledger.lock(final, LONG), 'lock the final row');
          await ledger.record(never, observation('COMPLETED', 'f', 'reconcile', true), () => null, none);
          expectEqual((await ledger.get(final))?.nextCheckAt, null, 'the final row is never due');
          expectEqual((await ledger.claimDue({ limit: 10, leaseMs: 30_000 })).length, 0, 'nothing due before');

          expectEqual(await admin.checkSoon(later), true, 'checkSoon a row due later');
          expectEqual(await admin.checkSoon(final), true, 'checkSoon a final row');
          expectEqual(await admin.checkSoon(kyb('soon-never')), false, 'checkSoon an untracked row');
          for (const key of [later, final])
            if (!soon((await ledger.get(key))?.nextCheckAt))
              throw new LedgerContractError(`checkSoon did not make ${key.refId} due about now: ${(await ledger.get(key))?.nextCheckAt}`);
          const claimed = await ledger.claimDue({ limit: 10, leaseMs: 30_000 });
          expectEqual(JSON.stringify(claimed.map((l) => l.key.refId).sort()), JSON.stringify([final.refId, later.refId].sort()), 'claimed');
          expectEqual(await admin.checkSoon(later), true, 'checkSoon a claimed row');
          expectEqual((await ledger.claimDue({ limit: 10, leaseMs: 30_000 })).length, 0, 'a locked row is not handed out again');
          expectEqual((await ledger.get(final))?.version, 1, 'checkSoon changes no observation');
          await expectRejects(admin.checkSoon({ kind: 'kyb', refId: '' }), 'invalid_argument', 'checkSoon a bad key');
        },
      ],
    );
  }

  const effects = options.effects;
  if (effects !== undefined) {
    cases.push(
      [
        "a change's effect through ctx.sql is committed with it, once",
        async (ledger) => {
          const tag = `${run}-effect-1`;
          await observe(ledger, kyb('e1'), observation('COMPLETED', 'f'), async (_change, tx) => {
            await effects.write(tx, tag);
          });
          expectEqual(await effects.count(tag), 1, 'effects after a change');
          await observe(ledger, kyb('e1'), observation('COMPLETED', 'f'), async (_change, tx) => {
            await effects.write(tx, tag);
          });
          expectEqual(await effects.count(tag), 1, 'effects after the same result again');
        },
      ],
      [
        'an effect written before work threw, or under a stale lock, is not committed',
        async (ledger) => {
          const thrownTag = `${run}-effect-throw`;
          const key = kyb('e2');
          await ledger.track(key, { nextCheckAt: inAnHour() });
          const lock = lockOf(await ledger.lock(key, LONG), 'lock');
          await ledger
            .record(
              lock,
              observation('COMPLETED', 'f'),
              () => null,
              async (_change, tx) => {
                await effects.write(tx, thrownTag);
                throw new Error('after the write');
              },
            )
            .catch(() => {});
          expectEqual(await effects.count(thrownTag), 0, 'effects after a throw');
          await ledger.release(lock, { nextCheckAt: past(), failures: 1 });
          const staleTag = `${run}-effect-stale`;
          const old = lockOf(await ledger.lock(key, { leaseMs: 100 }), 'lock');
          await sleep(400);
          const current = lockOf(await ledger.lock(key, LONG), 'lock');
          await ledger.record(
            old,
            observation('COMPLETED', 'g'),
            () => null,
            async (_change, tx) => {
              await effects.write(tx, staleTag);
            },
          );
          expectEqual(await effects.count(staleTag), 0, 'effects of a stale record');
          await ledger.release(current, { nextCheckAt: past(), failures: 0 });
        },
      ],
    );
  }
  return cases.map(([name, body]) => ({ name, run: withLedger(body) }));
}
