import {
  type ClientOptions,
  ConfigurationError,
  clientOptionsFromEnv,
  createWebhookVerifier,
  ENV_VARIABLES,
  type ReconcileScheduleOptions,
} from '@verikit/core';

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

/** The example's own settings from the environment, beside the mode. */
export interface Settings {
  /** `VERIKIT_EXAMPLE_OPERATOR_SECRET`: the operator panel's sign-in (the panel is off without it). */
  operatorSecret: string | undefined;
  /** `VERIKIT_EXAMPLE_METRICS_TOKEN`: the bearer token a scraper sends for `GET /metrics` (off without it). */
  metricsToken: string | undefined;
  /** `VERIKIT_EXAMPLE_TRUST_PROXY`: Express's `trust proxy` (a hop count, or addresses such as `loopback`). */
  trustProxy: string | number | undefined;
  /** How the reconciler polls: verikit's defaults, or `VERIKIT_EXAMPLE_RECONCILE_FAST=1`'s seconds. */
  reconcile: ReconcileSettings;
}

/** What the reconciler is given, and the worker too: both read within one budget and schedule by one clock. */
export interface ReconcileSettings {
  /** `undefined`: verikit's (1, 5, 15 min, 1 h, 6 h, then daily; finals daily for 30 days). */
  schedule: ReconcileScheduleOptions | undefined;
  /** Reads of results per minute, webhooks' and the reconciler's together (`undefined`: verikit's 60). */
  readsPerMinute: number | undefined;
  /** How long an idle reconciler waits before it looks for due verifications again. */
  pollIntervalMs: number | undefined;
}

/**
 * `VERIKIT_EXAMPLE_RECONCILE_FAST=1`: pending verifications are checked every two seconds, so a
 * webhook lost while you try it by hand is found at once rather than within the hour. Final ones
 * wait 30 s: a decision overturned while deliveries are on arrives by its webhook first.
 */
export const FAST_RECONCILE: ReconcileSettings = {
  schedule: { stepsMs: [1_000], repeatMs: 2_000, finalRecheckMs: 30_000, failureBaseMs: 1_000, failureMaxMs: 5_000 },
  readsPerMinute: 600,
  pollIntervalMs: 250,
};

const DEFAULT_RECONCILE: ReconcileSettings = { schedule: undefined, readsPerMinute: undefined, pollIntervalMs: undefined };
const RECONCILE_FAST = 'VERIKIT_EXAMPLE_RECONCILE_FAST';

const MIN_SECRET = 16;

/** A secret from `env[name]`, or undefined when unset; one too short to resist guessing is refused at start. */
function secretSetting(env: Record<string, string | undefined>, name: string): string | undefined {
  const secret = env[name] || undefined;
  if (secret !== undefined && secret.length < MIN_SECRET)
    throw new ExampleConfigError(`${name} must be at least ${MIN_SECRET} characters long (for example: openssl rand -base64 24)`);
  return secret;
}

/** Reads {@link Settings}. */
export function readSettings(env: Record<string, string | undefined>): Settings {
  const trust = env.VERIKIT_EXAMPLE_TRUST_PROXY || undefined;
  const fast = env[RECONCILE_FAST] || '0';
  if (fast !== '0' && fast !== '1')
    throw new ExampleConfigError(`${RECONCILE_FAST} must be 1 (poll every few seconds) or 0, not ${JSON.stringify(fast)}`);
  return {
    operatorSecret: secretSetting(env, 'VERIKIT_EXAMPLE_OPERATOR_SECRET'),
    metricsToken: secretSetting(env, 'VERIKIT_EXAMPLE_METRICS_TOKEN'),
    trustProxy: trust !== undefined && /^\d+$/.test(trust) ? Number(trust) : trust,
    reconcile: fast === '1' ? FAST_RECONCILE : DEFAULT_RECONCILE,
  };
}
