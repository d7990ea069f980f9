import {
  createInboxWorker,
  type EncryptionOptions,
  type EventKind,
  type InboxAdmin,
  type InboxEngine,
  type InboxEvent,
  type LedgerAdmin,
  type LedgerEngine,
  PayloadSealError,
} from '@verikit/core';
import { expect, it } from 'vitest';

/** The inbox options the suite varies: every engine takes them under these names. */
export interface AdminInboxOptions {
  payloadRetentionMs?: number;
  deadLetterRetentionMs?: number;
  encryption?: EncryptionOptions;
}

/** An inbox with its operator methods, as every engine makes one. */
export type AdminInbox = InboxEngine & InboxAdmin;

/** What an engine hands the suite for one fresh, empty storage (a schema of its own, a key prefix of its own). */
export interface AdminStorage {
  /** An inbox over this storage with `options`; called again, another instance over the same storage (a restart with other keys, say). */
  inbox(options?: AdminInboxOptions): Promise<AdminInbox>;
  /** Makes event `id` `ms` older: every time the storage keeps about it (received, done, dead-lettered) moved back by `ms`. */
  age(id: string, ms: number): Promise<void>;
  /** Runs `inbox`'s background upkeep (pruning, payload and dead-letter retention) now, to its end. */
  upkeep(inbox: AdminInbox): Promise<void>;
  /**
   * Everything the storage holds, as text, read raw (around verikit): on PostgreSQL every column of
   * every table in the schema, on Redis every value under the prefixes (strings, hashes, lists, sets,
   * zsets, streams).
   */
  dump(): Promise<string>;
  /** A ledger over the same storage: the erasure proof then erases the verification's ledger row too and checks its refId is gone. */
  ledger?(): Promise<LedgerEngine & LedgerAdmin>;
  /** `false` for an engine whose accept cannot tell a repeat from a new id (BullMQ's add does not say): it answers `accepted` to both. */
  acceptTellsRepeats?: boolean;
}

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const key32 = () => crypto.getRandomValues(new Uint8Array(32));
/** The shape of every sealed value: `vk1.<keyId>.<iv>.<ciphertext+tag>`. */
const SEALED = /vk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g;
const sealedValues = (dump: string) => (dump.match(SEALED) ?? []).sort();

let people = 0;

/**
 * A person a webhook body is about: a verification (kind, refId) and the personal fields the body
 * carries, each unique to this person, so a scan can tell whose data is still stored.
 */
function person(kind: EventKind = 'kyb') {
  const n = `${Date.now().toString(36)}${(++people).toString(36)}`;
  const refId = `ref-${kind}-${n}`;
  const name = `Zoë Canary-Ångström ${n}`;
  const address = `${n} Rue des Mésanges, 75011 Paris`;
  let events = 0;
  const subject = { kind, refId };
  return {
    subject,
    refId,
    name,
    address,
    /** A body about this person (`extra` makes it unique), as the service would send it. */
    body: (extra = ++events) =>
      JSON.stringify({
        type: kind === 'kyb' ? 'kyb.case.status_changed' : 'kyc.session.status_changed',
        data: { refId, status: 'IN_REVIEW', person: { name, address: `${address} (${extra})` }, note: 'a \u2028 "quoted" \\ body' },
      }),
    /** Personal data of this person found in `dump`. */
    foundIn: (dump: string) => [refId, name, address].filter((field) => dump.includes(field)),
  };
}

const delivery = (id: string, body: string) => ({ id, timestamp: Math.floor(Date.now() / 1000), body });

/** Leases exactly the events `ids` (due now), failing the test when others or fewer come. */
async function leaseIds(inbox: InboxEngine, ids: string[], owner = 'owner-admin'): Promise<Map<string, InboxEvent>> {
  const leased = new Map<string, InboxEvent>();
  for (let round = 0; leased.size < ids.length && round < 20; round++)
    for (const event of await inbox.lease(owner, ids.length - leased.size, 60_000)) leased.set(event.id, event);
  expect([...leased.keys()].sort()).toEqual([...ids].sort());
  return leased;
}

