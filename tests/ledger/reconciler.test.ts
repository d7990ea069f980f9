import {
  AuthenticationError,
  ConfigurationError,
  createClient,
  createMemoryLedger,
  createReconciler,
  type LedgerEngine,
  NotFoundError,
} from '@verikit/core';
import type { FakeService } from '@verikit/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeWithClient, recordChanges, recordingLogger, until } from './helpers.js';

const FAST = { stepsMs: [50, 100, 200], repeatMs: 300, finalRecheckMs: 300, failureBaseMs: 50, failureMaxMs: 200 };
const fakes: FakeService[] = [];
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const fake of fakes.splice(0)) await fake.close();
});

async function setup(options: { readsPerMinute?: number } = {}) {
  const { fake, client } = await fakeWithClient();
  fakes.push(fake);
  fake.webhooks.down();
  const ledger = createMemoryLedger();
  const logger = recordingLogger();
  const changes = recordChanges();
  const tracking = createClient({ ...fake.clientOptions, ledger, ledgerSchedule: FAST, logger: false });
  const reconciler = createReconciler({
    ledger,
    client,
    onChange: changes.onChange,
    schedule: FAST,
    readsPerMinute: options.readsPerMinute ?? 6_000,
    pollIntervalMs: 20,
    logger,
  });
  stops.push(() => reconciler.stop());
  return { fake, client, ledger, logger, reconciler, tracking, ...changes };
}

