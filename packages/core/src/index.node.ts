import { createClientWithTransport, type VerikitClient } from './client/client.js';
import { type ClientOptions, clientOptionsFromEnv } from './client/options.js';
import { createFetchTransport } from './client/transport-fetch.js';
import { createUndiciTransport, type UndiciTransportOptions } from './client/transport-undici.js';

export * from './shared.js';

/** Client options on Node: an undici dispatcher (a proxy, say) and pool size may be given. */
export interface NodeClientOptions extends ClientOptions, UndiciTransportOptions {}

/**
 * Creates an API client. On Node it uses one keep-alive undici Agent (or your `fetch`/`dispatcher`).
 * @example
 * const client = createClient({ apiKey: process.env.VERIKIT_API_KEY!, baseUrl: 'https://api.example' });
 * const details = await client.kyb.getCase('business-42');
 */
export function createClient(options: NodeClientOptions): VerikitClient {
  const transport =
    options?.fetch !== undefined
      ? createFetchTransport(options.fetch)
      : createUndiciTransport({
          dispatcher: options?.dispatcher,
          connections: options?.connections,
          keepAliveTimeoutMs: options?.keepAliveTimeoutMs,
        });
  return createClientWithTransport(options, transport, `node ${process.version}`);
}

/** Creates a client from `VERIKIT_API_KEY`, `VERIKIT_BASE_URL`, and optionally `VERIKIT_WEB_URL`, `VERIKIT_PUBLIC_KEY`, `VERIKIT_ENVIRONMENT`. */
export function clientFromEnv(
  overrides: Partial<NodeClientOptions> = {},
  env: Record<string, string | undefined> = process.env,
): VerikitClient {
  return createClient({ ...clientOptionsFromEnv(env), ...overrides });
}
