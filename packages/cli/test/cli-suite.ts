import { createClient, createReconciler, type EncryptionOptions, type EventKind, type InboxEngine, type LedgerKey } from '@verikit/core';
import { createFakeService } from '@verikit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../src/index.js';
import type { AppLedger, EngineFixture, Namespace } from './engines.js';
import { runCli, runJson, startCli } from './run-cli.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const base64Key = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
/** `VERIKIT_ENCRYPTION_KEYS` for these `[id, base64]` pairs, the current first. */
const keysVariable = (...keys: Array<[string, string]>) => keys.map(([id, key]) => `${id}:${key}`).join(',');
const encryption = (...keys: Array<[string, string]>): EncryptionOptions => ({ keys: keys.map(([id, key]) => ({ id, key })) });

/** Personal data a body carries: a scan that finds it finds the person. */
const CANARY_NAME = 'Zoë Canary-Ångström';
const CANARY_ADDRESS = '12 Rue des Mésanges, 75011 Paris';

/** A webhook body about `refId`, as the service would send it, with personal fields. */
const bodyAbout = (kind: EventKind, refId: string, n = 0) =>
  JSON.stringify({
    type: kind === 'kyb' ? 'kyb.case.status_changed' : 'kyc.session.status_changed',
    data: { refId, status: 'IN_REVIEW', person: { name: CANARY_NAME, address: `${CANARY_ADDRESS} #${n}` } },
  });

const delivery = (id: string, body: string) => ({ id, timestamp: Math.floor(Date.now() / 1000), body });

/** Leases exactly `ids` (due now), whatever order the engine hands them out in. */
async function leaseAll(inbox: InboxEngine, ids: string[]) {
  const leased = new Map<string, Awaited<ReturnType<InboxEngine['lease']>>[number]>();
  // An owner per lease call, as the worker does: an engine may tell an owner's leases apart by it.
  for (let round = 0; leased.size < ids.length && round < 50; round++)
    for (const event of await inbox.lease(`test-owner-${round}`, Math.min(500, ids.length - leased.size), 120_000))
      leased.set(event.id, event);
  expect([...leased.keys()].sort()).toEqual([...ids].sort());
  return leased;
}

/** Accepts `ids` and takes them to `state` (dead: out of attempts; done; retrying: a failed attempt, due in a minute). */
export async function seed(
  inbox: InboxEngine,
  ids: string[],
  state: 'pending' | 'dead' | 'done' | 'retrying',
  body = (id: string) => bodyAbout('kyb', `biz-${id}`),
) {
  for (const id of ids) await inbox.accept(delivery(id, body(id)));
  if (state === 'pending') return;
  for (const event of (await leaseAll(inbox, ids)).values()) {
    const failure = {
      error: state === 'dead' ? 'Error: downstream refused' : 'Error: try later',
      retryInMs: state === 'dead' ? null : 60_000,
    };
    expect(state === 'done' ? await inbox.complete(event, async () => {}) : await inbox.fail(event, failure)).toBe('ok');
  }
}

/** Dead letters received before a time (`before`) and after it (`after`): answers the time, apart from both on any clock. */
async function deadAroundACut(inbox: InboxEngine, before: string[], after: string[]): Promise<Date> {
  await seed(inbox, before, 'dead');
  await sleep(50);
  const cut = new Date();
  await sleep(50);
  await seed(inbox, after, 'dead');
  return cut;
}

/** Records an observation of `key` as the app's observers would (lock, then record), for a ledger row with a status. */
async function observed(ledger: AppLedger, key: LedgerKey, status: string, final: boolean, source: 'webhook' | 'reconcile') {
  const lock = await ledger.lock(key, { leaseMs: 30_000 });
  if (typeof lock !== 'object') throw new Error(`could not lock ${key.refId}: ${lock}`);
  await ledger.record(
    lock,
    { status, final, fingerprint: `${status}-fp`, source },
    () => (final ? null : new Date(Date.now() + 3_600_000)),
    async () => {},
  );
}

const inAnHour = () => ({ nextCheckAt: new Date(Date.now() + 3_600_000) });

