import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  createClient,
  createInboxWorker,
  createVerikitRoutes,
  createWebhookHandler,
  type InboxEngine,
  type LogFields,
  type Logger,
  MemoryIdempotencyStore,
} from '../src/index.node.js';
import { detailsPayload, idleInboxStats } from './helpers/fixtures.js';
import { scriptedInbox } from './helpers/scripted-inbox.js';
import { json, startServer, type TestServer } from './helpers/server.js';
import { SECRET, svixHeaders } from './helpers/sign.js';

const API_KEY = 'sk_live_SECRET_do_not_leak_42';
const BODY = '{"type":"kyb.case.status_changed","data":{"refId":"biz-1","note":"private body text"}}';

/** A logger that keeps every line, as pino would receive it. */
function recordingLogger() {
  const lines: Array<{ level: keyof Logger; fields: LogFields; message: string }> = [];
  const at =
    (level: keyof Logger) =>
    (fields: LogFields, message: string): void => {
      lines.push({ level, fields, message });
    };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines };
}

/** Everything a line would print, for leak checks. */
const printed = (lines: unknown[]) =>
  JSON.stringify(lines, (_key, value) => (value instanceof Error ? `${value.name}: ${value.message}` : value));

describe('webhook handler logging', () => {
  it('a failing onEvent is an error line with the delivery id and the error, and onError hears it as stage "event"', async () => {
    const { logger, lines } = recordingLogger();
    const onError = vi.fn();
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      logger,
      onError,
      onEvent: async () => {
        throw new Error('wrong API key upstream');
      },
    });
    const response = await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_fails' }), body: BODY });
    expect(response.status).toBe(500);
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fields).toMatchObject({ id: 'msg_fails', stage: 'event' });
    expect(errors[0]?.fields.err).toEqual(new Error('wrong API key upstream'));
    expect(errors[0]?.message).toBe('webhook delivery failed');
    expect(onError).toHaveBeenCalledWith(expect.any(Error), { id: 'msg_fails', stage: 'event' });
  });

  it('a synchronous throw and a failure after the deadline are logged too', async () => {
    const { logger, lines } = recordingLogger();
    let fail!: (error: Error) => void;
    let calls = 0;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      logger,
      deadlineMs: 20,
      onEvent: () => {
        if (++calls === 1) throw new Error('sync failure');
        return new Promise((_resolve, reject) => (fail = reject));
      },
    });
    expect((await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_sync' }), body: BODY })).status).toBe(500);
    expect((await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_slow' }), body: BODY })).status).toBe(503);
    expect(lines.find((l) => l.level === 'warn')?.fields).toMatchObject({ id: 'msg_slow', deadlineMs: 20 });
    fail(new Error('late failure'));
    await vi.waitFor(() => expect(lines.filter((l) => l.level === 'error')).toHaveLength(2));
    expect(lines.filter((l) => l.level === 'error').map((l) => [l.fields.id, l.fields.stage])).toEqual([
      ['msg_sync', 'event'],
      ['msg_slow', 'late-event'],
    ]);
  });

  it('a refused delivery is a debug line with its reason code, never the secret or the body', async () => {
    const { logger, lines } = recordingLogger();
    const handle = createWebhookHandler({ secret: SECRET, store: new MemoryIdempotencyStore(), logger, onEvent: () => {} });
    const headers = { ...svixHeaders(BODY, { id: 'msg_forged' }), 'svix-signature': 'v1,AAAA' };
    expect((await handle({ method: 'POST', headers, body: BODY })).status).toBe(400);
    expect(lines).toEqual([
      {
        level: 'debug',
        fields: { status: 400, code: 'invalid_signature', reason: expect.any(String) },
        message: 'webhook delivery refused',
      },
    ]);
    expect(printed(lines)).not.toContain('private body text');
    expect(printed(lines)).not.toContain(SECRET.slice(6, 20));
  });

  it('a logger that throws changes no answer: a forged delivery is still 400, a good one 204', async () => {
    const boom = () => {
      throw new Error('the log sink is down');
    };
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      logger: { debug: boom, info: boom, warn: boom, error: boom },
      onEvent: () => {},
    });
    const forged = { ...svixHeaders(BODY, { id: 'msg_forged_loud' }), 'svix-signature': 'v1,AAAA' };
    expect((await handle({ method: 'POST', headers: forged, body: BODY })).status).toBe(400);
    expect((await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_good_loud' }), body: BODY })).status).toBe(204);
  });

  it('by default a failing onEvent is one line on console.error naming the id; logger: false is silent', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failing = { secret: SECRET, onEvent: () => Promise.reject(new TypeError('boom')) };
      await createWebhookHandler({ ...failing, store: new MemoryIdempotencyStore() })({
        method: 'POST',
        headers: svixHeaders(BODY, { id: 'msg_default' }),
        body: BODY,
      });
      expect(consoleError).toHaveBeenCalledTimes(1);
      expect(consoleError.mock.calls[0]?.[0]).toMatch(/^verikit: webhook delivery failed \(id=msg_default stage=event\): TypeError: boom$/);
      await createWebhookHandler({ ...failing, store: new MemoryIdempotencyStore(), logger: false })({
        method: 'POST',
        headers: svixHeaders(BODY, { id: 'msg_quiet' }),
        body: BODY,
      });
      expect(consoleError).toHaveBeenCalledTimes(1);
    } finally {
      consoleError.mockRestore();
    }
  });

  it('takes pino as it is: a failing onEvent is one JSON line at level error with the id, stage and error', async () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const logger = pino({ level: 'debug' }, destination);
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new MemoryIdempotencyStore(),
      logger,
      onEvent: () => Promise.reject(new Error('upstream said 401')),
    });
    await handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_pino' }), body: BODY });
    await vi.waitFor(() => expect(written).toHaveLength(1));
    const record = JSON.parse(written[0] as string);
    expect(record).toMatchObject({ level: 50, id: 'msg_pino', stage: 'event', err: { message: 'upstream said 401' } });
    expect(record.msg).toBe('webhook delivery failed');
    expect(written[0]).not.toContain('private body text');
  });

  it('refuses a logger without the four methods', () => {
    expect(() =>
      createWebhookHandler({
        secret: SECRET,
        store: new MemoryIdempotencyStore(),
        onEvent: () => {},
        logger: { warn() {} } as unknown as Logger,
      }),
    ).toThrow(ConfigurationError);
  });
});

