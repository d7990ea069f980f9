import { ConfigurationError, VerikitError } from '../errors.js';

/** One key of the `encryption` option: an id stored beside every sealed value, and 32 bytes of AES-256 key. */
export interface EncryptionKey {
  /** Names the key in every value it seals (1-32 of `A-Z a-z 0-9 _ -`): the key to open it is found by it. */
  id: string;
  /** 32 random bytes, or their base64 (`openssl rand -base64 32`). */
  key: Uint8Array | string;
}

/** The `encryption` option of the engines: keys to seal with the first of and open with any of, so keys rotate. */
export interface EncryptionOptions {
  /** The current key first; older keys after it, until `reseal` has moved every stored value to the current one. */
  keys: readonly EncryptionKey[];
}

/**
 * Seals stored text (webhook bodies) with AES-256-GCM, bound to the record it belongs to, and opens
 * it again. Values not sealed (written before encryption was turned on) open as they are.
 */
export interface PayloadSealer {
  /** The id of the key new values are sealed with. */
  readonly currentKeyId: string;
  /** Seals `text` for the record `context` (an event id, say): opened under another context, it fails. */
  seal(text: string, context: string): Promise<string>;
  /** Opens what `seal` made (with any configured key) or returns plain text as it is. */
  open(stored: string, context: string): Promise<string>;
  /** Whether `stored` needs sealing again: plain text, or sealed under a key other than the current one. */
  needsReseal(stored: string): boolean;
}

