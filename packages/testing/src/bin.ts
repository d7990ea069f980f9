#!/usr/bin/env node
// `verikit-fake`: the fake verification service as a command, for testing from other languages or by hand.
import { parseArgs } from 'node:util';
import { checkWebhookSecret } from '@verikit/core';
import { decimalInteger, msRange, share } from './cli-flags.js';
import { checkCredential, checkHttpUrl } from './fake/checks.js';
import type { FakeRateLimit } from './fake/requests.js';
import { createFakeService } from './fake/service.js';
import type { WebhookBehaviour } from './fake/webhooks.js';

const usage = `Usage: verikit-fake [--port 4010] [--host 127.0.0.1] [--api-key K] [--public-key P] [--webhook-secret whsec_...]
                    [--webhook URL]... [--return-url URL]
                    [--drop-rate 0.3] [--duplicate-rate 0.2] [--delay-ms 0-2000] [--rate-limit 60 [--retry-after 5]]

Starts a stateful fake of the verification service and prints its URLs, credentials and reviewer console.
  --drop-rate R       share of webhook messages never delivered (0 to 1)
  --duplicate-rate R  share of webhook messages delivered twice, same svix-id (0 to 1)
  --delay-ms MIN-MAX  random delay before a message's first attempt, in ms (out-of-order arrival)
  --rate-limit N      result reads (KYB details, KYC results) answered per minute per organization; beyond: 429
  --retry-after S     the 429's Retry-After in seconds (default: until a read leaves the minute)`;

let args: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      'api-key': { type: 'string' },
      'public-key': { type: 'string' },
      'webhook-secret': { type: 'string' },
      webhook: { type: 'string', multiple: true },
      'return-url': { type: 'string' },
      'drop-rate': { type: 'string' },
      'duplicate-rate': { type: 'string' },
      'delay-ms': { type: 'string' },
      'rate-limit': { type: 'string' },
      'retry-after': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
try {
  args = parse();
} catch (error) {
  console.error(`verikit-fake: ${(error as Error).message}\n\n${usage}`);
  process.exit(2);
}
if (args.values.help) {
  console.log(usage);
  process.exit(0);
}
const fail = (message: string): never => {
  console.error(`verikit-fake: ${message}`);
  process.exit(2);
};
const ms = (value: number) => `${Math.round(value)} ms`;
/** `value` single-quoted for POSIX sh: nothing in it (`;`, `$(...)`, a newline) is run when the line is pasted. */
const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
let port = 0;
let behaviour: WebhookBehaviour = {};
let rateLimit: FakeRateLimit | undefined;
try {
  const { values } = args;
  port = decimalInteger('--port', values.port, { min: 0, max: 65_535, what: 'decimal port number from 0 to 65535' });
  behaviour = {
    ...(values['drop-rate'] === undefined ? {} : { dropRate: share('--drop-rate', values['drop-rate']) }),
    ...(values['duplicate-rate'] === undefined ? {} : { duplicateRate: share('--duplicate-rate', values['duplicate-rate']) }),
    ...(values['delay-ms'] === undefined ? {} : { delayMs: msRange('--delay-ms', values['delay-ms']) }),
  };
  if (values['retry-after'] !== undefined && values['rate-limit'] === undefined) throw new Error('--retry-after needs --rate-limit');
  if (values['rate-limit'] !== undefined) {
    const positive = { min: 1, max: Number.MAX_SAFE_INTEGER, what: 'positive decimal integer' };
    rateLimit = {
      readsPerMinute: decimalInteger('--rate-limit', values['rate-limit'], positive),
      ...(values['retry-after'] === undefined
        ? {}
        : { retryAfterSeconds: decimalInteger('--retry-after', values['retry-after'], positive) }),
    };
  }
  if (args.values['webhook-secret'] !== undefined) checkWebhookSecret(args.values['webhook-secret'], '--webhook-secret');
  for (const flag of ['api-key', 'public-key'] as const) {
    if (args.values[flag] !== undefined) checkCredential(`--${flag}`, args.values[flag]);
  }
  if (args.values['return-url'] !== undefined) checkHttpUrl('--return-url', args.values['return-url']);
} catch (error) {
  fail((error as Error).message);
}

try {
  const fake = await createFakeService({
    port,
    host: args.values.host,
    returnUrl: args.values['return-url'],
    rateLimit,
    organization: { apiKey: args.values['api-key'], publicKey: args.values['public-key'], webhookSecret: args.values['webhook-secret'] },
    // One line per request and per delivery attempt: what a developer watching the fake needs to see.
    onRequest: ({ method, path, status, durationMs }) => console.log(`${method} ${path} -> ${status} (${ms(durationMs)})`),
    webhooks: {
      endpoints: args.values.webhook ?? [],
      onAttempt: ({ messageId, endpoint, attempt, status, error, durationMs }) =>
        console.log(`webhook ${messageId} attempt ${attempt} -> ${endpoint}: ${status ?? `failed (${error})`} (${ms(durationMs)})`),
      onDropped: ({ id, endpoint }) => console.log(`webhook ${id} -> ${endpoint}: dropped (--drop-rate)`),
    },
  });
  fake.webhooks.configure(behaviour);
  // Lines a shell takes as they are: paste them, then start a README server in the same shell.
  const variables = {
    VERIKIT_BASE_URL: fake.baseUrl,
    VERIKIT_WEB_URL: fake.webUrl,
    VERIKIT_API_KEY: fake.credentials.apiKey,
    VERIKIT_PUBLIC_KEY: fake.credentials.publicKey,
    VERIKIT_WEBHOOK_SECRET: fake.credentials.webhookSecret,
    // The client's spelling, which createClient and clientFromEnv take; the hosted page takes it in any case.
    VERIKIT_ENVIRONMENT: fake.clientOptions.environment,
  };
  console.log(`verikit fake service running; paste these into your shell:
${Object.entries(variables)
  .map(([name, value]) => `export ${name}=${shellQuote(value)}`)
  .join('\n')}
Webhook endpoints: ${(args.values.webhook ?? []).join(', ') || 'none (pass --webhook URL)'}
Reviewer console (decide cases in review, reopen, overturn, webhooks off/on): ${fake.reviewerUrl}
Press Ctrl+C to stop.`);
  const stop = () => {
    fake.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  console.error(`verikit-fake: could not start: ${(error as Error).message}`);
  process.exit(1);
}
