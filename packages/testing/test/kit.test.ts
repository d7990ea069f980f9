import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { clientFromEnv, createWebhookHandler, createWebhookVerifier, KYB_STATUSES } from '@verikit/core';
import { kybCaseDetailsSchema, kycResultSchema } from '@verikit/core/schemas';
import { describe, expect, it } from 'vitest';
import { startProcess } from '../../../test-support/processes.js';
import { FakeIdempotencyStore, kybCaseDetailsFixture, kycResultFixture, signWebhook, webhookEventFixture } from '../src/index.js';
import { startReceiver } from './helpers.js';

const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));

describe('fixtures', () => {
  it.each(KYB_STATUSES)('KYB details with status %s satisfy core schema, every step type present', (status) => {
    const details = kybCaseDetailsFixture({ status, refId: 'r1' });
    expect(kybCaseDetailsSchema.parse(details)).toEqual(details);
    expect(details.steps.map((s) => s.type).sort()).toEqual(['address', 'document', 'form', 'relatedBusinesses', 'ubo']);
  });

  it('a KYC result and webhook events have the shapes the core reads', () => {
    expect(kycResultSchema.parse(kycResultFixture({ status: 'REJECTED' })).status).toBe('REJECTED');
    expect(webhookEventFixture({ kind: 'kyc', refId: 'u1', status: 'APPROVED' })).toMatchObject({
      type: 'kyc.session.status_changed',
      data: { refId: 'u1' },
    });
  });
});