describe('inbox worker logging', () => {
  it('a failed attempt is a warning with its next try, the last one an error saying it was dead-lettered', async () => {
    const { logger, lines } = recordingLogger();
    const attempts = [1, 2].map((attempt) => ({ id: 'msg_inbox', timestamp: 1, body: BODY, owner: `o${attempt}`, attempt }));
    const failed: Array<number | null> = [];
    const engine = {
      accept: async () => 'accepted' as const,
      lease: async () => attempts.splice(0, 1),
      extend: async () => 'ok' as const,
      complete: async (_event: unknown, work: (tx: null) => Promise<void>) => {
        await work(null);
        return 'ok' as const;
      },
      fail: async (_event: unknown, failure: { retryInMs: number | null }) => {
        failed.push(failure.retryInMs);
        return 'ok' as const;
      },
      waitForWork: () => new Promise<void>((resolve) => setTimeout(resolve, 5)),
      deadLetters: async () => [],
      replay: async () => false,
      stats: idleInboxStats,
    } satisfies InboxEngine<null>;
    const worker = createInboxWorker({
      inbox: engine,
      logger,
      retry: { maxAttempts: 2, baseDelayMs: 10 },
      random: () => 0.5,
      onEvent: () => {
        throw new Error('downstream refused');
      },
    });
    worker.start();
    await vi.waitFor(() => expect(failed).toHaveLength(2));
    await worker.stop();
    expect(lines.map((l) => [l.level, l.fields.id, l.fields.attempt])).toEqual([
      ['warn', 'msg_inbox', 1],
      ['error', 'msg_inbox', 2],
    ]);
    expect(lines[0]?.fields.retryInMs).toBe(5);
    expect(lines[1]?.message).toMatch(/dead-lettered/);
    expect(printed(lines)).not.toContain('private body text');
  });
});

