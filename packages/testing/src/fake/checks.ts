// The rules for the fake's options, shared by `createFakeService` and the `verikit-fake` flags so
// both refuse the same values with the same words (the CLI names its flag as `option`).
import { ConfigurationError } from '@verikit/core';

/** `candidate` as an http(s) URL, or undefined (a missing, malformed or other-scheme URL). */
export function httpUrl(candidate: string | null | undefined): URL | undefined {
  if (!candidate) return undefined;
  try {
    const parsed = new URL(candidate);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** `value` as an http(s) URL, or a ConfigurationError naming `option`. */
export function checkHttpUrl(option: string, value: string): string {
  const parsed = httpUrl(value);
  if (parsed === undefined) throw new ConfigurationError(option, `${option} must be an http(s) URL`);
  return parsed.href;
}

/**
 * A credential the core client would send (the core's own rule): non-empty, no whitespace or control
 * characters. An empty API key would let a request with an empty `x-api-key` in.
 */
export function checkCredential(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ConfigurationError(option, `${option} is required and must be a non-empty string`);
  if (/[\s\u0000-\u001f\u007f]/.test(value)) throw new ConfigurationError(option, `${option} contains whitespace or control characters`);
  return value;
}
