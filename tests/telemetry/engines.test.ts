import { PGlite } from '@electric-sql/pglite';
import { createClient, createInboxWorker, createReconciler, type InboxEngine, type LedgerEngine, type VerikitClient } from '@verikit/core';
import { createPostgresInbox, createPostgresLedger } from '@verikit/postgres';
import { createRedisInbox, createRedisLedger } from '@verikit/redis';
import { createFakeService, type FakeService, signWebhook } from '@verikit/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { captureMetrics, countOf, histogramOf, type MetricsCapture, sumOf } from '../../test-support/metrics.js';
import { POSTGRES_URL, REDIS_URL, requireService } from '../../test-support/services.js';
import { type ServedWebhook, serveWebhook } from '../../test-support/webhook-route.js';

const postgresAvailable = await requireService('PostgreSQL', POSTGRES_URL);
const redisAvailable = await requireService('Redis', REDIS_URL);
const run = `${process.pid}_${Date.now().toString(36)}`;
const READS_PER_MINUTE = 6_000;

/** An inbox and a ledger of one engine, on storage of this test's own. */
interface Engines {
  inbox: InboxEngine;
  ledger: LedgerEngine;
  /** Whether the inbox tells a repeat from a new delivery (BullMQ's add does not say: on Redis a repeat is `accepted` too). */
  tellsRepeats: boolean;
  close(): Promise<void>;
}

/**
 * The scenario, the same on every engine: deliveries over real HTTP through the Express adapter into
 * the engine's inbox, a worker observing each through the engine's ledger against the fake service,
 * a reconcile; every instrument asserted with the figures that must follow.
 */
