import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import * as otel from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { captureMetrics, type MetricsCapture, sumOf } from '../../../test-support/metrics.js';
import {
  ApiError,
  createClient,
  createInboxWorker,
  createMemoryLedger,
  createReconciler,
  createWebhookHandler,
  type InboxDelivery,
  type InboxEngine,
  type InboxEvent,
  UnexpectedResponseError,
} from '../src/index.node.js';
import { detailsPayload } from './helpers/fixtures.js';
import { startServer, type TestServer } from './helpers/server.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

// What a result and a webhook body may hold about a person: none of it may reach a log line, a span or a metric.
const NAME = 'Zoë Canary-Ångström';
const ADDRESS = '12 Lighthouse Wharf, Docklands E14 9ZZ';
const DOCUMENT = 'X9CANARY4417';
/** Each canary, and an ASCII piece of it (in case something escapes the non-ASCII letters). */
const CANARIES = [NAME, 'Canary-', 'Ångström', ADDRESS, 'Lighthouse Wharf', DOCUMENT];

const person = { name: NAME, address: ADDRESS, document: { type: 'passport', number: DOCUMENT }, dateOfBirth: '1990-02-03' };
const kybDetails = (status: string, updatedAt: string) =>
  detailsPayload({
    refId: 'biz-canary',
    status,
    updatedAt,
    businessName: `${NAME} Trading Ltd`,
    steps: [
      {
        id: 's1',
        type: 'form',
        title: 'Company',
        fields: [
          { key: 'director', title: 'Director', value: NAME, required: true },
          { key: 'registered', title: 'Registered office', value: ADDRESS, required: true },
          { key: 'id', title: 'Identity document', value: DOCUMENT, required: true },
        ],
        enrichment: { names: { legal: NAME }, address: { line1: ADDRESS } },
      },
      { id: 's2', type: 'ubo', title: 'Owners', ubos: [person] },
    ],
  });

/** The service: a result full of personal data per refId, a malformed one, and a failure that echoes it. */
function service(server: TestServer, kybStatus: () => [string, string]): void {
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  server.handle((_req, res, { rawPath }) => {
    if (rawPath === '/kyb/case/biz-canary/details') return send(res, 200, kybDetails(...kybStatus()));
    if (rawPath === '/v2/users/person-canary') return send(res, 200, { status: 'APPROVED', ...person, reason: `matched ${NAME}` });
    // A 200 whose result breaks the documented shape, the offending field holding the person.
    if (rawPath === '/v2/users/person-malformed') return send(res, 200, { status: { name: NAME }, ...person });
    // A failure whose body echoes what the service had on the person.
    if (rawPath === '/v2/users/person-echo') return send(res, 503, { message: `could not load ${NAME} at ${ADDRESS} (${DOCUMENT})` });
    return send(res, 404, { message: 'no such verification' });
  });
}

/** An inbox in memory that works as the engines do: keyed by id, leased with attempts, retried, dead-lettered. */
function memoryInbox(): InboxEngine<null> {
  type Stored = { delivery: InboxDelivery; attempts: number; state: 'pending' | 'done' | 'dead'; dueAt: number; leased: boolean; at: Date };
  const events = new Map<string, Stored>();
  const pending = () => [...events.values()].filter((e) => e.state === 'pending');
  return {
    async accept(delivery) {
      if (events.has(delivery.id)) return 'duplicate';
      events.set(delivery.id, { delivery, attempts: 0, state: 'pending', dueAt: 0, leased: false, at: new Date() });
      return 'accepted';
    },
    async lease(owner, limit) {
      const due = pending()
        .filter((e) => !e.leased && e.dueAt <= Date.now())
        .slice(0, limit);
      return due.map((e): InboxEvent => {
        e.attempts++;
        e.leased = true;
        return { ...e.delivery, owner, attempt: e.attempts, receivedAt: e.at };
      });
    },
    extend: async () => 'ok',
    async complete(event, work) {
      await work(null);
      const stored = events.get(event.id) as Stored;
      stored.state = 'done';
      stored.leased = false;
      return 'ok';
    },
    async fail(event, { retryInMs }) {
      const stored = events.get(event.id) as Stored;
      stored.leased = false;
      if (retryInMs === null) stored.state = 'dead';
      else stored.dueAt = Date.now() + retryInMs;
      return 'ok';
    },
    waitForWork: () => new Promise((resolve) => setTimeout(resolve, 10)),
    deadLetters: async () => [],
    replay: async () => false,
    stats: async () => ({
      pending: pending().length,
      retrying: pending().filter((e) => e.attempts > 0).length,
      dead: [...events.values()].filter((e) => e.state === 'dead').length,
      oldestPendingAt: null,
      oldestPendingAgeMs: null,
    }),
  };
}

const written: string[] = [];
const logger = pino(
  { level: 'trace' },
  new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  }),
);
const spans = new InMemorySpanExporter();
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
let metrics: MetricsCapture;
beforeAll(() => {
  tracerProvider.register();
  metrics = captureMetrics();
});
afterAll(async () => {
  await metrics.stop();
  await tracerProvider.shutdown();
  otel.trace.disable();
  otel.propagation.disable();
  otel.context.disable();
});

