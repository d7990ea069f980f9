import { Webhook } from 'svix';
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  checkWebhookSecret,
  MAX_SIGNATURES,
  MemoryIdempotencyStore,
  WebhookVerificationError,
} from '../src/index.node.js';
import { builds } from './helpers/builds.js';

// Standard Webhooks' published test vectors.
const VECTORS = [
  {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: 1614265330,
    payload: '{"test": 2432232314}',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  {
    secret: 'whsec_plJ3nmyCDGBKInavdOK15jsl',
    id: 'msg_loFOjxBNrRLzqYUf',
    timestamp: 1731705121,
    payload: '{"event_type":"ping","data":{"success":true}}',
    signature: 'v1,rAvfW3dJ/X/qxhsaXPOyyCGmRKsaKWcsNccKXlIktD0=',
  },
] as const;
const [A] = VECTORS;

describe.each(builds)('webhook verification, %s', (_name, build) => {
  const at = (seconds: number) => () => seconds * 1000;
  const verifierFor = (v: (typeof VECTORS)[number], offsetSeconds = 0) =>
    build.createWebhookVerifier({ secrets: v.secret, now: at(v.timestamp + offsetSeconds) });
  const headersOf = (v: (typeof VECTORS)[number], overrides: Record<string, string | undefined> = {}) => {
    const headers: Record<string, string | undefined> = {
      'svix-id': v.id,
      'svix-timestamp': String(v.timestamp),
      'svix-signature': v.signature,
      ...overrides,
    };
    return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as Record<string, string>;
  };
  const reason = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  };

  it.each(VECTORS)('accepts the published vector $id', async (v) => {
    await expect(verifierFor(v).verify(headersOf(v), v.payload)).resolves.toEqual({ id: v.id, timestamp: v.timestamp });
  });

  it('accepts the body as string, Buffer, Uint8Array and ArrayBuffer alike', async () => {
    const bytes = new TextEncoder().encode(A.payload);
    const verifier = verifierFor(A);
    for (const body of [
      A.payload,
      Buffer.from(A.payload),
      bytes,
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    ]) {
      await expect(verifier.verify(headersOf(A), body)).resolves.toMatchObject({ id: A.id });
    }
  });

  it('reads headers in any case, as a Fetch Headers, as webhook-* twins, and as repeated Node arrays', async () => {
    const verifier = verifierFor(A);
    await expect(
      verifier.verify({ 'SVIX-ID': A.id, 'Svix-Timestamp': String(A.timestamp), 'svix-SIGNATURE': A.signature }, A.payload),
    ).resolves.toMatchObject({ id: A.id });
    await expect(verifier.verify(new Headers(headersOf(A)), A.payload)).resolves.toMatchObject({ id: A.id });
    await expect(
      verifier.verify({ 'webhook-id': A.id, 'webhook-timestamp': String(A.timestamp), 'webhook-signature': A.signature }, A.payload),
    ).resolves.toMatchObject({ id: A.id });
    await expect(verifier.verify({ ...headersOf(A), 'svix-id': [A.id, A.id] }, A.payload)).resolves.toMatchObject({ id: A.id });
    expect(await reason(verifier.verify({ ...headersOf(A), 'svix-id': [A.id, 'msg_other'] }, A.payload))).toBe('invalid_header');
  });

  it('accepts the valid signature among decoys and other versions', async () => {
    const signature = `v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v2,xyz ${A.signature} v1,garbage`;
    await expect(verifierFor(A).verify(headersOf(A, { 'svix-signature': signature }), A.payload)).resolves.toMatchObject({ id: A.id });
  });

  it.each([
    ['garbage', 'v1,garbage', 'no_matching_signature'],
    ['truncated', A.signature.slice(0, -4), 'no_matching_signature'],
    ['empty v1,', 'v1,', 'no_matching_signature'],
    ['another version only', A.signature.replace('v1,', 'v2,'), 'no_matching_signature'],
    ['no version', A.signature.slice(3), 'malformed_signature'],
    ['spaces only', '   ', 'malformed_signature'],
    ['wrong case of the base64', `v1,${A.signature.slice(3).toLowerCase()}`, 'no_matching_signature'],
    ['too many entries', Array.from({ length: MAX_SIGNATURES + 1 }, () => A.signature).join(' '), 'too_many_signatures'],
  ])('rejects a %s signature', async (_case, signature, expected) => {
    expect(await reason(verifierFor(A).verify(headersOf(A, { 'svix-signature': signature }), A.payload))).toBe(expected);
  });

  it('checks the timestamp tolerance: ±300 s accepted, ±301 s rejected', async () => {
    await expect(verifierFor(A, 300).verify(headersOf(A), A.payload)).resolves.toBeDefined();
    await expect(verifierFor(A, -300).verify(headersOf(A), A.payload)).resolves.toBeDefined();
    expect(await reason(verifierFor(A, 301).verify(headersOf(A), A.payload))).toBe('timestamp_too_old');
    expect(await reason(verifierFor(A, -301).verify(headersOf(A), A.payload))).toBe('timestamp_too_new');
  });

  it('honours a configured tolerance', async () => {
    const strict = build.createWebhookVerifier({ secrets: A.secret, toleranceSeconds: 10, now: at(A.timestamp + 11) });
    expect(await reason(strict.verify(headersOf(A), A.payload))).toBe('timestamp_too_old');
  });

  it.each(['abc', '1614265330abc', '-1614265330', '1614265330.5', ' 1614265330', '1'.repeat(16)])(
    'rejects the timestamp %j',
    async (timestamp) => {
      expect(await reason(verifierFor(A).verify(headersOf(A, { 'svix-timestamp': timestamp }), A.payload))).toBe('invalid_timestamp');
    },
  );

  it.each([
    ['svix-id', 'missing_id'],
    ['svix-timestamp', 'missing_timestamp'],
    ['svix-signature', 'missing_signature'],
  ])('rejects a delivery without %s', async (header, expected) => {
    expect(await reason(verifierFor(A).verify(headersOf(A, { [header]: undefined }), A.payload))).toBe(expected);
    expect(await reason(verifierFor(A).verify(headersOf(A, { [header]: '' }), A.payload))).toBe(expected);
  });

  it('rejects a changed id, timestamp or body byte', async () => {
    const verifier = verifierFor(A);
    expect(await reason(verifier.verify(headersOf(A, { 'svix-id': `${A.id}x` }), A.payload))).toBe('no_matching_signature');
    expect(await reason(verifier.verify(headersOf(A, { 'svix-timestamp': String(A.timestamp + 1) }), A.payload))).toBe(
      'no_matching_signature',
    );
    expect(await reason(verifier.verify(headersOf(A), A.payload.replace('2432232314', '2432232315')))).toBe('no_matching_signature');
    expect(await reason(verifier.verify(headersOf(A), `${A.payload} `))).toBe('no_matching_signature');
  });

  it('rejects a body that is not raw bytes', async () => {
    expect(await reason(verifierFor(A).verify(headersOf(A), { test: 2432232314 } as never))).toBe('invalid_body');
  });

  it('accepts either secret during a rotation', async () => {
    const [first, second] = VECTORS;
    const verifier = build.createWebhookVerifier({ secrets: [first.secret, second.secret], now: at(second.timestamp) });
    await expect(verifier.verify(headersOf(second), second.payload)).resolves.toMatchObject({ id: second.id });
  });

  it.each([
    ['empty', ''],
    ['only the prefix', 'whsec_'],
    ['not base64', 'whsec_not*base64!'],
    ['bad padding', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw='],
    ['a trailing newline', `${A.secret}\n`],
    ['a space inside', 'whsec_MfKQ9r8GKYqr TwjUPD8ILPZIo2LaLaSw'],
  ])('refuses a secret that is %s, at creation', (_case, secret) => {
    expect(() => build.createWebhookVerifier({ secrets: secret })).toThrow(ConfigurationError);
    expect(() => build.createWebhookVerifier({ secrets: [A.secret, secret] })).toThrow(/secrets\[1\]/);
  });

  it('refuses a key shorter than 16 bytes (whsec_AA== is one byte), accepts 16', () => {
    const ofBytes = (n: number) => `whsec_${Buffer.alloc(n, 7).toString('base64')}`;
    for (const weak of ['whsec_AA==', ofBytes(15)]) {
      expect(() => build.createWebhookVerifier({ secrets: weak })).toThrow(/^secrets is too short/);
    }
    expect(() => build.createWebhookVerifier({ secrets: ofBytes(16) })).not.toThrow();
  });

  it('a bad secret is named by the option the integrator gave: secret, or secrets', () => {
    const error = (options: object) => {
      try {
        build.createWebhookHandler({ store: new MemoryIdempotencyStore(), onEvent: () => {}, ...options });
      } catch (e) {
        return e as ConfigurationError;
      }
      throw new Error('expected a ConfigurationError');
    };
    expect(error({ secret: 'whsec_AA==' })).toMatchObject({ option: 'secret', message: expect.stringMatching(/^secret is too short/) });
    expect(error({ secret: 'whsec_bad' })).toMatchObject({ option: 'secret', message: 'secret is not whsec_ followed by base64' });
    expect(error({ secrets: [A.secret, 'whsec_AA=='] })).toMatchObject({
      option: 'secrets',
      message: expect.stringMatching(/^secrets\[1\]/),
    });
  });

  it('checkWebhookSecret applies the same rules, naming the option it is given', () => {
    expect(() => checkWebhookSecret(A.secret, '--webhook-secret')).not.toThrow();
    expect(() => checkWebhookSecret('whsec_bad', '--webhook-secret')).toThrow('--webhook-secret is not whsec_ followed by base64');
    expect(() => checkWebhookSecret(undefined, 'VERIKIT_WEBHOOK_SECRET')).toThrow(/^VERIKIT_WEBHOOK_SECRET is required/);
  });

  it('limits the id to 256 characters and the timestamp to 15 digits (documented strictness)', async () => {
    const long = await reason(verifierFor(A).verify(headersOf(A, { 'svix-id': 'm'.repeat(257) }), A.payload));
    expect(long).toBe('invalid_header');
    const fine = await reason(verifierFor(A).verify(headersOf(A, { 'svix-id': 'm'.repeat(256) }), A.payload));
    expect(fine).toBe('no_matching_signature');
    const digits = await reason(verifierFor(A).verify(headersOf(A, { 'svix-timestamp': `0${A.timestamp}`.padStart(16, '0') }), A.payload));
    expect(digits).toBe('invalid_timestamp');
  });

  it('accepts a secret without the whsec_ prefix, as Svix does', async () => {
    const verifier = build.createWebhookVerifier({ secrets: A.secret.slice('whsec_'.length), now: at(A.timestamp) });
    await expect(verifier.verify(headersOf(A), A.payload)).resolves.toBeDefined();
  });

  it('never puts the secret or the expected signature in an error', async () => {
    const messages: string[] = [];
    try {
      build.createWebhookVerifier({ secrets: `${A.secret} ` });
    } catch (error) {
      messages.push(String(error), JSON.stringify(error));
    }
    const error = await verifierFor(A)
      .verify(headersOf(A, { 'svix-signature': 'v1,wrong' }), A.payload)
      .catch((e: unknown) => e);
    messages.push(String(error), JSON.stringify(error), (error as Error).stack ?? '');
    for (const message of messages) {
      expect(message).not.toContain(A.secret.slice(6));
      expect(message).not.toContain(A.signature.slice(3));
    }
  });

  it('hashes the exact bytes: whitespace, unicode and escaped slashes survive, re-serialisation does not', async () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const bodies = [
      '{\n  "refId" : "acme",\t"note": "  spaced  "\n}\n',
      '{"name":"Zoë Ünïcødé 商店 🚀","emoji":"\\ud83d\\ude80"}',
      '{"url":"https:\\/\\/example.com\\/a\\/b","path":"\\/x"}',
    ];
    const now = Math.floor(Date.now() / 1000);
    const verifier = build.createWebhookVerifier({ secrets: secret });
    for (const body of bodies) {
      const signature = new Webhook(secret).sign('msg_exact', new Date(now * 1000), body);
      const headers = { 'svix-id': 'msg_exact', 'svix-timestamp': String(now), 'svix-signature': signature };
      await expect(verifier.verify(headers, body)).resolves.toBeDefined();
      await expect(verifier.verify(headers, Buffer.from(body, 'utf8'))).resolves.toBeDefined();
      const reserialised = JSON.stringify(JSON.parse(body));
      expect(reserialised).not.toBe(body);
      expect(await reason(verifier.verify(headers, reserialised))).toBe('no_matching_signature');
    }
  });

  it('verifyWebhook does the same in one call', async () => {
    await expect(build.verifyWebhook({ secrets: A.secret, headers: headersOf(A), body: A.payload, now: at(A.timestamp) })).resolves.toEqual(
      { id: A.id, timestamp: A.timestamp },
    );
    expect(
      await reason(build.verifyWebhook({ secrets: A.secret, headers: headersOf(A), body: `${A.payload}x`, now: at(A.timestamp) })),
    ).toBe('no_matching_signature');
  });
});