/** AES-256-GCM as each build has it: node:crypto on Node (about ten times WebCrypto's per-call speed there), WebCrypto elsewhere. */
export interface AesGcmEngine<Key> {
  /** Bytes as base64url without padding (Node's Buffer does it natively, several times faster than `btoa`). */
  toBase64Url(bytes: Uint8Array): string;
  /** Base64 or base64url (padded or not) to bytes; `undefined` when it is not base64. */
  fromBase64(text: string): Uint8Array | undefined;
  importKey(raw: Uint8Array): Key;
  /** Returns ciphertext followed by the 16-byte tag. */
  encrypt(key: Key, iv: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** Throws when the tag does not match (wrong key, altered value, other context). */
  decrypt(key: Key, iv: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

/**
 * A stored value could not be opened: sealed under a key id the `encryption` option does not have
 * (`reason: 'unknown_key'`), sealed while the engine has no keys (`'no_keys'`), or not opening under
 * its key (`'unreadable'`: a wrong key with that id, or an altered value). The stored value is left as it was.
 */
export class PayloadSealError extends VerikitError {
  override name = 'PayloadSealError';
  /** Why it could not be opened. */
  readonly reason: 'unknown_key' | 'no_keys' | 'unreadable';
  /** The key id the value names, when it names one. */
  readonly keyId: string | undefined;
  constructor(reason: PayloadSealError['reason'], keyId: string | undefined) {
    super(
      'payload_sealed',
      reason === 'no_keys'
        ? `a stored value is sealed (key ${JSON.stringify(keyId)}) but no encryption keys are configured: give the engine its encryption.keys`
        : reason === 'unknown_key'
          ? `a stored value is sealed with key ${JSON.stringify(keyId)}, which encryption.keys does not hold: add that key (after the current one) until reseal has run`
          : `a stored value sealed with key ${JSON.stringify(keyId)} does not open with that key: the key with this id is not the one it was sealed with, or the value was altered`,
    );
    this.reason = reason;
    this.keyId = keyId;
  }
}

const PREFIX = 'vk1.';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Base64 (standard or url-safe) with WebCrypto's tools, for the Web build. */
export const webBase64 = {
  toBase64Url(bytes: Uint8Array): string {
    let binary = '';
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i] as number);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  },
  fromBase64(text: string): Uint8Array | undefined {
    if (!BASE64.test(text)) return undefined;
    try {
      return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    } catch {
      return undefined;
    }
  },
};

function keyBytes(entry: EncryptionKey, index: number, fromBase64: AesGcmEngine<unknown>['fromBase64']): Uint8Array {
  const raw = typeof entry.key === 'string' ? fromBase64(entry.key.trim()) : entry.key instanceof Uint8Array ? entry.key : undefined;
  if (raw?.length !== 32)
    throw new ConfigurationError(
      `encryption.keys[${index}].key`,
      `encryption.keys[${index}].key must be 32 bytes (a Uint8Array, or base64 of 32 random bytes: openssl rand -base64 32)`,
    );
  return raw;
}

/** The key id a stored value names (`vk1.<id>.<iv>.<sealed>`), or undefined for plain text. */
function sealedParts(stored: string): { keyId: string; iv: string; sealed: string } | undefined {
  if (!stored.startsWith(PREFIX)) return undefined;
  const [keyId = '', iv = '', sealed = '', ...rest] = stored.slice(PREFIX.length).split('.');
  return rest.length === 0 ? { keyId, iv, sealed } : { keyId, iv: '', sealed: '' };
}

/**
 * A sealer over `engine` for the `encryption` option, or `undefined` when there is none (values are
 * then stored as they are, and a sealed one found is a {@link PayloadSealError}). Keys are checked
 * now, so a bad one fails at startup. Stored form: `vk1.<keyId>.<iv>.<ciphertext+tag>` (base64url);
 * webhook bodies are JSON, which never starts with `v`, so sealed and plain values cannot be confused.
 */
export function createSealerWith<Key>(engine: AesGcmEngine<Key>, option: EncryptionOptions | undefined): PayloadSealer | undefined {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== 'object' || !Array.isArray(option.keys) || option.keys.length === 0)
    throw new ConfigurationError('encryption', 'encryption must be { keys: [{ id, key }, ...] } with the current key first');
  const keys = new Map<string, Key>();
  option.keys.forEach((entry, index) => {
    if (typeof entry?.id !== 'string' || !KEY_ID.test(entry.id))
      throw new ConfigurationError(`encryption.keys[${index}].id`, `encryption.keys[${index}].id must be 1-32 of A-Z a-z 0-9 _ -`);
    if (keys.has(entry.id))
      throw new ConfigurationError(`encryption.keys[${index}].id`, `encryption key id ${JSON.stringify(entry.id)} is given twice`);
    keys.set(entry.id, engine.importKey(keyBytes(entry, index, engine.fromBase64)));
  });
  const currentKeyId = (option.keys[0] as EncryptionKey).id;
  const currentKey = keys.get(currentKeyId) as Key;
  return {
    currentKeyId,
    async seal(text, context) {
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const sealed = await engine.encrypt(currentKey, iv, encoder.encode(text), encoder.encode(context));
      return `${PREFIX}${currentKeyId}.${engine.toBase64Url(iv)}.${engine.toBase64Url(sealed)}`;
    },
    async open(stored, context) {
      const parts = sealedParts(stored);
      if (parts === undefined) return stored;
      const key = keys.get(parts.keyId);
      if (key === undefined) throw new PayloadSealError('unknown_key', parts.keyId);
      const iv = engine.fromBase64(parts.iv);
      const sealed = engine.fromBase64(parts.sealed);
      if (iv?.length !== IV_BYTES || sealed === undefined || sealed.length < 16) throw new PayloadSealError('unreadable', parts.keyId);
      try {
        return decoder.decode(await engine.decrypt(key, iv, sealed, encoder.encode(context)));
      } catch {
        throw new PayloadSealError('unreadable', parts.keyId);
      }
    },
    needsReseal: (stored) => sealedParts(stored)?.keyId !== currentKeyId,
  };
}

/** Opens a stored value without a sealer: plain text as it is; a sealed value is a {@link PayloadSealError} (`no_keys`). */
export function openUnsealed(stored: string): string {
  const parts = sealedParts(stored);
  if (parts !== undefined) throw new PayloadSealError('no_keys', parts.keyId);
  return stored;
}
