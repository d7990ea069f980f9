import * as otel from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type Collected,
  captureMetrics,
  countOf,
  histogramOf,
  type MetricsCapture,
  pointsOf,
  sumOf,
} from '../../../test-support/metrics.js';
import {
  ConfigurationError,
  createClient,
  createFetchWebhookHandler,
  createInboxWorker,
  createMemoryLedger,
  createReconciler,
  createVerikitRoutes,
  createWebhookHandler,
  type InboxStats,
  type InlineWebhookOptions,
  MemoryIdempotencyStore,
  type WebhookResponse,
} from '../src/index.node.js';
import { detailsPayload } from './helpers/fixtures.js';
import { failingOnBad, scriptedInbox } from './helpers/scripted-inbox.js';
import { json, startServer } from './helpers/server.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1"}}';
const deliver = (handle: (r: { method: string; headers: Record<string, string>; body: string }) => Promise<WebhookResponse>, id: string) =>
  handle({ method: 'POST', headers: svixHeaders(BODY, { id }), body: BODY });

/** An inline handler whose onEvent does nothing, with the options given. */
const noopHandler = (options: Partial<InlineWebhookOptions> = {}) =>
  createWebhookHandler({ secret: SECRET, store: new MemoryIdempotencyStore(), onEvent: () => {}, logger: false, ...options });

let capture: MetricsCapture | undefined;
const register = () => {
  capture = captureMetrics();
  return capture;
};
afterEach(async () => {
  await capture?.stop();
  capture = undefined;
  vi.useRealTimers();
});

/** Every attribute value of every point: what a metric could leak, or multiply series by. */
const attributeValues = (collected: Collected) =>
  [...collected.values()].flatMap((points) => points.flatMap((point) => Object.values(point.attributes).map(String)));

