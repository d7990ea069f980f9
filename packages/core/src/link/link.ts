import { InvalidArgumentError } from '../errors.js';

/** The `environment` query value of a hosted link (spec 4.7). */
export type LinkEnvironment = 'Production' | 'Sandbox';

/** Input of {@link buildVerificationLink}. */
export interface VerificationLinkInput {
  /** The hosted page address ({web_url}). */
  webUrl: string;
  /** A KYB or KYC session token from the create response. */
  token: string;
  /** The organization's public key. */
  publicKey: string;
  /** `Production`/`Sandbox` (the client's `production`/`sandbox` are accepted too). */
  environment: LinkEnvironment | 'production' | 'sandbox';
}

/**
 * Builds the hosted verification link `{web_url}/?authToken&publicKey&environment` (spec 4.7).
 * Send it only to the user it was made for: the token is their access to the journey.
 * @example
 * buildVerificationLink({ webUrl: 'https://verify.example', token, publicKey: 'pk_1', environment: 'Sandbox' });
 * // 'https://verify.example/?authToken=...&publicKey=pk_1&environment=Sandbox'
 */
export function buildVerificationLink(input: VerificationLinkInput): string {
  const environment = normalizeEnvironment(input.environment);
  let url: URL;
  try {
    url = new URL(input.webUrl);
  } catch {
    throw new InvalidArgumentError('webUrl is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidArgumentError('webUrl must be http(s)');
  if (typeof input.token !== 'string' || input.token === '') throw new InvalidArgumentError('token is required');
  if (typeof input.publicKey !== 'string' || input.publicKey === '') throw new InvalidArgumentError('publicKey is required');
  url.pathname = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  url.search = new URLSearchParams({ authToken: input.token, publicKey: input.publicKey, environment }).toString();
  url.hash = '';
  return url.toString();
}

function normalizeEnvironment(value: unknown): LinkEnvironment {
  if (value === 'Production' || value === 'production') return 'Production';
  if (value === 'Sandbox' || value === 'sandbox') return 'Sandbox';
  throw new InvalidArgumentError('environment must be "Production" or "Sandbox"');
}

/**
 * Reads a session token's expiry from its JWT `exp` claim WITHOUT verifying the signature
 * (the service verifies it); use it to know when to create a new link. `null` when the token is
 * not a JWT or carries no numeric `exp`, or one outside the range of a Date.
 */
export function readTokenExpiry(token: string): Date | null {
  const payload = token.split('.')[1];
  if (payload === undefined) return null;
  try {
    const json = JSON.parse(new TextDecoder().decode(base64UrlDecode(payload))) as { exp?: unknown };
    if (typeof json.exp !== 'number') return null;
    // An `exp` outside the Date range (a token from a buggy or hostile issuer) is unreadable, not fatal.
    const expiry = new Date(json.exp * 1000);
    return Number.isNaN(expiry.getTime()) ? null : expiry;
  } catch {
    return null;
  }
}

function base64UrlDecode(text: string): Uint8Array {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