describe('the reconciler', () => {
  it('finds a change whose webhook never arrived, runs onChange once, and warns naming the refId', async () => {
    const { fake, tracking, reconciler, seen, logger, ledger } = await setup();
    await tracking.kyb.createCase({ refId: 'biz-1' });
    expect((await ledger.get({ kind: 'kyb', refId: 'biz-1' }))?.version).toBe(0);
    reconciler.start();
    await until(() => seen.length === 1);
    fake.kyb.setStatus('biz-1', 'IN_REVIEW');
    await until(() => seen.length === 2);
    expect(seen).toEqual([
      { kind: 'kyb', refId: 'biz-1', previous: null, current: 'NOT_STARTED', version: 1, source: 'reconcile' },
      { kind: 'kyb', refId: 'biz-1', previous: 'NOT_STARTED', current: 'IN_REVIEW', version: 2, source: 'reconcile' },
    ]);
    const missed = logger.lines.filter((l) => l.message.includes('a webhook was missed'));
    // The first sight of a new case is its baseline, not a missed webhook.
    expect(missed.map((l) => [l.level, l.fields.refId, l.fields.previous, l.fields.current])).toEqual([
      ['warn', 'biz-1', 'NOT_STARTED', 'IN_REVIEW'],
    ]);
    expect(reconciler.stats().missedWebhooks).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen).toHaveLength(2);
  });

  it('records a final decision, a reopen and an overturn in the order they happened, never twice', async () => {
    const { fake, tracking, reconciler, seen } = await setup();
    await tracking.kyb.createCase({ refId: 'biz-2' });
    reconciler.start();
    await until(() => seen.length === 1);
    for (const step of [() => fake.kyb.setStatus('biz-2', 'IN_REVIEW'), () => fake.kyb.decide('biz-2', 'COMPLETED')]) {
      const before = seen.length;
      step();
      await until(() => seen.length === before + 1);
    }
    const history = fake.kyb.history('biz-2');
    expect(seen.map((s) => s.current)).toEqual(history.map((h) => h.status));
    expect(seen.map((s) => s.version)).toEqual([1, 2, 3]);
  });

  it('spaces its reads by the budget: 30 due rows at 600 reads/min are read 100 ms apart, never faster', async () => {
    const { fake, tracking, reconciler } = await setup({ readsPerMinute: 600 });
    for (let i = 0; i < 30; i++) await tracking.kyb.createCase({ refId: `b-${i}` });
    await new Promise((resolve) => setTimeout(resolve, 100));
    reconciler.start();
    const reads = () => fake.requests.filter((r) => r.route === 'kyb.getCase');
    await until(() => reads().length >= 30);
    const at = reads().map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - (at[i] as number));
    // Slots are 100 ms apart at the ledger; a read reaches the fake a few ms after its slot, so a gap may shrink by that jitter.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(70);
    expect(fake.maxReadsInWindow(1_000)).toBeLessThanOrEqual(11);
  });

  it('a 429 pauses every read for its Retry-After', async () => {
    const { fake, tracking, reconciler, seen } = await setup();
    for (let i = 0; i < 5; i++) await tracking.kyb.createCase({ refId: `r-${i}` });
    fake.setRateLimit({ readsPerMinute: 2, retryAfterSeconds: 1 });
    reconciler.start();
    await until(() => fake.requests.some((r) => r.status === 429));
    const limited = fake.requests.find((r) => r.status === 429)?.at as number;
    fake.setRateLimit(undefined);
    await until(() => seen.length === 5);
    const next = fake.requests.filter((r) => r.route === 'kyb.getCase' && r.at > limited);
    expect((next[0]?.at as number) - limited).toBeGreaterThanOrEqual(950);
  });

  it('a failing read (401) records nothing, is counted and retried with backoff, and is recorded once the service answers', async () => {
    const { fake, tracking, reconciler, seen, logger } = await setup();
    await tracking.kyb.createCase({ refId: 'auth' });
    fake.faults.inject('kyb.getCase', { kind: 'status', status: 401 }, { times: 2 });
    const errors: unknown[] = [];
    reconciler.start();
    await until(() => seen.length === 1);
    expect(reconciler.stats().failures).toBe(2);
    expect(logger.lines.filter((l) => l.message.includes('a check failed')).map((l) => l.fields.refId)).toEqual(['auth', 'auth']);
    expect(logger.lines.find((l) => l.message.includes('a check failed'))?.fields.err).toBeInstanceOf(AuthenticationError);
    expect(errors).toEqual([]);
    expect(seen[0]?.version).toBe(1);
  });

  it('an onChange that throws records nothing; the change is recorded once it succeeds', async () => {
    const { fake, client, ledger } = await setup();
    let calls = 0;
    const reconciler = createReconciler({
      ledger,
      client,
      schedule: FAST,
      readsPerMinute: 6_000,
      pollIntervalMs: 20,
      logger: false,
      onChange: () => {
        calls++;
        if (calls < 3) throw new Error('database busy');
      },
    });
    stops.push(() => reconciler.stop());
    fake.kyb.setStatus((await createCaseFor(fake, 'thrower')).refId, 'IN_PROGRESS');
    await ledger.track({ kind: 'kyb', refId: 'thrower' }, { nextCheckAt: new Date() });
    reconciler.start();
    await until(async () => (await ledger.get({ kind: 'kyb', refId: 'thrower' }))?.version === 1);
    expect(calls).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(calls).toBe(3);
  });

  it('a verification the service does not know yet (404) is never recorded as a change', async () => {
    const { ledger, reconciler, seen, logger } = await setup();
    await ledger.track({ kind: 'kyc', refId: 'ghost' }, { nextCheckAt: new Date() });
    reconciler.start();
    await until(() => reconciler.stats().failures >= 2);
    expect(seen).toEqual([]);
    expect((await ledger.get({ kind: 'kyc', refId: 'ghost' }))?.version).toBe(0);
    expect(logger.lines.some((l) => l.fields.refId === 'ghost' && l.fields.err instanceof NotFoundError)).toBe(true);
  });

  it('check() observes one verification now, tracking it when the ledger did not know it', async () => {
    const { fake, reconciler, seen, ledger } = await setup();
    await createCaseFor(fake, 'elsewhere');
    expect(await reconciler.check({ kind: 'kyb', refId: 'elsewhere' })).toBe('changed');
    expect(await reconciler.check({ kind: 'kyb', refId: 'elsewhere' })).toBe('unchanged');
    expect(seen).toHaveLength(1);
    expect((await ledger.get({ kind: 'kyb', refId: 'elsewhere' }))?.status).toBe('NOT_STARTED');
    await expect(reconciler.check({ kind: 'kyz', refId: 'x' } as never)).rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('warns when verifications are pending and no webhook has arrived for silenceWarningMs', async () => {
    const { client, ledger, fake } = await setup();
    const logger = recordingLogger();
    await createCaseFor(fake, 'quiet');
    await ledger.track({ kind: 'kyb', refId: 'quiet' }, { nextCheckAt: new Date(Date.now() + 60_000) });
    const reconciler = createReconciler({ ledger, client, onChange: () => {}, silenceWarningMs: 100, pollIntervalMs: 20, logger });
    stops.push(() => reconciler.stop());
    reconciler.start();
    await until(() => logger.lines.some((l) => l.message.includes('no webhook has arrived')));
    expect(logger.lines.find((l) => l.message.includes('no webhook has arrived'))?.fields.pending).toBe(1);
  });

  it('refuses bad options with a ConfigurationError naming them', async () => {
    const ledger = createMemoryLedger();
    const { client } = await setup();
    expect(() => createReconciler({ ledger, onChange: () => {} } as never)).toThrow(ConfigurationError);
    expect(() => createReconciler({ ledger, client } as never)).toThrow(/onChange/);
    expect(() => createReconciler({ ledger, client, onChange: () => {}, readsPerMinute: 0 })).toThrow(/readsPerMinute/);
    expect(() => createReconciler({ ledger, client, onChange: () => {}, schedule: { stepsMs: [5, 1] } })).toThrow(/stepsMs/);
    expect(() => createReconciler({ ledger: {} as LedgerEngine, client, onChange: () => {} })).toThrow(/ledger/);
  });
});