describe('webhook deliveries', () => {
  it('counts accepted, duplicate, refused (by reason) and failed deliveries, and times each answer', async () => {
    const metrics = register();
    let fail = false;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      logger: false,
      onEvent: () => {
        if (fail) throw new Error('downstream refused');
      },
    });
    for (const id of ['msg_a', 'msg_b', 'msg_c']) expect((await deliver(handle, id)).status).toBe(204);
    for (const id of ['msg_a', 'msg_b']) expect((await deliver(handle, id)).status).toBe(204);
    const forged = { ...svixHeaders(BODY, { id: 'msg_forged' }), 'svix-signature': 'v1,AAAA' };
    expect((await handle({ method: 'POST', headers: forged, body: BODY })).status).toBe(400);
    expect((await handle({ method: 'POST', headers: forged, body: BODY })).status).toBe(400);
    expect((await handle({ method: 'GET', headers: {}, body: '' })).status).toBe(405);
    fail = true;
    expect((await deliver(handle, 'msg_d')).status).toBe(500);

    const collected = await metrics.collect();
    const deliveries = 'verikit.webhook.deliveries';
    expect(sumOf(collected, deliveries, { 'verikit.outcome': 'accepted' })).toBe(3);
    expect(sumOf(collected, deliveries, { 'verikit.outcome': 'duplicate' })).toBe(2);
    expect(sumOf(collected, deliveries, { 'verikit.outcome': 'refused', 'verikit.reason': 'invalid_signature' })).toBe(2);
    expect(sumOf(collected, deliveries, { 'verikit.outcome': 'refused', 'verikit.reason': 'method_not_allowed' })).toBe(1);
    expect(sumOf(collected, deliveries, { 'verikit.outcome': 'failed', 'verikit.reason': 'handler_failed' })).toBe(1);
    expect(sumOf(collected, deliveries)).toBe(9);
    expect(pointsOf(collected, deliveries)[0]).toMatchObject({ unit: '{delivery}', scope: '@verikit/core' });
    // A refusal's reason is on the counter only: the histogram's series stay few.
    expect(countOf(collected, 'verikit.webhook.duration', { 'verikit.outcome': 'accepted' })).toBe(3);
    expect(countOf(collected, 'verikit.webhook.duration', { 'verikit.outcome': 'refused' })).toBe(3);
    expect(countOf(collected, 'verikit.webhook.duration')).toBe(9);
    expect(pointsOf(collected, 'verikit.webhook.duration').every((p) => p.unit === 's' && !('verikit.reason' in p.attributes))).toBe(true);
    const accepted = histogramOf(collected, 'verikit.webhook.duration', { 'verikit.outcome': 'accepted' });
    // Seconds, on the OpenTelemetry HTTP buckets: three no-op answers take well under a second.
    expect(accepted.boundaries).toEqual([0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]);
    expect(accepted.sum).toBeGreaterThan(0);
    expect(accepted.sum).toBeLessThan(1);
    expect(attributeValues(collected).some((value) => value.startsWith('msg_'))).toBe(false);
  });

  it('inbox mode: accepted and duplicate as the inbox says, and a failing inbox as failed (inbox_unavailable)', async () => {
    const metrics = register();
    const seen = new Set<string>();
    let down = false;
    const handle = createWebhookHandler({
      secret: SECRET,
      logger: false,
      inbox: {
        accept: async ({ id }) => {
          if (down) throw new Error('connection refused');
          if (seen.has(id)) return 'duplicate';
          seen.add(id);
          return 'accepted';
        },
      },
    });
    for (const id of ['msg_1', 'msg_2', 'msg_1']) expect((await deliver(handle, id)).status).toBe(204);
    down = true;
    expect((await deliver(handle, 'msg_3')).status).toBe(503);
    const collected = await metrics.collect();
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'accepted' })).toBe(2);
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'duplicate' })).toBe(1);
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'failed', 'verikit.reason': 'inbox_unavailable' })).toBe(1);
  });

  it('a route counts each answer once, those it gives before its handler runs too: a declared body too large, a body a parser consumed', async () => {
    const metrics = register();
    const routes = createVerikitRoutes({
      webhook: { secret: SECRET, store: new MemoryIdempotencyStore(), onEvent: () => {}, logger: false },
    });
    const route = routes.webhook;
    if (route === undefined) throw new Error('no webhook route');
    const big = await route.receive({ method: 'POST', headers: { 'content-length': String(2 ** 21) }, body: { kind: 'consumed' } });
    expect(big.status).toBe(413);
    const consumed = await route.receive({ method: 'POST', headers: svixHeaders(BODY), body: { kind: 'consumed' } });
    expect(consumed.status).toBe(500);
    const ok = await route.receive({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_r' }), body: { kind: 'bytes', bytes: BODY } });
    expect(ok.status).toBe(204);
    const collected = await metrics.collect();
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.reason': 'payload_too_large' })).toBe(1);
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'failed', 'verikit.reason': 'raw_body_unavailable' })).toBe(
      1,
    );
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'accepted' })).toBe(1);
    // Each answer once, at the route: the handler's among them is not counted twice.
    expect(sumOf(collected, 'verikit.webhook.deliveries')).toBe(3);
    expect(countOf(collected, 'verikit.webhook.duration')).toBe(3);
  });

  it('the Fetch handler counts its answers too: a delivery, its repeat and one refused', async () => {
    const metrics = register();
    const handle = createFetchWebhookHandler({ secret: SECRET, store: new MemoryIdempotencyStore(), onEvent: () => {}, logger: false });
    const post = (headers: Record<string, string>) =>
      handle(new Request('http://localhost/webhook', { method: 'POST', headers, body: BODY }));
    expect((await post(svixHeaders(BODY, { id: 'msg_fetch' }))).status).toBe(204);
    expect((await post(svixHeaders(BODY, { id: 'msg_fetch' }))).status).toBe(204);
    expect((await post({ ...svixHeaders(BODY, { id: 'msg_fetch_forged' }), 'svix-signature': 'v1,AAAA' })).status).toBe(400);
    const collected = await metrics.collect();
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'accepted' })).toBe(1);
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'duplicate' })).toBe(1);
    expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.reason': 'invalid_signature' })).toBe(1);
    expect(countOf(collected, 'verikit.webhook.duration')).toBe(3);
  });

  it('a meter provider registered after the handler started is used from the next delivery; a replaced one too', async () => {
    const handle = noopHandler();
    // Nothing registered: the API hands out no-op meters, and nothing is kept.
    expect((await deliver(handle, 'msg_before')).status).toBe(204);
    const first = register();
    await deliver(handle, 'msg_after_1');
    await deliver(handle, 'msg_after_2');
    expect(sumOf(await first.collect(), 'verikit.webhook.deliveries')).toBe(2);
    await first.stop();
    const second = register();
    await deliver(handle, 'msg_after_3');
    expect(sumOf(await second.collect(), 'verikit.webhook.deliveries')).toBe(1);
  });

  it('telemetry: false measures nothing; the API passed as telemetry measures', async () => {
    const metrics = register();
    const off = noopHandler({ telemetry: false });
    await deliver(off, 'msg_off');
    expect((await metrics.collect()).get('verikit.webhook.deliveries')).toBeUndefined();
    const given = noopHandler({ telemetry: otel });
    await deliver(given, 'msg_given');
    expect(sumOf(await metrics.collect(), 'verikit.webhook.deliveries', { 'verikit.outcome': 'accepted' })).toBe(1);
    expect(() => noopHandler({ telemetry: {} as never })).toThrow(ConfigurationError);
  });
});

