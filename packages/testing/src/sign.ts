import { Webhook } from 'svix';

/** Input of {@link signWebhook}. */
export interface SignWebhookInput {
  /** The signing secret (`whsec_...`); several sign at once, as during a rotation. */
  secret: string | readonly string[];
  /** The event: an object (serialised with JSON.stringify) or the exact body text. */
  payload: unknown;
  /** Message id (default: a random `msg_...`). */
  id?: string;
  /** Seconds since the epoch (default: now). */
  timestamp?: number;
}

/** A signed delivery: the headers and the exact body to send. */
export interface SignedWebhook {
  /** `svix-id`, `svix-timestamp`, `svix-signature` and `content-type`. */
  headers: Record<string, string>;
  /** The body text that was signed. */
  body: string;
  /** The same body as bytes. */
  bytes: Uint8Array;
  id: string;
  timestamp: number;
}

/**
 * Signs a payload exactly as Svix does (with the real `svix` package), for tests that post
 * deliveries to your webhook route.
 * @example
 * const { headers, body } = signWebhook({ secret: 'whsec_...', payload: { type: 'kyb.case.status_changed', data: { refId: 'b1' } } });
 * await fetch(`${url}/webhook`, { method: 'POST', headers, body });
 */
export function signWebhook(input: SignWebhookInput): SignedWebhook {
  const id = input.id ?? `msg_${crypto.randomUUID().replace(/-/g, '')}`;
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  const body = typeof input.payload === 'string' ? input.payload : JSON.stringify(input.payload);
  const secrets = typeof input.secret === 'string' ? [input.secret] : input.secret;
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), body)).join(' ');
  return {
    headers: { 'svix-id': id, 'svix-timestamp': String(timestamp), 'svix-signature': signature, 'content-type': 'application/json' },
    body,
    bytes: new TextEncoder().encode(body),
    id,
    timestamp,
  };
}
