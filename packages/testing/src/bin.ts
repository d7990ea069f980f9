#!/usr/bin/env node
// `verikit-fake`: the fake verification service as a command, for testing from other languages or by hand.
import { parseArgs } from 'node:util';
import { checkWebhookSecret } from '@verikit/core';
import { checkCredential, checkHttpUrl } from './fake/checks.js';
import { createFakeService } from './fake/service.js';

const usage = `Usage: verikit-fake [--port 4010] [--host 127.0.0.1] [--api-key K] [--public-key P] [--webhook-secret whsec_...] [--webhook URL]... [--return-url URL]

Starts a stateful fake of the verification service and prints its URLs and credentials.`;

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
// Decimal digits only: Number() would also take '', '1e3', '0x10' and ' 80'.
const portText = args.values.port;
const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
if (!(port <= 65_535)) fail(`--port must be a decimal port number from 0 to 65535, not ${JSON.stringify(portText)}`);
try {
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
    organization: { apiKey: args.values['api-key'], publicKey: args.values['public-key'], webhookSecret: args.values['webhook-secret'] },
    // One line per request and per delivery attempt: what a developer watching the fake needs to see.
    onRequest: ({ method, path, status, durationMs }) => console.log(`${method} ${path} -> ${status} (${ms(durationMs)})`),
    webhooks: {
      endpoints: args.values.webhook ?? [],
      onAttempt: ({ messageId, endpoint, attempt, status, error, durationMs }) =>
        console.log(`webhook ${messageId} attempt ${attempt} -> ${endpoint}: ${status ?? `failed (${error})`} (${ms(durationMs)})`),
    },
  });
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
