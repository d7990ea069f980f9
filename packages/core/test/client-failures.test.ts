import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  createClient,
  KYB_STEP_TYPES,
  type KybDocumentStep,
  type KybOtherStep,
  type NodeClientOptions,
  NotFoundError,
  RateLimitError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  type VerikitClient,
  VerikitError,
} from '../src/index.node.js';
import { detailsPayload } from './helpers/fixtures.js';
import { hang, json, reset, startServer, type TestServer } from './helpers/server.js';

const API_KEY = 'sk_live_SECRET_do_not_leak_42';
// The retries here are the point: silent, so the run's output shows what is unexpected.
const fast = { backoff: { baseMs: 1, maxMs: 5 }, logger: false as const };

let server: TestServer;
const clients: VerikitClient[] = [];
function client(options: Partial<NodeClientOptions> = {}): VerikitClient {
  const c = createClient({ apiKey: API_KEY, baseUrl: server.url, ...fast, ...options });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  server = await startServer();
});
afterEach(async () => {
  server.requests.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(() => server.close());

async function failure(promise: Promise<unknown>): Promise<VerikitError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(VerikitError);
    return error as VerikitError;
  }
  throw new Error('expected the call to fail');
}

describe('HTTP status -> error class', () => {
  it.each([
    [400, BadRequestError, 'bad_request'],
    [401, AuthenticationError, 'authentication'],
    [403, AuthenticationError, 'authentication'],
    [404, NotFoundError, 'not_found'],
    [409, ApiError, 'api_error'],
    [422, BadRequestError, 'bad_request'],
    [429, RateLimitError, 'rate_limited'],
    [500, ServerError, 'server_error'],
    [502, ServerError, 'server_error'],
    [503, ServerError, 'server_error'],
  ] as const)('%i -> %s', async (status, ErrorClass, code) => {
    server.handle(json(status, { message: 'nope', key: API_KEY }, { 'x-request-id': 'req_123' }));
    const error = await failure(client({ maxRetries: 0 }).kyb.getCase('biz-1'));
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.code).toBe(code);
    expect(apiError.status).toBe(status);
    expect(apiError.method).toBe('GET');
    expect(apiError.path).toBe('/kyb/case/biz-1/details');
    expect(apiError.requestId).toBe('req_123');
    expect(apiError.body).toEqual({ message: 'nope', key: '[redacted]' });
  });

  it('RateLimitError carries Retry-After in milliseconds', async () => {
    server.handle(json(429, {}, { 'retry-after': '7' }));
    const error = (await failure(client({ maxRetries: 0 }).kyb.getCase('b'))) as RateLimitError;
    expect(error.retryAfterMs).toBe(7000);
  });

  it('a non-JSON error body is kept as text', async () => {
    server.handle((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'));
    const error = (await failure(client({ maxRetries: 0 }).kyb.getCase('b'))) as ServerError;
    expect(error.body).toBe('<h1>Bad gateway</h1>');
  });
});

describe('responses that break the contract', () => {
  it('malformed JSON -> UnexpectedResponseError invalid_json', async () => {
    server.handle(json(200, '{"id": "case_1", '));
    const error = (await failure(client().kyb.getCase('b'))) as UnexpectedResponseError;
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error.reason).toBe('invalid_json');
    expect(server.requests).toHaveLength(1);
  });

  it('a wrong shape -> UnexpectedResponseError naming the field', async () => {
    const payload = detailsPayload();
    (payload.steps as Array<{ fields?: Array<Record<string, unknown>> }>)[0]!.fields![0]!.key = 42;
    server.handle(json(200, payload));
    const error = (await failure(client().kyb.getCase('b'))) as UnexpectedResponseError;
    expect(error.reason).toBe('invalid_shape');
    expect(error.issues[0]!.path).toBe('steps.0.fields.0.key');
    expect(error.message).toContain('steps.0.fields.0.key');
  });

  it('a missing required top-level field is named', async () => {
    const { amlScreening: _, ...payload } = detailsPayload();
    server.handle(json(200, payload));
    const error = (await failure(client().kyb.getCase('b'))) as UnexpectedResponseError;
    expect(error.issues.map((i) => i.path)).toContain('amlScreening');
  });

  it('unknown fields and unknown enum values survive parsing', async () => {
    const payload = detailsPayload({
      status: 'ON_HOLD',
      flagType: 'CRITICAL',
      brandNew: { nested: [1, 2] },
      steps: [{ id: 'x', type: 'videoCall', title: 'Call', slot: '10:00' }, ...(detailsPayload().steps as unknown[])],
    });
    (payload.amlScreening as { primary: Array<Record<string, unknown>> }).primary[0]!.businessRole = 'guarantor';
    server.handle(json(200, payload));
    const details = await client().kyb.getCase('b');
    expect(details.status).toBe('ON_HOLD');
    expect(details.flagType).toBe('CRITICAL');
    expect((details as Record<string, unknown>).brandNew).toEqual({ nested: [1, 2] });
    expect(details.steps[0]).toEqual({ id: 'x', type: 'videoCall', title: 'Call', slot: '10:00' });
    // `type` narrows to exactly the documented step; an unknown one is a KybOtherStep, its type read with String().
    const documents = details.steps.filter((step) => step.type === 'document');
    expectTypeOf(documents).toEqualTypeOf<KybDocumentStep[]>();
    expect(documents).toHaveLength(1);
    const other = details.steps.find((step): step is KybOtherStep => !(KYB_STEP_TYPES as readonly unknown[]).includes(step.type));
    expect(String(other?.type)).toBe('videoCall');
    expect(details.amlScreening.primary[0]!.businessRole).toBe('guarantor');
  });
});

