import { ConfigurationError } from '../errors.js';

const PREFIX = 'whsec_';
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
    if (secret.trim() !== secret || /\s/.test(secret))
      throw new ConfigurationError(option, `${where} contains whitespace (copy it again without spaces or newlines)`);
    const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
    if (encoded.length === 0 || !BASE64.test(encoded)) throw new ConfigurationError(option, `${where} is not whsec_ followed by base64`);
    return Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  });
}
