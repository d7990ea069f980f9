import { Webhook } from 'svix';

export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** Headers for `body` signed by the real svix package, as Svix would send them. */
export function svixHeaders(body: string, options: { id?: string; secret?: string; timestamp?: number } = {}): Record<string, string> {
  const id = options.id ?? 'msg_1';
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'svix-id': id,
    'svix-timestamp': String(timestamp),
    'svix-signature': new Webhook(options.secret ?? SECRET).sign(id, new Date(timestamp * 1000), body),
  };
}