const STATS: InboxStats = { pending: 7, retrying: 2, dead: 3, oldestPendingAt: new Date(Date.now() - 90_000), oldestPendingAgeMs: 90_000 };

describe('inbox worker', () => {
  it('times each run by outcome, with the error type of a failed one, and counts the attempts an event took', async () => {
    const metrics = register();
    const { engine, queue, event } = scriptedInbox(async () => STATS);
    queue.push(event('msg_ok', 1), event('msg_bad', 1), event('msg_bad', 2), event('msg_late', 3));
    const worker = failingOnBad(engine);
    worker.start();
    await vi.waitFor(async () => expect(countOf(await metrics.collect(), 'messaging.process.duration')).toBe(4));
    await worker.stop();
    const collected = await metrics.collect();
    const run = { 'messaging.system': 'verikit', 'messaging.operation.name': 'process' };
    expect(countOf(collected, 'messaging.process.duration', { ...run, 'verikit.outcome': 'done' })).toBe(1);
    expect(countOf(collected, 'messaging.process.duration', { ...run, 'verikit.outcome': 'retry', 'error.type': 'invalid_config' })).toBe(
      1,
    );
    expect(countOf(collected, 'messaging.process.duration', { 'verikit.outcome': 'dead_lettered', 'error.type': 'invalid_config' })).toBe(
      1,
    );
    // Leased more often than maxAttempts: dead-lettered without running (its worker died before).
    expect(countOf(collected, 'messaging.process.duration', { 'verikit.outcome': 'dead_lettered', 'error.type': 'event_abandoned' })).toBe(
      1,
    );
    // Done at its first attempt; dead-lettered at its 2nd and (abandoned) at its 3rd.
    expect(histogramOf(collected, 'verikit.inbox.attempts', { 'verikit.outcome': 'done' })).toMatchObject({ count: 1, sum: 1 });
    expect(histogramOf(collected, 'verikit.inbox.attempts', { 'verikit.outcome': 'dead_lettered' })).toMatchObject({ count: 2, sum: 5 });
    expect(pointsOf(collected, 'messaging.process.duration')[0]?.unit).toBe('s');
  });

  it("reports the inbox's depth as stats() answers it, once however many workers run on it, and stops with the last", async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const metrics = register();
    const { engine } = scriptedInbox(async () => STATS);
    const workers = [1, 2, 3].map(() => createInboxWorker({ inbox: engine, logger: false, onEvent: () => {} }));
    for (const worker of workers) worker.start();
    const collected = await metrics.collect();
    expect(pointsOf(collected, 'verikit.inbox.pending')).toHaveLength(1);
    expect(sumOf(collected, 'verikit.inbox.pending')).toBe(7);
    expect(sumOf(collected, 'verikit.inbox.retrying')).toBe(2);
    expect(sumOf(collected, 'verikit.inbox.dead')).toBe(3);
    const age = sumOf(collected, 'verikit.inbox.oldest_pending.age');
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(100);
    expect(engine.stats).toHaveBeenCalledTimes(1);
    await workers[0]?.stop();
    await workers[1]?.stop();
    // Past the stats' 5 s cache: each collection with a worker left reads them again, once.
    vi.advanceTimersByTime(6_000);
    expect(sumOf(await metrics.collect(), 'verikit.inbox.dead')).toBe(3);
    expect(engine.stats).toHaveBeenCalledTimes(2);
    await workers[2]?.stop();
    vi.advanceTimersByTime(6_000);
    await metrics.collect();
    expect(engine.stats).toHaveBeenCalledTimes(2);
  });

  it('a worker started before any meter provider reports its inbox once one is registered (it looks at each poll)', async () => {
    const { engine } = scriptedInbox(async () => STATS);
    const worker = createInboxWorker({ inbox: engine, logger: false, onEvent: () => {}, pollIntervalMs: 20 });
    worker.start();
    try {
      const metrics = register();
      await vi.waitFor(async () => expect(sumOf(await metrics.collect(), 'verikit.inbox.pending')).toBe(7));
    } finally {
      await worker.stop();
    }
  });

  it('reads stats at most once per 5 s however often it is scraped (concurrent scrapes share one read)', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const metrics = register();
    let dead = 1;
    const { engine } = scriptedInbox(async () => ({ ...STATS, dead }));
    const worker = createInboxWorker({ inbox: engine, logger: false, onEvent: () => {} });
    worker.start();
    try {
      const storm = await Promise.all([metrics.collect(), metrics.collect(), metrics.collect()]);
      expect(storm.map((c) => sumOf(c, 'verikit.inbox.dead'))).toEqual([1, 1, 1]);
      expect(engine.stats).toHaveBeenCalledTimes(1);
      dead = 4;
      vi.advanceTimersByTime(4_000);
      expect(sumOf(await metrics.collect(), 'verikit.inbox.dead')).toBe(1);
      expect(engine.stats).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(1_500);
      expect(sumOf(await metrics.collect(), 'verikit.inbox.dead')).toBe(4);
      expect(engine.stats).toHaveBeenCalledTimes(2);
    } finally {
      await worker.stop();
    }
  });

  it('a stats read that does not answer within 2 s reports nothing that scrape, and does not hold the scrape', async () => {
    const metrics = register();
    const { engine } = scriptedInbox(() => new Promise<InboxStats>(() => {}));
    const worker = createInboxWorker({ inbox: engine, logger: false, onEvent: () => {} });
    worker.start();
    try {
      const started = Date.now();
      const collected = await metrics.collect();
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(collected.get('verikit.inbox.pending') ?? []).toHaveLength(0);
    } finally {
      await worker.stop();
    }
  });
});