describe('retries', () => {
  it('a GET is retried on 502/503/504/408/429 and then succeeds', async () => {
    server.handle(json(502, {}), json(503, {}), json(200, detailsPayload()));
    const details = await client({ maxRetries: 2 }).kyb.getCase('b');
    expect(details.id).toBe('case_1');
    expect(server.requests).toHaveLength(3);
  });

  it.each([408, 429, 504])('a GET is retried on %i', async (status) => {
    server.handle(json(status, {}), json(200, detailsPayload()));
    await client({ maxRetries: 1 }).kyb.getCase('b');
    expect(server.requests).toHaveLength(2);
  });

  it('a GET is not retried on 500, 400, 401, 404', async () => {
    for (const status of [500, 400, 401, 404]) {
      server.requests.length = 0;
      server.handle(json(status, {}), json(200, detailsPayload()));
      await failure(client({ maxRetries: 3 }).kyb.getCase('b'));
      expect(server.requests).toHaveLength(1);
    }
  });

  it('the retry count is bounded by maxRetries', async () => {
    server.handle(json(503, {}));
    const error = await failure(client({ maxRetries: 3 }).kyb.getCase('b'));
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).attempts).toBe(4);
    expect(server.requests).toHaveLength(4);
  });

  it('Retry-After in seconds is honoured', async () => {
    server.handle(json(429, {}, { 'retry-after': '1' }), json(200, detailsPayload()));
    const started = Date.now();
    await client({ maxRetries: 1 }).kyb.getCase('b');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('Retry-After as an HTTP date is honoured', async () => {
    const at = new Date(Date.now() + 2000).toUTCString();
    server.handle(json(503, {}, { 'retry-after': at }), json(200, detailsPayload()));
    const started = Date.now();
    await client({ maxRetries: 1 }).kyb.getCase('b');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a Retry-After beyond maxRetryAfterMs is not waited for', async () => {
    server.handle(json(429, {}, { 'retry-after': '3600' }), json(200, detailsPayload()));
    const error = (await failure(client({ maxRetries: 2, maxRetryAfterMs: 5000 }).kyb.getCase('b'))) as RateLimitError;
    expect(error.retryAfterMs).toBe(3_600_000);
    expect(server.requests).toHaveLength(1);
  });

  it('a POST that reached the server is not retried on 5xx or 429 without Retry-After', async () => {
    for (const status of [500, 502, 503, 504, 429]) {
      server.requests.length = 0;
      server.handle(json(status, {}), json(200, { success: true, token: 't' }));
      await failure(client({ maxRetries: 3 }).kyc.createSession({ refId: 'u' }));
      expect(server.requests).toHaveLength(1);
    }
  });

  it('a POST answered 429 or 503 with Retry-After is not retried: the server saw it, and may have created the case', async () => {
    for (const status of [429, 503]) {
      server.requests.length = 0;
      server.handle(
        json(status, {}, { 'retry-after': '0' }),
        json(200, { kybCase: { _id: 'c', refId: 'r', status: 'NOT_STARTED', flow: 'f' }, token: 't' }),
      );
      const error = await failure(client({ maxRetries: 2 }).kyb.createCase({ refId: 'r' }));
      expect(error.code).toBe(status === 429 ? 'rate_limited' : 'server_error');
      expect(server.requests).toHaveLength(1);
    }
  });

  it('a POST whose connection was reset is not retried, even with retries left', async () => {
    server.handle(reset, json(200, { success: true, token: 't' }));
    const error = (await failure(client({ maxRetries: 3 }).kyc.createSession({ refId: 'u' }))) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.failure).toBe('reset');
    expect(server.requests).toHaveLength(1);
  });

  it('a GET whose connection was reset is retried once even with retries off', async () => {
    server.handle(reset, json(200, detailsPayload()));
    const details = await client({ maxRetries: 0 }).kyb.getCase('b');
    expect(details.id).toBe('case_1');
    expect(server.requests).toHaveLength(2);
  });

  it('refused connections: a POST is retried (never sent) and gives a ConnectionError', async () => {
    const closedPort = await freePort();
    const c = createClient({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${closedPort}`, maxRetries: 2, ...fast });
    clients.push(c);
    const error = (await failure(c.kyb.createCase({ refId: 'r' }))) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.failure).toBe('not-sent');
    expect(error.attempts).toBe(3);
  });
});

describe('timeouts and the deadline', () => {
  it('the per-attempt timeout fires and the GET is retried up to maxRetries', async () => {
    server.handle(hang);
    const error = (await failure(client({ timeoutMs: 100, deadlineMs: 10_000, maxRetries: 2 }).kyb.getCase('b'))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.kind).toBe('attempt');
    expect(error.attempts).toBe(3);
    expect(server.requests).toHaveLength(3);
  });

  it('the overall deadline cuts retries short', async () => {
    server.handle(hang);
    const error = (await failure(client({ timeoutMs: 200, deadlineMs: 500, maxRetries: 10 }).kyb.getCase('b'))) as TimeoutError;
    expect(error.kind).toBe('deadline');
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });

  it('a POST that timed out is not retried', async () => {
    server.handle(hang);
    const error = (await failure(client({ timeoutMs: 100, maxRetries: 3 }).kyb.createCase({ refId: 'r' }))) as TimeoutError;
    expect(error.kind).toBe('attempt');
    expect(server.requests).toHaveLength(1);
  });

  it('a server that sends headers and then stalls the body cannot hang the client', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":');
    });
    const error = (await failure(client({ timeoutMs: 150, deadlineMs: 400, maxRetries: 0 }).kyb.getCase('b'))) as TimeoutError;
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('the caller can abort a call, and it is not retried', async () => {
    server.handle(hang);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failure(client({ maxRetries: 3 }).kyb.getCase('b', { signal: controller.signal }));
    expect(error.code).toBe('aborted');
    expect(server.requests).toHaveLength(1);
  });
});

describe('maxResponseBytes', () => {
  const endless = (status: number) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    res.write('{"pad":"');
    pump();
  };

  it.each([
    ['undici', {}],
    ['fetch', { fetch: globalThis.fetch }],
  ] as const)('an endless answer stops at the cap with ResponseTooLargeError, not retried (%s)', async (_name, transport) => {
    for (const status of [200, 503]) {
      server.requests.length = 0;
      server.handle(endless(status));
      const error = await failure(client({ maxRetries: 2, maxResponseBytes: 256 * 1024, ...transport }).kyb.getCase('b'));
      expect(error).toBeInstanceOf(ResponseTooLargeError);
      expect((error as ResponseTooLargeError).limitBytes).toBe(256 * 1024);
      expect(server.requests).toHaveLength(1);
    }
  });

  it('a declared Content-Length over the cap is refused before the body is read', async () => {
    server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      res.write('{');
    });
    const error = await failure(client({ maxResponseBytes: 1024, maxRetries: 0 }).kyb.getCase('b'));
    expect(error.code).toBe('response_too_large');
  });

  it('the default cap is 10 MiB and refuses nonsense', () => {
    expect(() => client({ maxResponseBytes: 0 })).toThrow(/maxResponseBytes/);
    expect(() => client({ maxResponseBytes: Number.NaN })).toThrow(/maxResponseBytes/);
  });
});

describe('the API key never leaks', () => {
  const scenarios: Array<[string, () => Promise<unknown>]> = [
    [
      '401 echoing the key',
      async () => {
        server.handle(json(401, { error: `invalid key ${API_KEY}` }));
        return client({ maxRetries: 0 }).kyb.getCase('b');
      },
    ],
    [
      '500 text echoing the key',
      async () => {
        server.handle((_req, res) => res.writeHead(500).end(`boom x-api-key: ${API_KEY}`));
        return client({ maxRetries: 0 }).kyb.createCase({ refId: 'r' });
      },
    ],
    [
      '401 echoing the key JSON-escaped (\\u0073...)',
      async () => {
        const escaped = `\\u00${API_KEY.charCodeAt(0).toString(16)}${API_KEY.slice(1)}`;
        server.handle(json(401, `{"error":"invalid key ${escaped}","${escaped}":1}`));
        return client({ maxRetries: 0 }).kyb.getCase('b');
      },
    ],
    [
      'a JSON body with the key straddling the 8 KiB cut',
      async () => {
        server.handle(json(500, { pad: 'p'.repeat(8 * 1024 - 20), key: API_KEY, more: 'x'.repeat(100) }));
        return client({ maxRetries: 0 }).kyb.createCase({ refId: 'r' });
      },
    ],
    [
      'a text body with the key straddling the 8 KiB cut',
      async () => {
        server.handle((_req, res) => res.writeHead(500).end(`${'p'.repeat(8 * 1024 - 10)}${API_KEY} and more`));
        return client({ maxRetries: 0 }).kyb.createCase({ refId: 'r' });
      },
    ],
    [
      'a broken JSON body with the key escaped inside it',
      async () => {
        server.handle((_req, res) => res.writeHead(502).end(`{"error": "\\u0073${API_KEY.slice(1)}`));
        return client({ maxRetries: 0 }).kyb.createCase({ refId: 'r' });
      },
    ],
    [
      'timeout',
      async () => {
        server.handle(hang);
        return client({ timeoutMs: 50, maxRetries: 0 }).kyc.getResult('u');
      },
    ],
    [
      'reset',
      async () => {
        server.handle(reset);
        return client({ maxRetries: 0 }).kyc.createSession({ refId: 'u' });
      },
    ],
    [
      'bad shape',
      async () => {
        server.handle(json(200, { wrong: true, echo: API_KEY }));
        return client().kyc.getResult('u');
      },
    ],
    [
      'refused',
      async () => {
        const c = createClient({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${await freePort()}`, maxRetries: 0 });
        clients.push(c);
        return c.kyb.getCase('b');
      },
    ],
  ];

  it.each(scenarios)('%s', async (_name, run) => {
    const error = await failure(run());
    for (const view of [
      error.message,
      String(error),
      error.stack ?? '',
      JSON.stringify(error),
      inspect(error, { depth: 10, showHidden: true }),
    ]) {
      expect(view).not.toContain(API_KEY);
      // Not even the start of it: a cut must not leave a partial key behind.
      expect(view).not.toContain(API_KEY.slice(0, 10));
    }
    expect(JSON.parse(JSON.stringify(error)).code).toBe(error.code);
  });

  it('a key with slashes echoed as JSON \\/ is redacted too', async () => {
    const key = 'sk_live/with/slashes_123';
    const c = createClient({ apiKey: key, baseUrl: server.url, maxRetries: 0 });
    clients.push(c);
    server.handle(json(403, `{"message":"bad key ${key.replaceAll('/', '\\/')}"}`));
    const error = (await failure(c.kyb.getCase('b'))) as ApiError;
    expect(error.body).toEqual({ message: 'bad key [redacted]' });
    expect(inspect(error, { depth: 10 })).not.toContain('slashes');
  });

  it('the client object itself does not show the key', () => {
    const c = client();
    expect(inspect(c, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(c)).not.toContain(API_KEY);
  });
});

describe('hooks', () => {
  it('onRequest and onResponse see each attempt without headers or bodies', async () => {
    const events: unknown[] = [];
    server.handle(json(503, {}, { 'x-request-id': 'r1' }), json(200, detailsPayload(), { 'x-request-id': 'r2' }));
    await client({
      maxRetries: 1,
      onRequest: (e) => events.push({ phase: 'request', ...e }),
      onResponse: (e) => events.push({ phase: 'response', ...e, durationMs: typeof e.durationMs }),
    }).kyb.getCase('b');
    expect(events).toEqual([
      { phase: 'request', method: 'GET', path: '/kyb/case/b/details', attempt: 1 },
      {
        phase: 'response',
        method: 'GET',
        path: '/kyb/case/b/details',
        attempt: 1,
        status: 503,
        durationMs: 'number',
        requestId: 'r1',
        errorCode: undefined,
      },
      { phase: 'request', method: 'GET', path: '/kyb/case/b/details', attempt: 2 },
      {
        phase: 'response',
        method: 'GET',
        path: '/kyb/case/b/details',
        attempt: 2,
        status: 200,
        durationMs: 'number',
        requestId: 'r2',
        errorCode: undefined,
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(API_KEY);
  });

  it('hooks that throw change no outcome: the call answers what the service said, after one request', async () => {
    const boom = () => {
      throw new Error('the metrics sink is down');
    };
    server.handle(json(200, detailsPayload()));
    const details = await client({ onRequest: boom, onResponse: boom }).kyb.getCase('b');
    expect(details).toMatchObject({ refId: 'biz-1', status: 'COMPLETED' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('input checks', () => {
  it('createCase refuses fields the service does not accept, before sending', async () => {
    const error = await failure(client().kyb.createCase({ refId: 'r', businessName: 'Acme' } as never));
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toContain('businessName');
    expect(server.requests).toHaveLength(0);
  });

  it('a document url on another origin is refused (the API key would go there)', async () => {
    const error = await failure(client().kyb.getDocumentUrl({ url: 'https://evil.test/steal' }));
    expect(error.code).toBe('invalid_argument');
    expect(server.requests).toHaveLength(0);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