/** Accepts `body` as `id` and takes it to `state`: left pending, dead-lettered, or done (through a lease). */
async function stored(inbox: InboxEngine, id: string, body: string, state: 'pending' | 'dead' | 'done'): Promise<void> {
  expect(await inbox.accept(delivery(id, body))).toBe('accepted');
  if (state === 'pending') return;
  const event = (await leaseIds(inbox, [id])).get(id) as InboxEvent;
  if (state === 'dead') expect(await inbox.fail(event, { error: 'gave up', retryInMs: null })).toBe('ok');
  else expect(await inbox.complete(event, async () => {})).toBe('ok');
}

/**
 * Accepts `id` again: answered `duplicate` (`accepted` by an engine that cannot tell), and nothing
 * changes: the event keeps its state, attempts, times and its body or the lack of one.
 */
async function expectRepeat(storage: AdminStorage, inbox: AdminInbox, id: string, body: string): Promise<void> {
  const before = await inbox.get(id);
  expect(await inbox.accept(delivery(id, body))).toBe(storage.acceptTellsRepeats === false ? 'accepted' : 'duplicate');
  expect(await inbox.get(id)).toEqual(before);
}

/** Checks that event `id` is done with its body removed: asked for its body, none comes. */
async function expectRemoved(inbox: InboxAdmin, id: string): Promise<void> {
  const record = await inbox.get(id, { withPayload: true });
  expect(record, id).toMatchObject({ id, state: 'done', payload: 'removed' });
  expect(record?.body, id).toBeUndefined();
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
};

/**
 * `InboxAdmin`, payload retention and encryption at rest, the same on every inbox engine (the
 * semantics of ISSUE-24-DECISIONS): call inside a describe block, with `fresh` making an empty
 * storage of the engine under test. Each case's inboxes are the engine's to close.
 */
