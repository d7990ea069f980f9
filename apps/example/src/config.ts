import { type ClientOptions, ConfigurationError, clientOptionsFromEnv, createWebhookVerifier, ENV_VARIABLES } from '@verikit/core';

/** Embedded fake service, or the real one from `VERIKIT_*` variables. */
export type Mode = { kind: 'embedded' } | { kind: 'real'; client: ClientOptions; webhookSecret: string };

/** A configuration problem, worded for one line on the console. */
export class ExampleConfigError extends Error {}

const WEBHOOK_SECRET = 'VERIKIT_WEBHOOK_SECRET';
const REQUIRED = [ENV_VARIABLES.apiKey, ENV_VARIABLES.baseUrl, ENV_VARIABLES.webUrl, ENV_VARIABLES.publicKey, WEBHOOK_SECRET];

/** No `VERIKIT_*` variable: embedded mode. Any of them: all five must be set and well-formed. */
export function readMode(env: Record<string, string | undefined>): Mode {
  const given = REQUIRED.filter((name) => env[name] !== undefined && env[name] !== '');
  if (given.length === 0) return { kind: 'embedded' };
  const missing = REQUIRED.filter((name) => !given.includes(name));
  if (missing.length > 0) {
    throw new ExampleConfigError(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (set all of ${REQUIRED.join(', ')} for the real service, or none for the embedded fake)`,
    );
  }
  try {
    const client = clientOptionsFromEnv(env);
    createWebhookVerifier({ secrets: env[WEBHOOK_SECRET] as string });
    return { kind: 'real', client, webhookSecret: env[WEBHOOK_SECRET] as string };
  } catch (error) {
    if (error instanceof ConfigurationError) {
      const message = error.option === 'secrets' ? error.message.replace('secrets', WEBHOOK_SECRET) : error.message;
      throw new ExampleConfigError(message);
    }
    throw error;
  }
}
