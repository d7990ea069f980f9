import { PGlite } from '@electric-sql/pglite';
import {
  createClient,
  createInboxWorker,
  createMemoryLedger,
  createWebhookHandler,
  type InboxWorker,
  type KybCaseDetails,
  type LedgerEngine,
  type VerikitClient,
} from '@verikit/core';
import { createFakeService, type FakeService, signWebhook } from '@verikit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresInbox } from '../src/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const until = async (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/**
 * A client whose first `kyb.getCase` reads the case, then answers only once `release()` is called:
 * a slow fetch holding a result that goes stale while it waits.
 */
function slowFirstRead(client: VerikitClient) {
  let read!: () => void;
  let release!: () => void;
  const firstRead = new Promise<void>((resolve) => (read = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const slow: VerikitClient = {
    ...client,
    kyb: {
      ...client.kyb,
      async getCase(refId, options): Promise<KybCaseDetails> {
        const result = await client.kyb.getCase(refId, options);
        if (++calls === 1) {
          read();
          await released;
        }
        return result;
      },
    },
  };
  return { slow, firstRead, release };
}

/** A case at IN_REVIEW on a fake, an inbox on PGlite, and a route to deliver its events. */
async function scene() {
  const fake: FakeService = await createFakeService();
  cleanups.push(() => fake.close());
  const client = createClient({ ...fake.clientOptions, logger: false });
  await client.kyb.createCase({ refId: 'biz-42' });
  fake.kyb.setStatus('biz-42', 'IN_REVIEW');
  const db = await PGlite.create();
  cleanups.push(() => db.close());
  const inbox = createPostgresInbox({ db, schema: 'race' });
  cleanups.push(() => inbox.close());
  await inbox.migrate();
  await db.query('CREATE TABLE race.verifications (ref_id text PRIMARY KEY, status text NOT NULL)');
  await db.query('CREATE TABLE race.reactions (ref_id text NOT NULL, version int NOT NULL, status text NOT NULL)');
  const handler = createWebhookHandler({ secret: SECRET, inbox });
  const deliver = async () => {
    const signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.status_changed', data: { refId: 'biz-42' } } });
    expect((await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(204);
  };
  const stored = async () =>
    ((await db.query('SELECT status FROM race.verifications WHERE ref_id = $1', ['biz-42'])).rows[0] as { status: string } | undefined)
      ?.status;
  const pending = async () =>
    ((await db.query("SELECT count(*)::int AS n FROM race.verikit_inbox WHERE state <> 'done'")).rows[0] as { n: number }).n;
  const start = (worker: InboxWorker) => {
    cleanups.push(() => worker.stop({ timeoutMs: 2_000 }));
    worker.start();
  };
  return { fake, client, db, inbox, deliver, stored, pending, start };
}

describe('two events of one refId, the first one fetching slowly', () => {
  it("today's worker writing ctx.fetchResult()'s status ends stale: IN_REVIEW over COMPLETED", async () => {
    const { fake, client, inbox, deliver, stored, pending, start } = await scene();
    const { slow, firstRead, release } = slowFirstRead(client);
    start(
      createInboxWorker({
        inbox,
        client: slow,
        concurrency: 2,
        pollIntervalMs: 20,
        logger: false,
        onEvent: async (ctx) => {
          const { result } = await ctx.fetchResult();
          await ctx.sql.query(
            'INSERT INTO race.verifications (ref_id, status) VALUES ($1, $2) ON CONFLICT (ref_id) DO UPDATE SET status = EXCLUDED.status',
            ['biz-42', result.status],
          );
        },
      }),
    );
    await deliver();
    await firstRead;
    fake.kyb.decide('biz-42', 'COMPLETED');
    await deliver();
    await until(async () => (await stored()) === 'COMPLETED', 'the second event');
    release();
    await until(async () => (await pending()) === 0, 'both events done');
    expect(fake.kyb.get('biz-42').status).toBe('COMPLETED');
    expect(await stored()).toBe('IN_REVIEW');
  });

  it('through the ledger the record follows the service: IN_REVIEW (v1), then COMPLETED (v2), each reaction once', async () => {
    const { fake, client, inbox, deliver, pending, start } = await scene();
    const { slow, firstRead, release } = slowFirstRead(client);
    const ledger: LedgerEngine = createMemoryLedger();
    const reactions: Array<[number, string | null, string]> = [];
    start(
      createInboxWorker({
        inbox,
        client: slow,
        ledger,
        concurrency: 2,
        pollIntervalMs: 20,
        readsPerMinute: 60_000,
        logger: false,
        onChange: async (ctx) => {
          reactions.push([ctx.version, ctx.previous, ctx.current]);
        },
      }),
    );
    await deliver();
    await firstRead;
    fake.kyb.decide('biz-42', 'COMPLETED');
    await deliver();
    // The second event waits for the refId's lock while the first fetch is held.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reactions).toEqual([]);
    release();
    await until(async () => (await pending()) === 0, 'both events done');
    expect(reactions).toEqual([
      [1, null, 'IN_REVIEW'],
      [2, 'IN_REVIEW', 'COMPLETED'],
    ]);
    expect((await ledger.get({ kind: 'kyb', refId: 'biz-42' }))?.status).toBe('COMPLETED');
  });
});

describe('the worker with a ledger', () => {
  it('dead-letters an event it cannot identify, with the reason, when there is no onEvent; onEvent gets it when given', async () => {
    const { client, inbox, start } = await scene();
    const handler = createWebhookHandler({ secret: SECRET, inbox });
    const signed = signWebhook({ secret: SECRET, payload: { type: 'organization.updated', data: {} } });
    expect((await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(204);
    const worker = createInboxWorker({
      inbox,
      client,
      ledger: createMemoryLedger(),
      onChange: () => {},
      pollIntervalMs: 20,
      logger: false,
    });
    start(worker);
    await until(async () => (await worker.deadLetters()).length === 1, 'the dead letter');
    const [dead] = await worker.deadLetters();
    expect(dead).toMatchObject({ id: signed.id, attempts: 1 });
    expect(dead?.lastError).toMatch(/unidentified_event/);
    await worker.stop();
    const seen: string[] = [];
    const withOnEvent = createInboxWorker({
      inbox,
      client,
      ledger: createMemoryLedger(),
      onChange: () => {},
      onEvent: (ctx) => {
        seen.push(ctx.id);
      },
      pollIntervalMs: 20,
      logger: false,
    });
    start(withOnEvent);
    expect(await withOnEvent.replay(signed.id)).toBe(true);
    await until(() => seen.length === 1, 'onEvent');
    expect(seen).toEqual([signed.id]);
  });

  it('a read that fails (401) fails the attempt: retried with backoff, logged as the observation, never a change recorded that did not happen', async () => {
    const { fake, client, inbox, deliver, pending, start } = await scene();
    const ledger = createMemoryLedger();
    const changes: string[] = [];
    const failures: unknown[] = [];
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_fields: unknown, message: string) => void warnings.push(message), error() {} };
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 401 }, { times: 2 });
    start(
      createInboxWorker({
        inbox,
        client,
        ledger,
        readsPerMinute: 60_000,
        retry: { baseDelayMs: 10, maxDelayMs: 20 },
        pollIntervalMs: 20,
        logger,
        onError: (error) => failures.push(error),
        onChange: (ctx) => {
          changes.push(ctx.current);
        },
      }),
    );
    await deliver();
    await until(async () => (await pending()) === 0, 'the event done');
    expect(failures.map((e) => (e as { code?: string }).code)).toEqual(['authentication', 'authentication']);
    expect(warnings).toEqual(Array(2).fill('inbox ledger observation failed; it will be retried'));
    expect(changes).toEqual(['IN_REVIEW']);
  });

  it('refuses a ledger without a client or onChange, naming the option', () => {
    const inbox = createPostgresInbox({ db: { query: async () => ({ rows: [] }), transaction: async () => {} } as never, schema: 'x' });
    expect(() => createInboxWorker({ inbox, ledger: createMemoryLedger(), onChange: () => {} })).toThrow(/client/);
    expect(() => createInboxWorker({ inbox, ledger: createMemoryLedger(), client: {} as VerikitClient })).toThrow(/client/);
    expect(() => createInboxWorker({ inbox } as never)).toThrow(/onEvent/);
  });
});
