const MAX_BODY_CHARS = 8 * 1024;

/**
 * Removes every occurrence of the given secrets from a text and bounds its length, so a
 * response body kept on an error can never carry an API key a server chose to echo back.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}…[truncated]` : text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}