export function inboxAdminCases(fresh: () => Promise<AdminStorage>): void {
  it('get: undefined for an unknown id; a stored event with its state, attempts, last error, times and kept body, the body only when asked', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const ada = person();
    expect(await inbox.get('msg_never_accepted')).toBeUndefined();

    const body = ada.body();
    await inbox.accept(delivery('msg_get', body));
    const pending = await inbox.get('msg_get');
    expect(pending).toMatchObject({ id: 'msg_get', state: 'pending', attempts: 0, lastError: null, finishedAt: null, payload: 'kept' });
    expect(pending?.receivedAt).toBeInstanceOf(Date);
    expect(Math.abs((pending?.receivedAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(pending?.body).toBeUndefined();
    expect((await inbox.get('msg_get', { withPayload: true }))?.body).toBe(body);

    const first = (await leaseIds(inbox, ['msg_get'])).get('msg_get') as InboxEvent;
    await inbox.fail(first, { error: 'Error: downstream refused', retryInMs: 0 });
    expect(await inbox.get('msg_get')).toMatchObject({ state: 'pending', attempts: 1, lastError: 'Error: downstream refused' });
    const second = (await leaseIds(inbox, ['msg_get'])).get('msg_get') as InboxEvent;
    await inbox.fail(second, { error: 'Error: gave up', retryInMs: null });
    const dead = await inbox.get('msg_get', { withPayload: true });
    expect(dead).toMatchObject({ state: 'dead', attempts: 2, lastError: 'Error: gave up', payload: 'kept', body });
    expect(dead?.finishedAt?.getTime()).toBeGreaterThanOrEqual(pending?.receivedAt.getTime() ?? Number.NaN);

    await stored(inbox, 'msg_get_done', ada.body(), 'done');
    expect(await inbox.get('msg_get_done')).toMatchObject({ state: 'done', attempts: 1, payload: 'kept', finishedAt: expect.any(Date) });
  });

  it('deadLetters pages through 1,050 dead letters oldest first with `after`, none twice and none missed (a replayed page end included); `since` filters', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const ids = Array.from({ length: 1_050 }, (_, i) => `msg_dead_${String(i).padStart(4, '0')}`);
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(ids.slice(i, i + 50).map((id) => inbox.accept(delivery(id, `{"type":"kyb.case.status_changed","n":${i}}`))));
    for (let left = ids.length; left > 0; ) {
      const events = await inbox.lease('owner-dead', 100, 60_000);
      expect(events.length).toBeGreaterThan(0);
      await Promise.all(events.map((event) => inbox.fail(event, { error: 'gave up', retryInMs: null })));
      left -= events.length;
    }
    expect(await inbox.deadLetters()).toHaveLength(100); // the default page

    const pages: string[][] = [];
    const seen: Array<{ id: string; receivedAt: Date }> = [];
    let after: string | undefined;
    for (;;) {
      const page = await inbox.deadLetters({ limit: 100, after });
      if (page.length === 0) break;
      pages.push(page.map((d) => d.id));
      seen.push(...page);
      after = page[page.length - 1]?.id;
      // The page's last one replayed (it is no longer a dead letter): the next page starts after it all the same.
      if (pages.length === 1) expect(await inbox.replay(after as string)).toBe(true);
      expect(pages.length).toBeLessThan(20);
    }
    expect(pages.map((page) => page.length)).toEqual([...Array(10).fill(100), 50]);
    expect(new Set(seen.map((d) => d.id)).size).toBe(ids.length);
    expect([...seen.map((d) => d.id)].sort()).toEqual(ids);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i]?.receivedAt.getTime()).toBeGreaterThanOrEqual(seen[i - 1]?.receivedAt.getTime() ?? Number.NaN);

    const since = seen[600]?.receivedAt as Date;
    const recent = await inbox.deadLetters({ since, limit: 2_000 });
    const expected = seen.filter((d) => d.receivedAt >= since && d.id !== pages[0]?.[99]).map((d) => d.id);
    expect(recent.map((d) => d.id).sort()).toEqual(expected.sort());
    expect(recent.every((d) => d.receivedAt >= since)).toBe(true);
  }, 180_000);

  it('purgeDead removes dead letters received before a time: the body goes, the id stays as done (a repeat is a duplicate), not replayable; later ones stay', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const old = person();
    const recent = person();
    await stored(inbox, 'msg_purge_old', old.body(), 'dead');
    await stored(inbox, 'msg_purge_recent', recent.body(), 'dead');
    await storage.age('msg_purge_old', 2 * HOUR);

    expect(await inbox.purgeDead({ before: new Date(Date.now() - HOUR) })).toBe(1);
    await expectRemoved(inbox, 'msg_purge_old');
    expect((await inbox.deadLetters()).map((d) => d.id)).toEqual(['msg_purge_recent']);
    expect(await inbox.replay('msg_purge_old')).toBe(false);
    await expectRepeat(storage, inbox, 'msg_purge_old', old.body());
    const dump = await storage.dump();
    expect(old.foundIn(dump)).toEqual([]);
    expect(recent.foundIn(dump)).toEqual([recent.refId, recent.name, recent.address]);
    expect(await inbox.purgeDead({ before: new Date(Date.now() - HOUR) })).toBe(0);
    expect(await rejection(inbox.purgeDead({ before: new Date('not a date') }))).toMatchObject({ code: 'invalid_argument' });
  });

  it('payload retention: a done body is removed once done payloadRetentionMs (the id stays for dedupe); pending and dead ones keep theirs', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox({ payloadRetentionMs: 60_000 });
    const who = person();
    const other = person();
    await stored(inbox, 'msg_ret_done', who.body(), 'done');
    await stored(inbox, 'msg_ret_dead', other.body(), 'dead');
    await stored(inbox, 'msg_ret_pending', other.body(), 'pending');
    await storage.upkeep(inbox);
    expect(await inbox.get('msg_ret_done')).toMatchObject({ state: 'done', payload: 'kept' });

    await storage.age('msg_ret_done', 61_000);
    for (const id of ['msg_ret_pending', 'msg_ret_dead']) await storage.age(id, 2 * HOUR);
    await storage.upkeep(inbox);
    await expectRemoved(inbox, 'msg_ret_done');
    expect(await inbox.get('msg_ret_pending')).toMatchObject({ state: 'pending', payload: 'kept' });
    expect(await inbox.get('msg_ret_dead')).toMatchObject({ state: 'dead', payload: 'kept' });
    await expectRepeat(storage, inbox, 'msg_ret_done', who.body());
    expect(who.foundIn(await storage.dump())).toEqual([]);
  });

  it('payload retention defaults to one hour; 0 removes a body once its event is done', async () => {
    const storage = await fresh();
    const byDefault = await storage.inbox();
    await stored(byDefault, 'msg_ret_default', person().body(), 'done');
    await storage.age('msg_ret_default', 50 * 60_000);
    await storage.upkeep(byDefault);
    expect(await byDefault.get('msg_ret_default')).toMatchObject({ payload: 'kept' });
    await storage.age('msg_ret_default', 15 * 60_000);
    await storage.upkeep(byDefault);
    expect(await byDefault.get('msg_ret_default')).toMatchObject({ payload: 'removed' });

    const zero = await fresh();
    const atOnce = await zero.inbox({ payloadRetentionMs: 0 });
    const who = person();
    await stored(atOnce, 'msg_ret_zero', who.body(), 'done');
    await zero.upkeep(atOnce);
    expect(await atOnce.get('msg_ret_zero')).toMatchObject({ state: 'done', payload: 'removed' });
    expect(who.foundIn(await zero.dump())).toEqual([]);
  });

  it('dead-letter retention: past deadLetterRetentionMs (default 30 days) a dead letter is purged as purgeDead does; a younger one stays', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox({ deadLetterRetentionMs: 60_000 });
    await stored(inbox, 'msg_dlr_old', person().body(), 'dead');
    await stored(inbox, 'msg_dlr_young', person().body(), 'dead');
    await storage.age('msg_dlr_old', 61_000);
    await storage.upkeep(inbox);
    expect(await inbox.get('msg_dlr_old')).toMatchObject({ state: 'done', payload: 'removed' });
    expect((await inbox.deadLetters()).map((d) => d.id)).toEqual(['msg_dlr_young']);
    await expectRepeat(storage, inbox, 'msg_dlr_old', '{}');

    const defaults = await fresh();
    const inboxByDefault = await defaults.inbox();
    await stored(inboxByDefault, 'msg_dlr_default', person().body(), 'dead');
    await defaults.age('msg_dlr_default', 29 * DAY);
    await defaults.upkeep(inboxByDefault);
    expect(await inboxByDefault.get('msg_dlr_default')).toMatchObject({ state: 'dead', payload: 'kept' });
    await defaults.age('msg_dlr_default', 2 * DAY);
    await defaults.upkeep(inboxByDefault);
    // Purged, and its id kept for dedupe: not pruned with the done rows whose time is long past.
    expect(await inboxByDefault.get('msg_dlr_default')).toMatchObject({ state: 'done', payload: 'removed' });
  });

  it('erase removes every stored body about the subject whatever its state; pending and dead ones become done without running; ids stay; others untouched', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const erased = person('kyb');
    const kept = person('kyb');
    // Finished ones first: `stored` leases the oldest due event.
    await stored(inbox, 'msg_er_dead', erased.body(), 'dead');
    await stored(inbox, 'msg_er_done', erased.body(), 'done');
    await stored(inbox, 'msg_keep_dead', kept.body(), 'dead');
    await stored(inbox, 'msg_er_pending', erased.body(), 'pending');
    await stored(inbox, 'msg_er_retry', erased.body(), 'pending');
    const retrying = (await leaseIds(inbox, ['msg_er_pending', 'msg_er_retry'])).get('msg_er_retry') as InboxEvent;
    await inbox.fail(retrying, { error: 'try again', retryInMs: 0 });
    await stored(inbox, 'msg_keep_pending', kept.body(), 'pending');
    // The same refId under the other kind is another verification.
    await stored(inbox, 'msg_keep_kyc', JSON.stringify({ type: 'kyc.session.status_changed', data: { refId: erased.refId } }), 'pending');
    await stored(inbox, 'msg_keep_ping', '{"type":"ping"}', 'pending');
    const before = await storage.dump();
    expect(erased.foundIn(before)).toEqual([erased.refId, erased.name, erased.address]);

    // msg_er_pending is leased (above) and not handed back: erased while a worker holds it.
    expect(await inbox.erase(erased.subject)).toEqual({ erased: 4 });
    for (const id of ['msg_er_pending', 'msg_er_dead', 'msg_er_done', 'msg_er_retry']) await expectRemoved(inbox, id);
    expect(await inbox.get('msg_keep_dead', { withPayload: true })).toMatchObject({
      state: 'dead',
      payload: 'kept',
      body: expect.any(String),
    });
    expect((await inbox.deadLetters()).map((d) => d.id)).toEqual(['msg_keep_dead']);
    await leaseIds(inbox, ['msg_keep_pending', 'msg_keep_kyc', 'msg_keep_ping']);
    expect(await inbox.lease('owner-after', 10, 60_000)).toEqual([]);
    await expectRepeat(storage, inbox, 'msg_er_pending', erased.body());
    expect(await inbox.replay('msg_er_dead')).toBe(false);

    const after = await storage.dump();
    expect(after).not.toContain(erased.name);
    expect(after).not.toContain(erased.address);
    expect(kept.foundIn(after)).toEqual([kept.refId, kept.name, kept.address]);
    expect(await inbox.erase(erased.subject)).toEqual({ erased: 0 });
  });

  it('an erased event a worker holds cannot be completed or extended (stale): it never runs to done', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const who = person();
    await stored(inbox, 'msg_er_held', who.body(), 'pending');
    const event = (await leaseIds(inbox, ['msg_er_held'])).get('msg_er_held') as InboxEvent;
    expect(await inbox.erase(who.subject)).toEqual({ erased: 1 });
    expect(await inbox.extend(event, 60_000)).toBe('stale');
    expect(await inbox.complete(event, async () => {})).toBe('stale');
    expect(await inbox.fail(event, { error: 'late', retryInMs: 0 })).toBe('stale');
    expect(await inbox.get('msg_er_held')).toMatchObject({ state: 'done', payload: 'removed' });
  });

  it('erase reads events with identify when given; a bad subject is refused with invalid_argument', async () => {
    const storage = await fresh();
    const inbox = await storage.inbox();
    const custom = (refId: string) => JSON.stringify({ what: 'business-update', business: { id: refId } });
    await stored(inbox, 'msg_idf_1', custom('acme-1'), 'pending');
    await stored(inbox, 'msg_idf_2', custom('acme-2'), 'pending');
    const identify = (event: unknown) => {
      const id = (event as { business?: { id?: unknown } }).business?.id;
      return typeof id === 'string' ? { kind: 'kyb' as const, refId: id } : null;
    };
    expect(await inbox.erase({ kind: 'kyb', refId: 'acme-1' })).toEqual({ erased: 0 }); // the default identify cannot read them
    expect(await inbox.erase({ kind: 'kyb', refId: 'acme-1' }, { identify })).toEqual({ erased: 1 });
    expect(await inbox.get('msg_idf_1')).toMatchObject({ payload: 'removed' });
    expect(await inbox.get('msg_idf_2')).toMatchObject({ payload: 'kept' });
    for (const bad of [{ kind: 'kyx', refId: 'a' }, { kind: 'kyb', refId: '' }, null])
      expect(await rejection(inbox.erase(bad as never)), JSON.stringify(bad)).toMatchObject({ code: 'invalid_argument' });
  });

  it('with encryption, no body is stored in plain text: the stored value names its key; get and lease open it', async () => {
    const storage = await fresh();
    const encryption = { keys: [{ id: 'k1', key: key32() }] };
    const inbox = await storage.inbox({ encryption });
    const who = person();
    const body = who.body();
    await inbox.accept(delivery('msg_enc', body));
    const dump = await storage.dump();
    expect(who.foundIn(dump)).toEqual([]);
    expect(dump).not.toContain('IN_REVIEW');
    expect(sealedValues(dump)).toEqual([expect.stringMatching(/^vk1\.k1\./)]);
    expect((await inbox.get('msg_enc', { withPayload: true }))?.body).toBe(body);
    const [event] = await inbox.lease('owner-enc', 1, 60_000);
    expect(event).toMatchObject({ id: 'msg_enc', body });
    expect(event?.unreadable).toBeUndefined();
  });

  it('a key that is missing or wrong is a clear PayloadSealError naming the key, never the body; the value stays and opens with the right key', async () => {
    const storage = await fresh();
    const right = { keys: [{ id: 'k1', key: key32() }] };
    const sealing = await storage.inbox({ encryption: right });
    const who = person();
    const body = who.body();
    await sealing.accept(delivery('msg_key', body));
    const plain = await storage.inbox();
    await plain.accept(delivery('msg_plain', '{"type":"ping"}'));
    const sealedBefore = sealedValues(await storage.dump());

    const cases: Array<[AdminInboxOptions, PayloadSealError['reason']]> = [
      [{}, 'no_keys'],
      [{ encryption: { keys: [{ id: 'k1', key: key32() }] } }, 'unreadable'],
      [{ encryption: { keys: [{ id: 'k2', key: key32() }] } }, 'unknown_key'],
    ];
    for (const [options, reason] of cases) {
      const inbox = await storage.inbox(options);
      const error = await rejection(inbox.get('msg_key', { withPayload: true }));
      expect(error, reason).toBeInstanceOf(PayloadSealError);
      expect(error).toMatchObject({ code: 'payload_sealed', reason, keyId: 'k1' });
      const text = `${(error as Error).message} ${JSON.stringify(error)}`;
      expect(who.foundIn(text)).toEqual([]);
      expect(text).not.toContain('vk1.');
      expect(await inbox.get('msg_key')).toMatchObject({ state: 'pending', payload: 'kept' });
      // Plain text stored before encryption was on opens under any options.
      expect((await inbox.get('msg_plain', { withPayload: true }))?.body).toBe('{"type":"ping"}');
      const leased = await leaseIds(inbox, ['msg_key', 'msg_plain'], `owner-${reason}`);
      expect(leased.get('msg_key')).toMatchObject({ body: '', unreadable: expect.any(PayloadSealError) });
      expect(leased.get('msg_key')?.unreadable).toMatchObject({ reason });
      expect(leased.get('msg_plain')).toMatchObject({ body: '{"type":"ping"}' });
      expect(leased.get('msg_plain')?.unreadable).toBeUndefined();
      for (const event of leased.values()) await inbox.fail(event, { error: 'not now', retryInMs: 0 });
    }
    expect(sealedValues(await storage.dump())).toEqual(sealedBefore);
    expect((await (await storage.inbox({ encryption: right })).get('msg_key', { withPayload: true }))?.body).toBe(body);
  });

  it('the worker fails an event it cannot open without running onEvent, dead-letters it with the error; with the key given, a replay runs it with its body', async () => {
    const storage = await fresh();
    const right = { keys: [{ id: 'k1', key: key32() }] };
    const who = person();
    const body = who.body();
    await (await storage.inbox({ encryption: right })).accept(delivery('msg_worker_key', body));
    const sealedBefore = sealedValues(await storage.dump());
    const runs: unknown[] = [];
    const drain = async (inbox: AdminInbox, until_: () => Promise<boolean>) => {
      const worker = createInboxWorker({
        inbox,
        pollIntervalMs: 25,
        retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
        logger: false,
        onEvent: async (ctx) => {
          runs.push(ctx.event);
        },
      });
      worker.start();
      try {
        await until(until_, 'the worker');
      } finally {
        await worker.stop({ timeoutMs: 5_000 });
      }
    };

    const withoutItsKey = await storage.inbox({ encryption: { keys: [{ id: 'k0', key: key32() }] } });
    await drain(withoutItsKey, async () => (await withoutItsKey.deadLetters()).length === 1);
    const [dead] = await withoutItsKey.deadLetters();
    expect(dead).toMatchObject({ id: 'msg_worker_key', attempts: 2 });
    expect(dead?.lastError).toMatch(/^PayloadSealError \[payload_sealed\]: .*"k1"/);
    expect(who.foundIn(dead?.lastError ?? '')).toEqual([]);
    expect(runs).toEqual([]);
    expect(sealedValues(await storage.dump())).toEqual(sealedBefore);

    const keyed = await storage.inbox({ encryption: { keys: [{ id: 'k0', key: key32() }, ...right.keys] } });
    expect(await keyed.replay('msg_worker_key')).toBe(true);
    await drain(keyed, async () => runs.length === 1 && (await keyed.get('msg_worker_key'))?.state === 'done');
    expect(runs).toEqual([JSON.parse(body)]);
  });

  it('reseal seals every kept body under the current key (plain ones too) with progress, skips removed ones; old keys can then go; without encryption it is a configuration error', async () => {
    const storage = await fresh();
    const k1 = { id: 'k1', key: key32() };
    const k2 = { id: 'k2', key: key32() };
    const plain = await storage.inbox({ payloadRetentionMs: 0 });
    const old = await storage.inbox({ encryption: { keys: [k1] } });
    const bodies = new Map<string, string>();
    const who = person();
    // Done first (`stored` leases the oldest due event), and its body removed at once.
    await stored(plain, 'msg_reseal_removed', who.body(), 'done');
    for (let i = 0; i < 600; i++) {
      const id = `msg_reseal_${String(i).padStart(3, '0')}`;
      bodies.set(id, who.body(i));
      await (i % 3 === 0 ? plain : old).accept(delivery(id, bodies.get(id) as string));
    }
    await storage.upkeep(plain);
    expect(await plain.get('msg_reseal_removed')).toMatchObject({ payload: 'removed' });
    expect(who.foundIn(await storage.dump())).toEqual([who.refId, who.name, who.address]);

    expect(await rejection(plain.reseal())).toMatchObject({ code: 'invalid_config' });
    const rotated = await storage.inbox({ encryption: { keys: [k2, k1] } });
    const progress: number[] = [];
    expect(await rotated.reseal({ onProgress: (n) => progress.push(n) })).toEqual({ resealed: 600 });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(600);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const dump = await storage.dump();
    expect(who.foundIn(dump)).toEqual([]);
    const sealed = sealedValues(dump);
    expect(sealed).toHaveLength(600);
    expect(sealed.every((value) => value.startsWith('vk1.k2.'))).toBe(true);
    expect(await rotated.reseal()).toEqual({ resealed: 0 });

    const current = await storage.inbox({ encryption: { keys: [k2] } });
    for (const id of ['msg_reseal_000', 'msg_reseal_001', 'msg_reseal_599'])
      expect((await current.get(id, { withPayload: true }))?.body).toBe(bodies.get(id));
    const leased = await current.lease('owner-reseal', 600, 60_000);
    expect(leased).toHaveLength(600);
    expect(leased.every((event) => event.unreadable === undefined && event.body === bodies.get(event.id))).toBe(true);
  }, 120_000);

  it('erase opens sealed bodies to find the subject; one it cannot open makes it throw after erasing the rest, and that body stays', async () => {
    const storage = await fresh();
    const k1 = { id: 'k1', key: key32() };
    const k2 = { id: 'k2', key: key32() };
    const who = person();
    const bystander = person();
    await stored(await storage.inbox({ encryption: { keys: [k1] } }), 'msg_er_k1', who.body(), 'dead');
    const inbox = await storage.inbox({ encryption: { keys: [k2] } });
    await stored(inbox, 'msg_er_k2_done', who.body(), 'done');
    await stored(inbox, 'msg_er_k2', who.body(), 'pending');
    await stored(inbox, 'msg_er_bystander', bystander.body(), 'pending');

    const error = await rejection(inbox.erase(who.subject));
    expect(error).toBeInstanceOf(PayloadSealError);
    expect(error).toMatchObject({ code: 'payload_sealed', reason: 'unknown_key', keyId: 'k1' });
    expect(await inbox.get('msg_er_k2')).toMatchObject({ state: 'done', payload: 'removed' });
    expect(await inbox.get('msg_er_k2_done')).toMatchObject({ state: 'done', payload: 'removed' });
    expect(await inbox.get('msg_er_bystander')).toMatchObject({ state: 'pending', payload: 'kept' });
    expect(await inbox.get('msg_er_k1')).toMatchObject({ state: 'dead', payload: 'kept' });

    // Given the key it was sealed with, erase finishes the job.
    const both = await storage.inbox({ encryption: { keys: [k2, k1] } });
    expect(await both.erase(who.subject)).toEqual({ erased: 1 });
    expect(await both.get('msg_er_k1')).toMatchObject({ state: 'done', payload: 'removed' });
    expect(sealedValues(await storage.dump())).toHaveLength(1); // the bystander's
  });

  for (const encrypted of [false, true])
    it(`the proof, encryption ${encrypted ? 'on' : 'off'}: after erase a raw scan of everything stored finds no body, personal field or refId of the verification${encrypted ? '; before it, no plain body at all' : ''}`, async () => {
      const storage = await fresh();
      const inbox = await storage.inbox(encrypted ? { encryption: { keys: [{ id: 'current', key: key32() }] } } : {});
      const ledger = await storage.ledger?.();
      const erased = person('kyc');
      const kept = person('kyc');
      for (const [i, state] of (['dead', 'done', 'pending'] as const).entries()) {
        await stored(inbox, `msg_proof_erased_${i}`, erased.body(), state);
        await stored(inbox, `msg_proof_kept_${i}`, kept.body(), state);
      }
      for (const who of [erased, kept]) await ledger?.track(who.subject, { nextCheckAt: new Date(Date.now() + HOUR) });

      const before = await storage.dump();
      const inLedger = ledger === undefined ? [] : [erased.refId];
      // The scan sees what is stored: every personal field in plain text, or (sealed) none but the ledger's refIds.
      expect(erased.foundIn(before)).toEqual(encrypted ? inLedger : [erased.refId, erased.name, erased.address]);
      if (encrypted) {
        expect(sealedValues(before)).toHaveLength(6);
        for (const field of ['IN_REVIEW', 'kyc.session', 'quoted', kept.name]) expect(before).not.toContain(field);
      }

      expect(await inbox.erase(erased.subject)).toEqual({ erased: 3 });
      if (ledger !== undefined) {
        expect(await ledger.erase(erased.subject)).toBe(true);
        expect(await ledger.get(erased.subject)).toBeUndefined();
      }
      const after = await storage.dump();
      expect(erased.foundIn(after)).toEqual([]);
      if (encrypted) expect(sealedValues(after)).toHaveLength(3);
      else expect(kept.foundIn(after)).toEqual([kept.refId, kept.name, kept.address]);
      for (let i = 0; i < 3; i++) expect(await inbox.get(`msg_proof_erased_${i}`)).toMatchObject({ state: 'done', payload: 'removed' });
    });
}