function metricsScenario(open: () => Promise<Engines>) {
  it('counts the deliveries, times the runs and their attempts, reports depth as stats() does, and counts the ledger', async () => {
    const metrics: MetricsCapture = captureMetrics();
    const fake: FakeService = await createFakeService();
    const client: VerikitClient = createClient({ ...fake.clientOptions, maxRetries: 0, logger: false });
    const engines = await open();
    const { inbox, ledger } = engines;
    const options = { ledger, client, logger: false as const, readsPerMinute: READS_PER_MINUTE, onChange: () => {} };
    const worker = createInboxWorker({ inbox, ...options, retry: { baseDelayMs: 600_000 }, pollIntervalMs: 20 });
    let served: ServedWebhook | undefined;
    try {
      const tracking = createClient({ ...fake.clientOptions, ledger, logger: false });
      await tracking.kyb.createCase({ refId: 'biz-1' });
      await tracking.kyb.createCase({ refId: 'biz-2' });
      await tracking.kyc.createSession({ refId: 'person-1' });
      await tracking.close();
      fake.kyb.setStatus('biz-1', 'IN_REVIEW');
      // person-1's result cannot be read for now: its event is retried (in ten minutes: it stays retrying).
      fake.faults.inject('kyc.getResult', { kind: 'status', status: 503 });

      served = await serveWebhook({ secret: fake.credentials.webhookSecret, inbox, logger: false, maxBodyBytes: 4_096 });
      const secret = fake.credentials.webhookSecret;
      const deliveries = [
        signWebhook({ secret, id: 'msg_biz_1', payload: { type: 'kyb.case.status_changed', data: { refId: 'biz-1' } } }),
        signWebhook({ secret, id: 'msg_biz_2', payload: { type: 'kyb.case.status_changed', data: { refId: 'biz-2' } } }),
        signWebhook({ secret, id: 'msg_person_1', payload: { type: 'kyc.session.status_changed', data: { refId: 'person-1' } } }),
        // No verification named: with a ledger and no onEvent, dead-lettered at once.
        signWebhook({ secret, id: 'msg_unknown', payload: { type: 'account.updated', data: {} } }),
      ];
      for (const delivery of deliveries) expect(await served.send(delivery)).toBe(204);
      for (const delivery of deliveries.slice(0, 2)) expect(await served.send(delivery)).toBe(204);
      const forged = signWebhook({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', payload: { type: 'kyb.case.status_changed' } });
      expect(await served.send(forged)).toBe(400);
      // Its Content-Length over maxBodyBytes: answered by the route before the handler runs.
      const oversized = signWebhook({ secret, payload: { type: 'kyb.case.status_changed', note: 'x'.repeat(8_192) } });
      expect(await served.send(oversized)).toBe(413);

      worker.start();
      // Settled: person-1 retrying (pending), the unknown event dead, the others done.
      let stats = await inbox.stats();
      const deadline = Date.now() + 30_000;
      while (stats.pending !== 1 || stats.retrying !== 1 || stats.dead !== 1) {
        if (Date.now() > deadline) throw new Error(`the worker did not settle: ${JSON.stringify(stats)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        stats = await inbox.stats();
      }
      const collected = await metrics.collect();
      const ledgerStats = await ledger.stats();

      // Deliveries, by outcome and reason, as they were answered over HTTP.
      const repeats = engines.tellsRepeats ? 2 : 0;
      expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'accepted' })).toBe(6 - repeats);
      expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'duplicate' })).toBe(repeats);
      expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'refused', 'verikit.reason': 'invalid_signature' })).toBe(
        1,
      );
      expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'refused', 'verikit.reason': 'payload_too_large' })).toBe(
        1,
      );
      expect(sumOf(collected, 'verikit.webhook.deliveries')).toBe(8);
      // Each answer timed once, at the route (the 413 it gave before its handler too).
      expect(countOf(collected, 'verikit.webhook.duration')).toBe(8);

      // Runs: two observed and done, one retried (the service answered 503), one dead-lettered.
      const runs = (attributes: Record<string, string>) => countOf(collected, 'messaging.process.duration', attributes);
      expect(runs({ 'verikit.outcome': 'done' })).toBe(2);
      expect(runs({ 'verikit.outcome': 'retry', 'error.type': 'server_error' })).toBe(1);
      expect(runs({ 'verikit.outcome': 'dead_lettered', 'error.type': 'unidentified_event' })).toBe(1);
      expect(histogramOf(collected, 'verikit.inbox.attempts', { 'verikit.outcome': 'done' })).toMatchObject({ count: 2, sum: 2 });
      expect(histogramOf(collected, 'verikit.inbox.attempts', { 'verikit.outcome': 'dead_lettered' })).toMatchObject({ count: 1, sum: 1 });

      // Depth: the engine's own figures.
      expect(sumOf(collected, 'verikit.inbox.pending')).toBe(stats.pending);
      expect(sumOf(collected, 'verikit.inbox.retrying')).toBe(stats.retrying);
      expect(sumOf(collected, 'verikit.inbox.dead')).toBe(stats.dead);
      const age = sumOf(collected, 'verikit.inbox.oldest_pending.age');
      expect(age).toBeGreaterThan(0);
      expect(Math.abs(age - (stats.oldestPendingAgeMs ?? 0) / 1000)).toBeLessThan(5);

      // The ledger: three reads for the webhooks (the failed one too), two changes, nothing missed yet.
      expect(sumOf(collected, 'verikit.ledger.reads', { 'verikit.source': 'webhook' })).toBe(3);
      expect(sumOf(collected, 'verikit.ledger.changes', { 'verikit.source': 'webhook', 'verikit.kind': 'kyb' })).toBe(2);
      expect(sumOf(collected, 'verikit.ledger.missed_webhooks')).toBe(0);
      expect(sumOf(collected, 'verikit.ledger.pending', { 'verikit.kind': 'kyb' })).toBe(ledgerStats.pendingByKind.kyb.pending);
      expect(sumOf(collected, 'verikit.ledger.pending', { 'verikit.kind': 'kyc' })).toBe(ledgerStats.pendingByKind.kyc.pending);
      expect(ledgerStats.pendingByKind).toMatchObject({ kyb: { pending: 2 }, kyc: { pending: 1 } });
      expect(sumOf(collected, 'verikit.ledger.oldest_pending.age', { 'verikit.kind': 'kyb' })).toBeGreaterThan(0);
      expect(sumOf(collected, 'verikit.ledger.read_budget')).toBe(READS_PER_MINUTE);

      // A change whose webhook never came: the reconciler finds it, a missed webhook.
      fake.kyb.setStatus('biz-2', 'COMPLETED');
      const reconciler = createReconciler({ ...options, pollIntervalMs: 20 });
      expect(await reconciler.check({ kind: 'kyb', refId: 'biz-2' })).toBe('changed');
      const after = await metrics.collect();
      expect(sumOf(after, 'verikit.ledger.reads', { 'verikit.source': 'reconcile' })).toBe(1);
      expect(sumOf(after, 'verikit.ledger.changes', { 'verikit.source': 'reconcile', 'verikit.kind': 'kyb' })).toBe(1);
      expect(sumOf(after, 'verikit.ledger.missed_webhooks', { 'verikit.kind': 'kyb' })).toBe(1);
    } finally {
      await worker.stop();
      await served?.close();
      await client.close();
      await fake.close();
      await engines.close();
      await metrics.stop();
    }
  });
}

describe('PGlite', () => {
  metricsScenario(async () => {
    const db = new PGlite();
    const inbox = createPostgresInbox({ db });
    const ledger = createPostgresLedger({ db });
    await inbox.migrate();
    await ledger.migrate();
    return {
      inbox,
      ledger,
      tellsRepeats: true,
      close: async () => {
        await inbox.close();
        await db.close();
      },
    };
  });
});

describe.runIf(postgresAvailable)('PostgreSQL server', () => {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 6 });
  const schema = `verikit_metrics_${run}`;
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  metricsScenario(async () => {
    const inbox = createPostgresInbox({ db: pool, schema });
    const ledger = createPostgresLedger({ db: pool, schema });
    await inbox.migrate();
    await ledger.migrate();
    return { inbox, ledger, tellsRepeats: true, close: () => inbox.close() };
  });
});

describe.runIf(redisAvailable)('Redis', () => {
  const redis = new Redis(REDIS_URL);
  const prefix = `verikit-metrics-${run}`;
  afterAll(async () => {
    for (const pattern of [`{${prefix}}*`, `${prefix}:*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length > 0) await redis.del(...keys);
    }
    redis.disconnect();
  });
  metricsScenario(async () => {
    const inbox = createRedisInbox({ redis, prefix: `{${prefix}}`, persistence: 'ignore', logger: false });
    const ledger = createRedisLedger({ redis, prefix: `${prefix}:ledger:`, persistence: 'ignore', logger: false });
    return { inbox, ledger, tellsRepeats: false, close: () => inbox.close() };
  });
});
