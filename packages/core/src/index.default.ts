import { createClientWithTransport, type VerikitClient } from './client/client.js';
import { type ClientOptions, clientOptionsFromEnv } from './client/options.js';
import { createFetchTransport } from './client/transport-fetch.js';

export * from './shared.js';

/** Client options outside Node (same as on Node, minus the undici pool settings). */
export interface NodeClientOptions extends ClientOptions {}

/**
 * Creates an API client over `fetch` (the global one unless you pass `fetch`).
 * @example
 * const client = createClient({ apiKey: env.VERIKIT_API_KEY, baseUrl: 'https://api.example' });
 */
export function createClient(options: ClientOptions): VerikitClient {
  return createClientWithTransport(options, createFetchTransport(options?.fetch), 'web');
}

/** Creates a client from `VERIKIT_*` variables; pass the env record where there is no `process.env` (Workers). */
export function clientFromEnv(
  overrides: Partial<ClientOptions> = {},
  env: Record<string, string | undefined> = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {},
): VerikitClient {
  return createClient({ ...clientOptionsFromEnv(env), ...overrides });
}
