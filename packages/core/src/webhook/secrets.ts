import { ConfigurationError } from '../errors.js';

const PREFIX = 'whsec_';
/** Fewest key bytes accepted: Svix issues 24, and a shorter key is guessable or a paste gone wrong. */
export const MIN_SECRET_BYTES = 16;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes signing secrets (`whsec_<base64>`, as the dashboard shows them; the prefix may be
 * left out, as Svix allows) once, at startup, so a bad secret fails the deploy rather than the
 * first delivery. Messages name the position, never the value.
 */
export function decodeSecrets(option: string, input: string | readonly string[] | undefined): Uint8Array[] {
  const list = typeof input === 'string' ? [input] : input;
  if (list === undefined || !Array.isArray(list) || list.length === 0) {
    throw new ConfigurationError(option, `${option} is required: the endpoint's signing secret (whsec_...)`);
  }
  return list.map((secret, index) => {
    const where = list.length > 1 ? `${option}[${index}]` : option;
    if (typeof secret !== 'string' || secret.length === 0) throw new ConfigurationError(option, `${where} is empty`);
    // \s is every character trim() removes, so leading and trailing ones are found too.
    if (/\s/.test(secret)) throw new ConfigurationError(option, `${where} contains whitespace: copy it without spaces or newlines`);
    const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
    if (encoded.length === 0 || !BASE64.test(encoded)) throw new ConfigurationError(option, `${where} is not whsec_ followed by base64`);
    const key = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
    if (key.length < MIN_SECRET_BYTES)
      throw new ConfigurationError(
        option,
        `${where} is too short (${key.length} bytes of key, at least ${MIN_SECRET_BYTES}): copy the whole whsec_ secret`,
      );
    return key;
  });
}

/**
 * Checks signing secrets by the rules the webhook verifier applies at startup, naming `option`
 * (yours: a flag, an environment variable) in the message; throws {@link ConfigurationError}.
 * @example
 * checkWebhookSecret(process.env.VERIKIT_WEBHOOK_SECRET, 'VERIKIT_WEBHOOK_SECRET');
 */
export function checkWebhookSecret(secret: string | readonly string[] | undefined, option = 'secret'): void {
  decodeSecrets(option, secret);
}
