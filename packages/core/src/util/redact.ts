const MAX_BODY_CHARS = 8 * 1024;
const REDACTED = '[redacted]';

/** `\uXXXX` and `\/`, the escapes by which JSON can spell a key without its literal characters. */
const JSON_ESCAPE = /\\u([0-9a-fA-F]{4})|\\\//g;

function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Every string in a parsed JSON value, object keys included, with the secrets removed. */
function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactText(key, secrets), redactValue(item, secrets)]));
  }
  return value;
}

/** Cuts `text` to the bound; a secret's beginning left at the cut is cut too, so no part of it survives. */
function bound(text: string, secrets: readonly string[]): string {
  if (text.length <= MAX_BODY_CHARS) return text;
  let out = text.slice(0, MAX_BODY_CHARS);
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, out.length); length > 0; length--) {
      if (out.endsWith(secret.slice(0, length))) {
        out = out.slice(0, -length);
        break;
      }
    }
  }
  return `${out}…[truncated]`;
}

/**
 * A response body safe to keep on an error. JSON is parsed first and every string in it redacted
 * (so a key the server echoed JSON-escaped, `\u0073k_...`, is caught once decoded), then bounded;
 * other text has its JSON-style escapes decoded, then is redacted and bounded. Either way the
 * redaction comes before the cut, and the cut never leaves the start of a secret behind.
 */
export function safeResponseBody(text: string, secrets: readonly string[]): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const literal = text.replace(JSON_ESCAPE, (_match, hex: string | undefined) =>
      hex ? String.fromCharCode(Number.parseInt(hex, 16)) : '/',
    );
    return bound(redactText(literal, secrets), secrets);
  }
  const clean = redactValue(parsed, secrets);
  const serialized = JSON.stringify(clean);
  return serialized === undefined || serialized.length <= MAX_BODY_CHARS ? clean : bound(redactText(serialized, secrets), secrets);
}