describe('the client with a ledger', () => {
  it('tracks a refId before its create call is sent, and forgets it when the service refuses the call', async () => {
    const { fake } = await fakeWithClient();
    fakes.push(fake);
    const ledger = createMemoryLedger();
    const atSend: Array<number | undefined> = [];
    const client = createClient({
      ...fake.clientOptions,
      ledger,
      logger: false,
      maxRetries: 0,
      onRequest: () => {
        void ledger.get({ kind: 'kyc', refId: 'person-1' }).then((entry) => atSend.push(entry?.version));
      },
    });
    await client.kyc.createSession({ refId: 'person-1' });
    expect(atSend).toEqual([0]);
    expect(await ledger.get({ kind: 'kyc', refId: 'person-1' })).toMatchObject({ version: 0, status: null });
    fake.faults.inject('kyb.createCase', { kind: 'status', status: 400 }, { times: 1 });
    await expect(client.kyb.createCase({ refId: 'refused' })).rejects.toMatchObject({ code: 'bad_request' });
    expect(await ledger.get({ kind: 'kyb', refId: 'refused' })).toBeUndefined();
    fake.faults.inject('kyb.createCase', { kind: 'status', status: 503 }, { times: 1 });
    await expect(client.kyb.createCase({ refId: 'unknown-outcome' })).rejects.toMatchObject({ code: 'server_error' });
    expect(await ledger.get({ kind: 'kyb', refId: 'unknown-outcome' })).toMatchObject({ version: 0 });
    await expect(client.kyb.createCase({ refId: 'x'.repeat(300) })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

/** Creates a case on the fake the way another system would (no ledger). */
async function createCaseFor(fake: FakeService, refId: string) {
  const other = createClient({ ...fake.clientOptions, logger: false });
  await other.kyb.createCase({ refId });
  return { refId };
}

describe('stopping the reconciler', () => {
  it('hands back the row it held while waiting for its read slot', async () => {
    const { fake, client } = await fakeWithClient();
    fakes.push(fake);
    const ledger = createMemoryLedger();
    const reconciler = createReconciler({ ledger, client, onChange: () => {}, readsPerMinute: 6, pollIntervalMs: 20, logger: false });
    for (let i = 0; i < 3; i++) await ledger.track({ kind: 'kyb', refId: `held-${i}` }, { nextCheckAt: new Date(Date.now() - 1_000) });
    // The first read takes the budget's only slot for 10 s; the reconciler's next check then waits for one while holding its row.
    await ledger.reserveRead({ intervalMs: 10_000 });
    reconciler.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await reconciler.stop();
    for (let i = 0; i < 3; i++) expect(typeof (await ledger.lock({ kind: 'kyb', refId: `held-${i}` }, { leaseMs: 1_000 }))).toBe('object');
  });
});