describe('signWebhook', () => {
  it('signs like Svix: core verifies it, byte for byte', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signed = signWebhook({ secret, payload: '{"a":"https:\\/\\/x", "b" : 1}', id: 'msg_x', timestamp: 1614265330 });
    expect(signed.body).toBe('{"a":"https:\\/\\/x", "b" : 1}');
    expect(signed.headers).toMatchObject({ 'svix-id': 'msg_x', 'svix-timestamp': '1614265330' });
    const verifier = createWebhookVerifier({ secrets: secret, now: () => 1614265330_000 });
    await expect(verifier.verify(signed.headers, signed.bytes)).resolves.toEqual({ id: 'msg_x', timestamp: 1614265330 });
  });

  it('the published vector comes out exactly', () => {
    const signed = signWebhook({
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      payload: '{"test": 2432232314}',
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
    });
    expect(signed.headers['svix-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('FakeIdempotencyStore', () => {
  it('records calls and fails on demand, and the handler answers 503 then recovers', async () => {
    const store = new FakeIdempotencyStore();
    const secret = 'whsec_plJ3nmyCDGBKInavdOK15jsl';
    let handled = 0;
    const handle = createWebhookHandler({ secret, store, onEvent: () => void handled++ });
    const signed = signWebhook({ secret, payload: { type: 'x' } });
    store.failNext('claim');
    expect((await handle({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(503);
    expect((await handle({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(204);
    expect((await handle({ method: 'POST', headers: signed.headers, body: signed.body })).status).toBe(204);
    expect(handled).toBe(1);
    expect(store.calls.map((c) => [c.method, c.result ?? (c.error ? 'error' : 'ok')])).toEqual([
      ['claim', 'error'],
      ['claim', 'claimed'],
      ['complete', 'ok'],
      ['claim', 'done'],
    ]);
  });

  it('failRate fails about that share of calls', async () => {
    let n = 0;
    const store = new FakeIdempotencyStore({ random: () => (n++ % 10) / 10 });
    store.failRate = 0.3;
    const outcomes = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        store.claim(`id-${i}`, { leaseMs: 1000 }).then(
          () => 'ok',
          () => 'failed',
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(30);
  });
});

describe('no particular test runner', () => {
  it('the kit runs under node --test (built package, CommonJS and ESM)', async () => {
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', 'test/node-test/kit.test.mjs'], {
      cwd: pkgDir,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/# pass [1-9]\d*/);
    expect(stdout).toMatch(/# fail 0/);
  }, 60_000);
});

/** Runs the CLI with `args` expecting a refusal: exit code 2, and its stderr lines (it must not start: the timeout fails the test). */
async function refused(args: string[]): Promise<string[]> {
  const error = await run(process.execPath, ['bin/verikit-fake.mjs', ...args], { cwd: pkgDir, timeout: 15_000 }).then(
    ({ stdout }) => ({ code: 0, stderr: '', stdout }),
    (e: { code: number; stderr: string }) => e,
  );
  expect(error).toMatchObject({ code: 2 });
  return error.stderr.trim().split('\n');
}

/** Starts the CLI (in a process group of its own), resolving with what it printed up to "Ctrl+C" and a stop() that waits until it is gone. */
async function started(args: string[]): Promise<{ output: string; child: ChildProcess; stop: () => Promise<void> }> {
  const cli = startProcess(process.execPath, ['bin/verikit-fake.mjs', ...args], { cwd: pkgDir });
  try {
    return { output: await cli.waitFor('Ctrl+C', 30_000), child: cli.child, stop: () => cli.stop() };
  } catch (error) {
    await cli.stop();
    throw error;
  }
}

/** What the printed export lines set, as sh reads them. */
async function exported(output: string): Promise<Record<string, string>> {
  const exports = output.split('\n').filter((line) => line.startsWith('export VERIKIT_'));
  const { stdout } = await run('sh', ['-c', `${exports.join('\n')}\nenv`]);
  return Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => line.startsWith('VERIKIT_'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** Watches a child's output from now on: next(pattern) resolves with the first match (earlier output included). */
function watch(child: ChildProcess): { next: (pattern: RegExp) => Promise<RegExpExecArray> } {
  let text = '';
  const waiting: Array<() => void> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const wake of waiting.splice(0)) wake();
  });
  return {
    next: async (pattern) => {
      for (;;) {
        const match = pattern.exec(text);
        if (match) return match;
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
  };
}

describe('verikit-fake', () => {
  it('starts on the given port and prints its URLs and credentials as export lines sh takes as they are', async () => {
    // Port 0: the OS picks a free one (a guessed port can be taken by another test's client socket).
    const { output, child, stop } = await started(['--port', '0']);
    try {
      // The printed lines work pasted into a shell: each is an export.
      const exports = output.split('\n').filter((line) => line.startsWith('export VERIKIT_'));
      expect(exports.map((line) => line.split('=')[0])).toEqual([
        'export VERIKIT_BASE_URL',
        'export VERIKIT_WEB_URL',
        'export VERIKIT_API_KEY',
        'export VERIKIT_PUBLIC_KEY',
        'export VERIKIT_WEBHOOK_SECRET',
        'export VERIKIT_ENVIRONMENT',
      ]);
      const env = await exported(output);
      expect(env.VERIKIT_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // What the core reads from these variables is a working client, and its links open the fake's hosted page.
      const client = clientFromEnv({ maxRetries: 0 }, env);
      const logged = new Promise<string>((resolve) =>
        child.stdout?.on('data', (chunk: Buffer) => {
          if (/POST \/\S*kyb\S* -> 20\d/.test(chunk.toString())) resolve(chunk.toString());
        }),
      );
      const created = await client.kyb.createCase({ refId: 'cli' });
      expect(created).toMatchObject({ kybCase: { refId: 'cli' } });
      // One line per request, with its status and duration, never the query.
      expect(await logged).toMatch(/^POST \/\S+ -> 20\d \(\d+ ms\)$/m);
      expect((await fetch(client.verificationLink(created.token).url)).status).toBe(200);
      // A link written by hand from the variables, as another language would, opens too.
      const byHand = `${env.VERIKIT_WEB_URL}/?${new URLSearchParams({ authToken: created.token, publicKey: env.VERIKIT_PUBLIC_KEY!, environment: env.VERIKIT_ENVIRONMENT! })}`;
      expect((await fetch(byHand)).status).toBe(200);
      await client.close();
    } finally {
      await stop();
    }
  });

  it('quotes its export lines: a value with ; $() or quotes is taken as it is by sh, never run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'verikit-cli-'));
    try {
      // Unquoted, sh would run both touches: one after the `;`, one in the `$(...)` that the single quotes end around.
      const apiKey = `sk;touch${'$'}{IFS}${dir}/ran;echo${'$'}{IFS}'$(touch${'$'}{IFS}${dir}/ran2)'"`;
      const { output, stop } = await started(['--port', '0', '--api-key', apiKey]);
      try {
        const exports = output.split('\n').filter((line) => line.startsWith('export VERIKIT_'));
        const { stdout } = await run('sh', ['-c', `${exports.join('\n')}\nprintenv VERIKIT_API_KEY`]);
        expect(stdout).toBe(`${apiKey}\n`);
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        await stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const port = 'a decimal port number from 0 to 65535';
  const rate = 'a decimal from 0 to 1';
  const range = 'MIN-MAX in decimal ms with MIN <= MAX';
  const count = 'a positive decimal integer';
  it.each([
    ...['abc', '', '1e3', '0x10', ' 80', '-1', '65536', '80.0'].map((value) => ['--port', value, port]),
    ['--drop-rate', '1.5', rate],
    ['--drop-rate', '1e-1', rate],
    ['--duplicate-rate', '', rate],
    ['--delay-ms', '5-1', range],
    ['--delay-ms', '0x1-2', range],
    ['--rate-limit', '0', count],
    ['--rate-limit', '1.5', count],
  ])(
    'refuses %s %j with one clear line: decimal numbers only, in range',
    async (flag, value, rule) => {
      const args = flag === '--port' ? [`--port=${value}`] : ['--port', '0', `${flag}=${value}`];
      expect(await refused(args)).toEqual([`verikit-fake: ${flag} must be ${rule}, not ${JSON.stringify(value)}`]);
    },
    30_000,
  );

  it.each([
    // An empty API key would let a request with an empty x-api-key in.
    [['--api-key', ''], '--api-key is required and must be a non-empty string'],
    [['--public-key', 'pk with space'], '--public-key contains whitespace or control characters'],
    [['--retry-after', '5'], '--retry-after needs --rate-limit'],
    [['--return-url', 'javascript:alert(1)'], '--return-url must be an http(s) URL'],
  ])(
    'refuses %j with one clear line',
    async (args, line) => {
      expect(await refused(['--port', '0', ...args])).toEqual([`verikit-fake: ${line}`]);
    },
    30_000,
  );

  it('drops, duplicates and delays webhooks, limits reads and prints its reviewer console as the flags say', async () => {
    const dropping = await startReceiver({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    const { output, child, stop } = await started([
      ...['--port', '0', '--webhook-secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '--webhook', dropping.url],
      ...['--drop-rate', '1', '--rate-limit', '2', '--retry-after', '9'],
    ]);
    try {
      const lines = watch(child);
      const env = await exported(output);
      const reviewer = /^Reviewer console .*: (http:\/\/\S+)$/m.exec(output)?.[1] as string;
      const signIn = await fetch(reviewer, { redirect: 'manual' });
      expect([signIn.status, signIn.headers.get('set-cookie')]).toEqual([303, expect.stringMatching(/^verikit_reviewer=.+HttpOnly/)]);
      const client = clientFromEnv({ maxRetries: 0 }, env);
      const { token } = await client.kyb.createCase({ refId: 'cli-flags' });
      // Opening the hosted page starts the case: a change, whose webhook is dropped, and said so.
      await fetch(client.verificationLink(token).url);
      expect(await lines.next(/^webhook (msg_\S+) -> \S+: dropped \(--drop-rate\)$/m)).toBeTruthy();
      await client.kyb.getCase('cli-flags');
      await client.kyb.getCase('cli-flags');
      await expect(client.kyb.getCase('cli-flags')).rejects.toMatchObject({ code: 'rate_limited', retryAfterMs: 9000 });
      await client.close();
      expect(dropping.raw).toEqual([]);
    } finally {
      await stop();
      await dropping.close();
    }

    const receiver = await startReceiver({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
    const twice = await started([
      ...['--port', '0', '--webhook-secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '--webhook', receiver.url],
      ...['--duplicate-rate', '1', '--delay-ms', '0-50'],
    ]);
    try {
      const lines = watch(twice.child);
      const client = clientFromEnv({ maxRetries: 0 }, await exported(twice.output));
      await fetch(client.verificationLink((await client.kyb.createCase({ refId: 'cli-twice' })).token).url);
      await lines.next(/^webhook msg_\S+ attempt 2 -> \S+: 204/m);
      expect(receiver.raw).toHaveLength(2);
      expect(receiver.raw[0]?.headers['svix-id']).toBe(receiver.raw[1]?.headers['svix-id']);
      await client.close();
    } finally {
      await twice.stop();
      await receiver.close();
    }
  }, 60_000);

  it('refuses a webhook secret the SDK would refuse, in one line, before starting', async () => {
    const error = await run(process.execPath, ['bin/verikit-fake.mjs', '--port', '0', '--webhook-secret', 'whsec_bad'], {
      cwd: pkgDir,
    }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr.trim().split('\n')).toEqual([
      'verikit-fake: --webhook-secret is not whsec_ followed by base64',
    ]);
  });
});