describe('inbox worker with a logger and onError that throw', () => {
  it.each([
    [
      'throw',
      () => {
        throw new Error('the log sink is down');
      },
    ],
    [
      'reject',
      async () => {
        throw new Error('the log sink is down');
      },
    ],
  ])(
    'a lease that fails is told to both (which %s), and the worker goes on: the event is run once the inbox answers',
    async (_kind, sink) => {
      // Not a vi.fn: a spy follows the promises it returns, which would mark a rejection handled.
      const calls: unknown[][] = [];
      const boom = (...args: unknown[]) => {
        calls.push(args);
        return sink();
      };
      const ran: string[] = [];
      const { engine, queue, event } = scriptedInbox();
      queue.push(event('msg_after', 1));
      // The first lease fails; the queue answers the ones after.
      const leaseQueued = engine.lease;
      let leases = 0;
      engine.lease = async (owner, limit) => {
        if (++leases === 1) throw new Error('the inbox is down');
        return leaseQueued(owner, limit);
      };
      const worker = createInboxWorker({
        inbox: engine,
        logger: { debug: boom, info: boom, warn: boom, error: boom },
        onError: boom,
        onEvent: (ctx) => {
          ran.push(ctx.id);
        },
      });
      worker.start();
      await vi.waitFor(() => expect(ran).toEqual(['msg_after']));
      await worker.stop();
      // A rejection would only surface a turn later, as an unhandled one.
      await new Promise((resolve) => setTimeout(resolve, 10));
      // The lease failure went to the logger (as an error) and to onError, both of which threw.
      expect(calls).toHaveLength(2);
      expect(calls[1]).toEqual([expect.objectContaining({ message: 'the inbox is down' }), { id: undefined, stage: 'lease' }]);
    },
  );
});

describe('inbox worker, a failure of its own', () => {
  it('a backoff that throws (a broken random) is logged and told; the worker goes on to the next event', async () => {
    const { logger, lines } = recordingLogger();
    const { engine, queue, event } = scriptedInbox();
    queue.push(event('msg_bad', 1), event('msg_next', 1));
    const ran: string[] = [];
    const told: unknown[] = [];
    const worker = createInboxWorker({
      inbox: engine,
      logger,
      concurrency: 1,
      onError: (_error, context) => told.push(context),
      random: () => {
        throw new Error('no entropy');
      },
      onEvent: (ctx) => {
        ran.push(ctx.id);
        if (ctx.id === 'msg_bad') throw new Error('downstream refused');
      },
    });
    worker.start();
    await vi.waitFor(() => expect(ran).toEqual(['msg_bad', 'msg_next']));
    await worker.stop();
    expect(lines.filter((l) => l.level === 'error').map((l) => [l.fields.id, l.message])).toEqual([
      ['msg_bad', 'inbox worker: running an event failed'],
    ]);
    expect(told).toContainEqual({ id: 'msg_bad', stage: 'event', attempt: 1 });
  });
});

describe('client logging', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('each retried attempt is a warning with the method, path and attempt; never the API key', async () => {
    const { logger, lines } = recordingLogger();
    server.handle(json(503, { error: 'busy' }), json(503, { error: 'busy' }), json(200, detailsPayload()));
    const client = createClient({ apiKey: API_KEY, baseUrl: server.url, backoff: { baseMs: 1, maxMs: 2 }, logger });
    await client.kyb.getCase('biz-1');
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings.map((l) => [l.fields.method, l.fields.attempt])).toEqual([
      ['GET', 1],
      ['GET', 2],
    ]);
    expect(String(warnings[0]?.fields.path)).toContain('biz-1');
    expect(printed(lines)).not.toContain(API_KEY);
    await client.close();
  });
});

describe('invite route logging', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('a refused API key is an error line with the kind, refId and code; the answer stays short and the key unprinted', async () => {
    const { logger, lines } = recordingLogger();
    server.handle(json(401, { error: 'invalid api key' }));
    const client = createClient({ apiKey: API_KEY, baseUrl: server.url, webUrl: 'https://w.test', publicKey: 'pk_1', logger: false });
    const routes = createVerikitRoutes<null>({ client, logger, invite: { kyb: { resolveBusiness: () => ({ refId: 'biz-9' }) } } });
    const response = await routes.inviteKyb?.({ method: 'POST', headers: {}, request: null });
    expect(response?.status).toBe(502);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', message: 'invite failed', fields: { kind: 'kyb', refId: 'biz-9', status: 502 } });
    expect(lines[0]?.fields.code).toBe('verification_misconfigured');
    expect(lines[0]?.fields.err).toBeInstanceOf(Error);
    expect(printed(lines)).not.toContain(API_KEY);
    await client.close();
  });

  it('the route-level logger is the webhook handler default', async () => {
    const { logger, lines } = recordingLogger();
    const routes = createVerikitRoutes({
      logger,
      webhook: {
        secret: SECRET,
        store: new MemoryIdempotencyStore(),
        onEvent: () => {
          throw new Error('boom');
        },
      },
    });
    const response = await routes.webhook?.handle({ method: 'POST', headers: svixHeaders(BODY, { id: 'msg_route' }), body: BODY });
    expect(response?.status).toBe(500);
    expect(lines.map((l) => [l.level, l.fields.id])).toEqual([['error', 'msg_route']]);
  });
});