const SLOW = { stepsMs: [60_000], repeatMs: 60_000, finalRecheckMs: 60_000, failureBaseMs: 60_000, failureMaxMs: 60_000 };

it('a delivery, a worker run, failed client calls, ledger changes and a reconcile over personal data: no log line, span or metric carries it', async () => {
  const server = await startServer();
  let kyb: [string, string] = ['IN_REVIEW', '2026-03-01T10:00:00Z'];
  service(server, () => kyb);
  const client = createClient({
    apiKey: 'sk_test_privacy',
    baseUrl: server.url,
    logger,
    kycStatuses: { approved: ['APPROVED'] },
    backoff: { baseMs: 1, maxMs: 2 },
  });
  const ledger = createMemoryLedger();
  const inbox = memoryInbox();
  const ledgerOptions = { ledger, client, logger, readsPerMinute: 60_000, schedule: SLOW, onChange: () => {} };
  const worker = createInboxWorker({
    inbox,
    ...ledgerOptions,
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
    pollIntervalMs: 10,
  });
  const reconciler = createReconciler({ ...ledgerOptions, pollIntervalMs: 10 });
  const handle = createWebhookHandler({ secret: SECRET, inbox, logger });
  try {
    // Deliveries whose bodies carry the person, as a webhook may.
    const body = (type: string, refId: string) => JSON.stringify({ type, data: { refId, ...person } });
    const deliveries = [
      ['msg_kyb', body('kyb.case.status_changed', 'biz-canary')],
      ['msg_kyc', body('kyc.session.status_changed', 'person-canary')],
      ['msg_malformed', body('kyc.session.status_changed', 'person-malformed')],
      ['msg_echo', body('kyc.session.status_changed', 'person-echo')],
    ] as const;
    for (const [id, text] of deliveries)
      expect((await handle({ method: 'POST', headers: svixHeaders(text, { id }), body: text })).status).toBe(204);
    const [repeatId, repeat] = deliveries[0];
    expect((await handle({ method: 'POST', headers: svixHeaders(repeat, { id: repeatId }), body: repeat })).status).toBe(204);
    const forged = { ...svixHeaders(repeat, { id: 'msg_forged' }), 'svix-signature': 'v1,AAAA' };
    expect((await handle({ method: 'POST', headers: forged, body: repeat })).status).toBe(400);

    // The worker observes each through the ledger: two changes, a malformed result and an echoing failure dead-lettered.
    worker.start();
    await vi.waitFor(async () => expect((await inbox.stats()).dead).toBe(2), { timeout: 15_000 });
    expect((await ledger.get({ kind: 'kyb', refId: 'biz-canary' }))?.status).toBe('IN_REVIEW');
    expect((await ledger.get({ kind: 'kyc', refId: 'person-canary' }))?.status).toBe('APPROVED');

    // The case moves on without a webhook: the reconciler finds it (a missed webhook) and fails on the echoing one.
    kyb = ['COMPLETED', '2026-03-02T10:00:00Z'];
    await ledger.checkSoon({ kind: 'kyb', refId: 'biz-canary' });
    await ledger.checkSoon({ kind: 'kyc', refId: 'person-echo' });
    reconciler.start();
    await vi.waitFor(() => expect(reconciler.stats()).toMatchObject({ missedWebhooks: 1, failures: 1 }), { timeout: 15_000 });

    // A client call of the application's own, retried once, then failing with the echoing body.
    const failure = await client.kyc.getResult('person-echo', { maxRetries: 1 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    // The body is still there for code that asks for it.
    expect(JSON.stringify((failure as ApiError).body)).toContain(NAME);
    const malformed = await client.kyc.getResult('person-malformed').catch((error: unknown) => error);
    expect(malformed).toBeInstanceOf(UnexpectedResponseError);
  } finally {
    await worker.stop();
    await reconciler.stop();
    await client.close();
    await server.close();
  }

  const logs = written.join('');
  const spanDump = JSON.stringify(
    spans.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })),
  );
  const collected = await metrics.collect();
  const metricDump = JSON.stringify([...collected.entries()]);

  // What happened is all there: the failures were logged with their errors, traced, and measured.
  for (const message of [
    'inbox event failed for the last time; dead-lettered',
    'ledger: a change was found by polling: a webhook was missed',
    'ledger: a check failed; it is tried again later',
    'API call failed; retrying',
    'webhook delivery refused',
  ])
    expect(logs).toContain(message);
  expect(logs).toContain('"status":503');
  expect(logs).toContain('unexpected_response');
  expect(spanDump).toContain('exception');
  expect(spanDump).toContain('UnexpectedResponseError');
  expect(sumOf(collected, 'verikit.ledger.changes')).toBe(3);
  expect(sumOf(collected, 'verikit.ledger.missed_webhooks')).toBe(1);
  expect(sumOf(collected, 'verikit.webhook.deliveries', { 'verikit.outcome': 'duplicate' })).toBe(1);

  for (const canary of CANARIES) {
    expect(logs, `logs carry ${canary}`).not.toContain(canary);
    expect(spanDump, `spans carry ${canary}`).not.toContain(canary);
    expect(metricDump, `metrics carry ${canary}`).not.toContain(canary);
  }
});
