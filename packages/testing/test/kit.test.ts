import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createClient,
  createWebhookHandler,
  createWebhookVerifier,
  KYB_STATUSES,
  kybCaseDetailsSchema,
  kycResultSchema,
} from '@verikit/core';
import { describe, expect, it } from 'vitest';
import { FakeIdempotencyStore, kybCaseDetailsFixture, kycResultFixture, signWebhook, webhookEventFixture } from '../src/index.js';

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

describe('verikit-fake', () => {
  it('starts on the given port and prints its URLs and credentials', async () => {
    // Port 0: the OS picks a free one (a guessed port can be taken by another test's client socket).
    const child = spawn(process.execPath, ['bin/verikit-fake.mjs', '--port', '0'], { cwd: pkgDir });
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('Ctrl+C')) resolve(text);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
      });
      const value = (name: string) => new RegExp(`${name}=(\\S+)`).exec(output)?.[1];
      expect(value('VERIKIT_BASE_URL')).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
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
      const { stdout } = await run('sh', ['-c', `${exports.join('\n')}\nprintenv VERIKIT_API_KEY VERIKIT_ENVIRONMENT`]);
      expect(stdout).toBe(`${value('VERIKIT_API_KEY')}\nsandbox\n`);
      const client = createClient({ apiKey: value('VERIKIT_API_KEY')!, baseUrl: value('VERIKIT_BASE_URL')!, maxRetries: 0 });
      const logged = new Promise<string>((resolve) =>
        child.stdout.on('data', (chunk: Buffer) => {
          if (/POST \/\S*kyb\S* -> 20\d/.test(chunk.toString())) resolve(chunk.toString());
        }),
      );
      await expect(client.kyb.createCase({ refId: 'cli' })).resolves.toMatchObject({ kybCase: { refId: 'cli' } });
      // One line per request, with its status and duration, never the query.
      expect(await logged).toMatch(/^POST \/\S+ -> 20\d \(\d+ ms\)$/m);
      await client.close();
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses a bad port with one clear line', async () => {
    const error = await run(process.execPath, ['bin/verikit-fake.mjs', '--port', 'abc'], { cwd: pkgDir }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(error).toMatchObject({ code: 2 });
    expect((error as { stderr: string }).stderr).toContain('--port must be a port number');
  });

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