describe('ledger', () => {
  it('counts reads by source, changes by source and kind, missed webhooks, and reports pending verifications and the budget', async () => {
    const metrics = register();
    const server = await startServer();
    const ledger = createMemoryLedger();
    const client = createClient({ apiKey: 'sk_test_metrics', baseUrl: server.url, logger: false, maxRetries: 0 });
    const changes: string[] = [];
    const reconciler = createReconciler({
      ledger,
      client,
      onChange: (ctx) => {
        changes.push(`${ctx.refId} ${ctx.current}`);
      },
      readsPerMinute: 6_000,
      logger: false,
    });
    try {
      server.handle(
        json(200, detailsPayload({ refId: 'biz-1', status: 'NOT_STARTED' })),
        json(200, detailsPayload({ refId: 'biz-1', status: 'IN_REVIEW' })),
      );
      await ledger.track({ kind: 'kyc', refId: 'person-1' }, { nextCheckAt: new Date(Date.now() + 3_600_000) });
      expect(await reconciler.check({ kind: 'kyb', refId: 'biz-1' })).toBe('changed');
      expect(await reconciler.check({ kind: 'kyb', refId: 'biz-1' })).toBe('changed');
      expect(changes).toEqual(['biz-1 NOT_STARTED', 'biz-1 IN_REVIEW']);
      reconciler.start();
      const collected = await metrics.collect();
      expect(sumOf(collected, 'verikit.ledger.reads', { 'verikit.source': 'reconcile' })).toBe(2);
      expect(sumOf(collected, 'verikit.ledger.changes', { 'verikit.source': 'reconcile', 'verikit.kind': 'kyb' })).toBe(2);
      // The first sight of a new case is its baseline; the second change is a missed webhook.
      expect(sumOf(collected, 'verikit.ledger.missed_webhooks', { 'verikit.kind': 'kyb' })).toBe(1);
      expect(sumOf(collected, 'verikit.ledger.read_budget')).toBe(6_000);
      expect(sumOf(collected, 'verikit.ledger.pending', { 'verikit.kind': 'kyb' })).toBe(1);
      expect(sumOf(collected, 'verikit.ledger.pending', { 'verikit.kind': 'kyc' })).toBe(1);
      expect(sumOf(collected, 'verikit.ledger.oldest_pending.age', { 'verikit.kind': 'kyc' })).toBeLessThan(60);
      expect(attributeValues(collected)).not.toContain('biz-1');
    } finally {
      await reconciler.stop();
      await client.close();
      await server.close();
    }
  });
});