/**
 * Every `verikit` command end to end on one engine: the real bin as a child process against the real
 * server, data written by the engine as an app writes it, each command in human and `--json` form.
 */
export function cliSuite(fixture: EngineFixture, cliConnections: () => Promise<number>): void {
  afterAll(() => fixture.close());
  const cli = (ns: Namespace, args: string[], env: Record<string, string> = {}) => runCli([...args, ...ns.args], env);
  const cliJson = <T = Record<string, unknown>>(ns: Namespace, args: string[], env: Record<string, string> = {}) =>
    runJson<T>([...args, ...ns.args], env);
  /** Every connection the CLI opened is gone (the server may take a moment to drop a closed one from its list). */
  const expectNoConnectionLeft = async () => {
    for (let i = 0; (await cliConnections()) > 0; i++) {
      if (i > 100) throw new Error('a connection of the CLI is still open after it exited');
      await sleep(50);
    }
  };

  describe('inbox', () => {
    it('stats: pending, retrying, dead and the oldest pending, human and --json', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      await seed(inbox, ['msg_d1', 'msg_d2', 'msg_d3'], 'dead');
      await seed(inbox, ['msg_r1'], 'retrying');
      await seed(inbox, ['msg_p1'], 'pending');
      const stats = await cliJson(ns, ['inbox', 'stats']);
      expect(stats).toEqual({
        pending: 2,
        retrying: 1,
        dead: 3,
        oldestPendingAt: expect.any(String),
        oldestPendingAgeMs: expect.any(Number),
      });
      expect(Date.parse(stats.oldestPendingAt as string)).toBeGreaterThan(Date.now() - 600_000);
      const human = await cli(ns, ['inbox', 'stats']);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^pending +2\n {2}retrying +1\ndead +3\noldest pending +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(waiting \d/);
      expect(human.stderr).toBe('');
    });

    it('stats of an empty inbox, and dead with none', async () => {
      const ns = await fixture.fresh();
      expect(await cliJson(ns, ['inbox', 'stats'])).toEqual({
        pending: 0,
        retrying: 0,
        dead: 0,
        oldestPendingAt: null,
        oldestPendingAgeMs: null,
      });
      expect((await cli(ns, ['inbox', 'stats'])).stdout).toMatch(/oldest pending +-\n/);
      expect(await cliJson(ns, ['inbox', 'dead'])).toEqual({ deadLetters: [], next: null });
      expect((await cli(ns, ['inbox', 'dead'])).stdout).toBe('no dead letters\n');
    });

    it('dead: oldest first, a page at a time (--limit, --after), --since, human and --json', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      const ids = ['msg_a', 'msg_b', 'msg_c', 'msg_d', 'msg_e'];
      for (const id of ids) {
        await seed(inbox, [id], 'dead');
        await sleep(15); // received in this order on any clock
      }
      type Page = { deadLetters: Array<{ id: string; attempts: number; lastError: string; receivedAt: string }>; next: string | null };
      const first = await cliJson<Page>(ns, ['inbox', 'dead', '--limit', '2']);
      expect(first.deadLetters.map((d) => d.id)).toEqual(['msg_a', 'msg_b']);
      expect(first.deadLetters[0]).toEqual({
        id: 'msg_a',
        attempts: 1,
        lastError: 'Error: downstream refused',
        receivedAt: expect.any(String),
      });
      expect(first.next).toBe('msg_b');
      const second = await cliJson<Page>(ns, ['inbox', 'dead', '--limit', '2', '--after', 'msg_b']);
      expect(second).toMatchObject({ deadLetters: [{ id: 'msg_c' }, { id: 'msg_d' }], next: 'msg_d' });
      const last = await cliJson<Page>(ns, ['inbox', 'dead', '--limit', '2', '--after', 'msg_d']);
      expect(last).toMatchObject({ deadLetters: [{ id: 'msg_e' }], next: null });
      const since = await cliJson<Page>(ns, ['inbox', 'dead', '--since', second.deadLetters[1]?.receivedAt as string]);
      expect(since.deadLetters.map((d) => d.id)).toEqual(['msg_d', 'msg_e']);

      const human = await cli(ns, ['inbox', 'dead', '--limit', '3']);
      expect(human.code).toBe(0);
      const lines = human.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID +ATTEMPTS +RECEIVED +LAST ERROR$/);
      expect(lines.slice(1, 4).map((line) => line.split(/ +/)[0])).toEqual(['msg_a', 'msg_b', 'msg_c']);
      expect(lines[1]).toMatch(/^msg_a +1 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(.+ ago\) +Error: downstream refused$/);
      expect(lines[4]).toBe('more: --after msg_c');
    });

    it('show: state, attempts, last error and times, the body only with --payload; an unknown id is exit 3', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      const body = bodyAbout('kyb', 'biz-show');
      await seed(inbox, ['msg_show'], 'dead', () => body);

      const human = await cli(ns, ['inbox', 'show', 'msg_show']);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(
        /^id +msg_show\nstate +dead\nattempts +1\nlast error +Error: downstream refused\nreceived +\d{4}.+ ago\)\nfinished +\d{4}.+ ago\)\npayload +kept \(print it with --payload\)\n$/,
      );
      expect(human.stdout).not.toContain(CANARY_NAME);
      const record = await cliJson(ns, ['inbox', 'show', 'msg_show']);
      expect(record).toEqual({
        id: 'msg_show',
        state: 'dead',
        attempts: 1,
        lastError: 'Error: downstream refused',
        receivedAt: expect.any(String),
        finishedAt: expect.any(String),
        payload: 'kept',
      });

      const withBody = await cli(ns, ['inbox', 'show', 'msg_show', '--payload']);
      expect(withBody.code).toBe(0);
      expect(withBody.stdout).toMatch(/payload +kept, below\n\n/);
      expect(withBody.stdout.endsWith(`\n\n${body}\n`)).toBe(true);
      expect(await cliJson(ns, ['inbox', 'show', 'msg_show', '--payload'])).toMatchObject({ payload: 'kept', body });

      const unknown = await cli(ns, ['inbox', 'show', 'msg_nope']);
      expect(unknown.code).toBe(ExitCode.notFound);
      expect(unknown.stderr).toMatch(/^verikit: no event "msg_nope" in /);
      expect(unknown.stderr).toMatch(fixture.where);
      expect(unknown.stdout).toBe('');
    });

    it('replay ID: queued again with fresh attempts; a second replay or an unknown id is exit 3, naming its state; --dry-run changes nothing', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      await seed(inbox, ['msg_one', 'msg_two'], 'dead');

      expect(await cliJson(ns, ['inbox', 'replay', 'msg_two', '--dry-run'])).toEqual({ dryRun: true, id: 'msg_two', replayed: false });
      expect((await inbox.get('msg_two'))?.state).toBe('dead');
      const human = await cli(ns, ['inbox', 'replay', 'msg_one']);
      expect(human).toMatchObject({ code: 0, stdout: 'replayed msg_one: queued again with fresh attempts\n', stderr: '' });
      expect(await inbox.get('msg_one')).toMatchObject({ state: 'pending', attempts: 0 });
      expect(await cliJson(ns, ['inbox', 'replay', 'msg_two'])).toEqual({ dryRun: false, id: 'msg_two', replayed: true });

      const again = await cli(ns, ['inbox', 'replay', 'msg_one']);
      expect(again.code).toBe(ExitCode.notFound);
      expect(again.stderr).toBe('verikit: "msg_one" is pending, not a dead letter: nothing to replay\n');
      const unknown = await cli(ns, ['inbox', 'replay', 'msg_nope', '--json']);
      expect(unknown.code).toBe(ExitCode.notFound);
      expect(JSON.parse(unknown.stderr)).toMatchObject({
        error: { reason: 'notFound', exitCode: 3, message: expect.stringMatching(/^no dead letter "msg_nope" in /) },
      });
    });

    it('replay --all-dead over a thousand dead letters: --dry-run replays nothing, then every one once, with a progress line when asked', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      const ids = Array.from({ length: 1_000 }, (_, i) => `msg_bulk_${String(i).padStart(4, '0')}`);
      await seed(inbox, ids, 'dead');

      const dry = await cliJson<{ dryRun: boolean; total: number; ids: string[] }>(ns, ['inbox', 'replay', '--all-dead', '--dry-run']);
      expect(dry.dryRun).toBe(true);
      expect(dry.total).toBe(1_000);
      expect([...dry.ids].sort()).toEqual(ids);
      const dryHuman = await cli(ns, ['inbox', 'replay', '--all-dead', '--dry-run']);
      expect(dryHuman.code).toBe(0);
      expect(dryHuman.stdout).toMatch(/^would replay 1000 dead letters:\nID +RECEIVED\n(msg_bulk_\d{4} +\S+Z\n){20}\.\.\. and 980 more\n$/);
      // stderr is no terminal here, and no --progress was given: no progress line.
      expect(dryHuman.stderr).toBe('');
      expect((await inbox.stats()).dead).toBe(1_000);

      const run = await cli(ns, ['inbox', 'replay', '--all-dead', '--progress']);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe('replayed 1000 dead letters\n');
      expect(run.stderr).toMatch(/^finding dead letters: \d+\n/);
      expect(run.stderr).toContain('finding dead letters: 1000\n');
      expect(run.stderr).toMatch(/replaying dead letters: 1000\/1000\n$/);
      expect(await inbox.stats()).toMatchObject({ dead: 0, pending: 1_000 });

      expect(await cliJson(ns, ['inbox', 'replay', '--all-dead'])).toEqual({ dryRun: false, total: 0, replayed: 0, skipped: 0 });
      await expectNoConnectionLeft();
    });

    it('replay --all-dead --since: only the dead letters received since then', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      const outageBegan = await deadAroundACut(inbox, ['msg_before_1', 'msg_before_2'], ['msg_after_1']);
      expect(await cliJson(ns, ['inbox', 'replay', '--all-dead', '--since', outageBegan.toISOString()])).toEqual({
        dryRun: false,
        total: 1,
        replayed: 1,
        skipped: 0,
      });
      expect((await inbox.get('msg_after_1'))?.state).toBe('pending');
      expect((await inbox.get('msg_before_1'))?.state).toBe('dead');
    });

    it('purge-dead --before: those received before lose their body and stay as done ids, human and --json', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox();
      const cut = await deadAroundACut(inbox, ['msg_old_1', 'msg_old_2'], ['msg_new']);
      expect(await cliJson(ns, ['inbox', 'purge-dead', '--before', cut.toISOString()])).toEqual({ purged: 2, before: cut.toISOString() });
      expect(await inbox.get('msg_old_1')).toMatchObject({ state: 'done', payload: 'removed' });
      expect((await inbox.get('msg_new'))?.state).toBe('dead');
      const shown = await cli(ns, ['inbox', 'show', 'msg_old_2']);
      expect(shown.stdout).toMatch(/payload +removed \(payload retention or an erasure; the id stays for dedupe\)/);
      const human = await cli(ns, ['inbox', 'purge-dead', '--before', '1d']);
      expect(human).toMatchObject({ code: 0, stdout: expect.stringMatching(/^purged 0 dead letters received before \d{4}-.+Z\n$/) });
    });
  });

  describe('ledger', () => {
    it('list and stats, human and --json; --pending and --kind filter', async () => {
      const ns = await fixture.fresh();
      const ledger = ns.ledger();
      await ledger.track({ kind: 'kyb', refId: 'biz-list' }, inAnHour());
      await ledger.track({ kind: 'kyc', refId: 'user-list' }, inAnHour());
      await ledger.track({ kind: 'kyb', refId: 'biz-done' }, inAnHour());
      await observed(ledger, { kind: 'kyb', refId: 'biz-done' }, 'COMPLETED', true, 'webhook');

      type Entries = { entries: Array<Record<string, unknown>> };
      const all = await cliJson<Entries>(ns, ['ledger', 'list']);
      expect(all.entries.map((e) => e.refId).sort()).toEqual(['biz-done', 'biz-list', 'user-list']);
      expect(all.entries.find((e) => e.refId === 'biz-done')).toEqual({
        kind: 'kyb',
        refId: 'biz-done',
        status: 'COMPLETED',
        final: true,
        fingerprint: 'COMPLETED-fp',
        version: 1,
        observedAt: expect.any(String),
        source: 'webhook',
        trackedAt: expect.any(String),
        nextCheckAt: null,
        failures: 0,
      });
      expect((await cliJson<Entries>(ns, ['ledger', 'list', '--pending'])).entries.map((e) => e.refId).sort()).toEqual([
        'biz-list',
        'user-list',
      ]);
      expect((await cliJson<Entries>(ns, ['ledger', 'list', '--kind', 'kyc'])).entries.map((e) => e.refId)).toEqual(['user-list']);
      expect((await cliJson<Entries>(ns, ['ledger', 'list', '--limit', '1'])).entries).toHaveLength(1);

      const table = await cli(ns, ['ledger', 'list', '--pending', '--kind', 'kyb']);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(
        /^KIND +REF ID +STATUS +FINAL +VERSION +OBSERVED +SOURCE +NEXT CHECK\nkyb +biz-list +- +no +0 +- +- +\d{4}-\S+Z\n$/,
      );

      expect(await cliJson(ns, ['ledger', 'stats'])).toEqual({
        pending: 2,
        pendingByKind: {
          kyb: { pending: 1, oldestTrackedAt: expect.any(String) },
          kyc: { pending: 1, oldestTrackedAt: expect.any(String) },
        },
        final: 1,
        lastWebhookAt: expect.any(String),
      });
      const stats = await cli(ns, ['ledger', 'stats']);
      expect(stats.stdout).toMatch(
        /^pending +2\n {2}kyb +1, oldest tracked \d{4}-.+ ago\)\n {2}kyc +1, oldest tracked .+\nfinal +1\nlast webhook +\d{4}-.+ ago\)\n$/,
      );
    });

    it("check: the app's running reconciler observes it within the budget and runs onChange once per change; the CLI records nothing itself", async () => {
      const ns = await fixture.fresh();
      const ledger = ns.ledger();
      const fake = await createFakeService();
      const client = createClient({ ...fake.clientOptions, maxRetries: 0, logger: false });
      const changes: string[] = [];
      const reconciler = createReconciler({
        ledger,
        client,
        readsPerMinute: 600,
        pollIntervalMs: 50,
        logger: false,
        onChange: (ctx) => {
          changes.push(`${ctx.refId} v${ctx.version}: ${ctx.previous} -> ${ctx.current} (${ctx.source})`);
        },
      });
      try {
        await client.kyb.createCase({ refId: 'biz-check' });
        // Not due for an hour: only the CLI's check makes the reconciler look at it.
        await ledger.track({ kind: 'kyb', refId: 'biz-check' }, inAnHour());
        reconciler.start();

        const first = await cliJson(ns, ['ledger', 'check', 'kyb', 'biz-check']);
        expect(first).toMatchObject({
          kind: 'kyb',
          refId: 'biz-check',
          scheduled: true,
          observed: true,
          failed: false,
          changed: true,
          before: { status: null, version: 0, observedAt: null },
          after: { status: 'NOT_STARTED', version: 1, source: 'reconcile', observedAt: expect.any(String) },
        });
        expect(changes).toEqual(['biz-check v1: null -> NOT_STARTED (reconcile)']);

        fake.kyb.setStatus('biz-check', 'IN_REVIEW');
        const second = await cli(ns, ['ledger', 'check', 'kyb', 'biz-check']);
        expect(second.code).toBe(0);
        expect(second.stdout).toMatch(
          /^verification +kyb "biz-check"\nbefore +NOT_STARTED v1, observed \d{4}-.+ ago\) by reconcile\nafter +IN_REVIEW v2, observed .+ by reconcile \(changed: onChange ran\)\n$/,
        );
        expect(second.stderr).toBe('');

        const third = await cliJson(ns, ['ledger', 'check', 'kyb', 'biz-check']);
        expect(third).toMatchObject({
          observed: true,
          failed: false,
          changed: false,
          before: { version: 2 },
          after: { status: 'IN_REVIEW', version: 2 },
        });
        expect(changes).toEqual(['biz-check v1: null -> NOT_STARTED (reconcile)', 'biz-check v2: NOT_STARTED -> IN_REVIEW (reconcile)']);

        // The service fails the reconciler's read: the CLI says the check ran and failed, not that nobody checked.
        fake.faults.inject('kyb.getCase', { kind: 'status', status: 500 }, { times: 1 });
        fake.kyb.setStatus('biz-check', 'COMPLETED');
        const failed = await cli(ns, ['ledger', 'check', 'kyb', 'biz-check']);
        expect(failed.code).toBe(ExitCode.failure);
        expect(failed.stdout).toMatch(/\nafter +the check failed \(1 failed check in a row\)\n$/);
        expect(failed.stderr).toMatch(
          /^verikit: a reconciler checked kyb "biz-check" but could not read its result \(1 failed check in a row; /,
        );
        expect(await cliJson(ns, ['ledger', 'check', 'kyb', 'biz-check'])).toMatchObject({
          observed: true,
          failed: false,
          changed: true,
          after: { status: 'COMPLETED', final: true, version: 3, failures: 0 },
        });
        expect(changes).toHaveLength(3);
      } finally {
        await reconciler.stop();
        await client.close();
        await fake.close();
      }
    });

    it('check without a running reconciler: exit 8 after --timeout, the row untouched but due now; --no-wait only schedules; untracked is exit 3', async () => {
      const ns = await fixture.fresh();
      const ledger = ns.ledger();
      const key = { kind: 'kyb', refId: 'biz-lonely' } as const;
      await ledger.track(key, inAnHour());

      const waited = await cli(ns, ['ledger', 'check', 'kyb', 'biz-lonely', '--timeout', '1']);
      expect(waited.code).toBe(ExitCode.notObserved);
      expect(waited.stdout).toMatch(/^verification +kyb "biz-lonely"\nbefore +not observed yet, observed -\nafter +-\n$/);
      expect(waited.stderr).toBe(
        'verikit: no reconciler observed kyb "biz-lonely" within 1s: is one running on this ledger (createReconciler(...).start()), with read budget to spare? It stays due now.\n',
      );
      const row = await ledger.get(key);
      expect(row).toMatchObject({ version: 0, status: null, observedAt: null });
      expect(row?.nextCheckAt?.getTime()).toBeLessThanOrEqual(Date.now());

      await ledger.track({ kind: 'kyc', refId: 'user-later' }, inAnHour());
      expect(await cliJson(ns, ['ledger', 'check', 'kyc', 'user-later', '--no-wait'])).toMatchObject({
        kind: 'kyc',
        refId: 'user-later',
        scheduled: true,
        before: { version: 0 },
      });
      expect((await ledger.get({ kind: 'kyc', refId: 'user-later' }))?.nextCheckAt?.getTime()).toBeLessThanOrEqual(Date.now());
      const scheduled = await cli(ns, ['ledger', 'check', 'kyc', 'user-later', '--no-wait']);
      expect(scheduled.stdout).toBe('kyc "user-later" is due now: a running reconciler checks it next, within the read budget\n');

      const untracked = await cli(ns, ['ledger', 'check', 'kyb', 'biz-never']);
      expect(untracked.code).toBe(ExitCode.notFound);
      expect(untracked.stderr).toMatch(/^verikit: kyb "biz-never" is not in the ledger of /);
    });

    it('Ctrl-C while check waits: it stops at once with exit 130, the row still due, every connection closed', async () => {
      const ns = await fixture.fresh();
      await ns.ledger().track({ kind: 'kyb', refId: 'biz-interrupted' }, inAnHour());
      const running = startCli(['ledger', 'check', 'kyb', 'biz-interrupted', '--timeout', '600', '--progress', ...ns.args]);
      await running.waitForStderr('waiting up to 600s for a reconciler to observe it');
      running.kill('SIGINT');
      const result = await running.result;
      expect(result.code).toBe(ExitCode.interrupted);
      expect(result.stderr).toMatch(/verikit: stopped waiting; kyb "biz-interrupted" stays due now for the reconciler\n$/);
      await expectNoConnectionLeft();
    });
  });

  describe('personal data', () => {
    const k1: [string, string] = ['2026-11', base64Key()];

    it('erase with encryption on: nothing of the refId is left in a raw dump (bodies, ledger row); others stay; human and --json', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox({ encryption: encryption(k1) });
      const ledger = ns.ledger();
      const about = (refId: string) => (id: string) => bodyAbout('kyb', refId, id.length);
      await seed(inbox, ['msg_erase_dead'], 'dead', about('biz-erase'));
      await seed(inbox, ['msg_erase_done'], 'done', about('biz-erase'));
      await seed(inbox, ['msg_erase_pending'], 'pending', about('biz-erase'));
      await seed(inbox, ['msg_other'], 'pending', about('biz-other'));
      await ledger.track({ kind: 'kyb', refId: 'biz-erase' }, inAnHour());
      await ledger.track({ kind: 'kyb', refId: 'biz-other' }, inAnHour());
      const before = await ns.dump();
      expect(before).toContain('biz-erase'); // the ledger row
      expect(before).not.toContain(CANARY_NAME); // sealed at rest

      const erased = await cliJson(ns, ['erase', 'kyb', 'biz-erase'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(k1) });
      expect(erased).toEqual({ kind: 'kyb', refId: 'biz-erase', inbox: { erased: 3, complete: true }, ledger: { erased: true } });
      const after = await ns.dump();
      expect(after).not.toContain('biz-erase');
      expect(after).not.toContain(CANARY_NAME);
      expect(after).not.toContain(CANARY_ADDRESS);
      expect(after).toContain('biz-other');
      expect(await inbox.get('msg_erase_pending')).toMatchObject({ state: 'done', payload: 'removed' });
      expect(await inbox.get('msg_other', { withPayload: true })).toMatchObject({
        state: 'pending',
        body: about('biz-other')('msg_other'),
      });

      const human = await cli(ns, ['erase', 'kyb', 'biz-other'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(k1) });
      expect(human).toMatchObject({
        code: 0,
        stdout: 'verification  kyb biz-other\ninbox         1 stored body removed (ids kept for dedupe)\nledger        row removed\n',
      });
      const nothing = await cli(ns, ['erase', 'kyb', 'biz-other'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(k1) });
      expect(nothing.stdout).toMatch(/inbox +0 stored bodies removed .*\nledger +no row\n/);
    });

    it('a sealed body without its key: show --payload and erase are a clear error (exit 7) that loses nothing; with the key, both work', async () => {
      const ns = await fixture.fresh();
      const inbox = ns.inbox({ encryption: encryption(k1) });
      const body = bodyAbout('kyb', 'biz-sealed');
      await seed(inbox, ['msg_sealed'], 'dead', () => body);

      const noKeys = await cli(ns, ['inbox', 'show', 'msg_sealed', '--payload']);
      expect(noKeys.code).toBe(ExitCode.sealed);
      expect(noKeys.stderr).toBe(
        'verikit: a stored body is sealed (key "2026-11") and VERIKIT_ENCRYPTION_KEYS is not set: set it to the app\'s keys (id:base64, current first)\n',
      );
      const wrong = base64Key();
      const wrongKey = await cli(ns, ['inbox', 'show', 'msg_sealed', '--payload'], {
        VERIKIT_ENCRYPTION_KEYS: keysVariable(['2026-11', wrong]),
      });
      expect(wrongKey.code).toBe(ExitCode.sealed);
      // The key's id is named (it is how the operator finds the key), the key never.
      expect(wrongKey.stderr).toMatch(/sealed with key "2026-11" does not open with the key VERIKIT_ENCRYPTION_KEYS gives that id/);
      expect(wrongKey.stderr).not.toContain(wrong);
      const otherKey = await cli(ns, ['inbox', 'show', 'msg_sealed', '--payload'], {
        VERIKIT_ENCRYPTION_KEYS: keysVariable(['k2', base64Key()]),
      });
      expect(otherKey.stderr).toMatch(/sealed with key "2026-11", which VERIKIT_ENCRYPTION_KEYS does not hold/);

      // Without the key: what can be erased is (the ledger row), the sealed body stays as it was, and the exit code says so.
      const ledger = ns.ledger();
      await ledger.track({ kind: 'kyb', refId: 'biz-sealed' }, inAnHour());
      const erase = await cli(ns, ['erase', 'kyb', 'biz-sealed']);
      expect(erase.code).toBe(ExitCode.sealed);
      expect(erase.stdout).toBe(
        'verification  kyb biz-sealed\ninbox         bodies that opened were removed; one or more could not be opened (below)\nledger        row removed\n',
      );
      expect(erase.stderr).toMatch(
        /^verikit: not everything was erased: a stored body is sealed \(key "2026-11"\) and VERIKIT_ENCRYPTION_KEYS is not set: .*; run erase again once it is\n$/,
      );
      expect(await ledger.get({ kind: 'kyb', refId: 'biz-sealed' })).toBeUndefined();
      expect(await inbox.get('msg_sealed', { withPayload: true })).toMatchObject({ state: 'dead', payload: 'kept', body });

      const shown = await cli(ns, ['inbox', 'show', 'msg_sealed', '--payload'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(k1) });
      expect(shown.stdout.endsWith(`\n\n${body}\n`)).toBe(true);
      expect(
        await cliJson(ns, ['erase', 'kyb', 'biz-sealed', '--only', 'inbox'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(k1) }),
      ).toMatchObject({
        inbox: { erased: 1, complete: true },
        ledger: null,
      });
      expect(await ns.dump()).not.toContain(CANARY_NAME);
    });

    it('inbox reseal: plain bodies and those under an old key are sealed again under the current key, with a progress line when asked', async () => {
      const ns = await fixture.fresh();
      const old: [string, string] = ['old', base64Key()];
      const current: [string, string] = ['current', base64Key()];
      await seed(ns.inbox({ encryption: encryption(old) }), ['msg_old'], 'dead');
      await seed(ns.inbox(), ['msg_plain'], 'pending'); // written before encryption was on
      expect(await ns.dump()).toContain(CANARY_NAME); // the plain one

      const run = await cli(ns, ['inbox', 'reseal', '--json', '--progress'], { VERIKIT_ENCRYPTION_KEYS: keysVariable(current, old) });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ resealed: 2 });
      expect(run.stderr).toMatch(/resealing stored bodies: 2\n$/);
      const dump = await ns.dump();
      expect(dump).not.toContain(CANARY_NAME);
      expect(dump).not.toContain('vk1.old.');
      expect(dump.match(/vk1\.current\./g)).toHaveLength(2);

      // Only the current key now: every body opens with it.
      const onlyCurrent = { VERIKIT_ENCRYPTION_KEYS: keysVariable(current) };
      expect(await cliJson(ns, ['inbox', 'show', 'msg_old', '--payload'], onlyCurrent)).toMatchObject({
        body: bodyAbout('kyb', 'biz-msg_old'),
      });
      expect(await cliJson(ns, ['inbox', 'show', 'msg_plain', '--payload'], onlyCurrent)).toMatchObject({
        body: bodyAbout('kyb', 'biz-msg_plain'),
      });
      expect(await cli(ns, ['inbox', 'reseal'], onlyCurrent)).toMatchObject({
        code: 0,
        stdout: 'resealed 0 stored bodies under the current key\n',
      });
    });
  });

  it('storage the app never set up (no tables, no queue) is exit 6 naming what to pass', async () => {
    const result = await runCli(['inbox', 'stats', ...fixture.notSetUp()]);
    expect(result.code).toBe(ExitCode.notSetUp);
    expect(result.stderr).toMatch(
      fixture.name === 'postgres' ? /has no verikit_inbox table: .*--schema/ : /has no inbox queue .*--queue and --prefix/,
    );
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
}
