/**
 * HMAC-SHA256 over `prefix || body`, base64. Node answers synchronously (node:crypto), the Web
 * build asynchronously (WebCrypto): the verifier awaits either.
 */
export interface HmacEngine<Key> {
  importKey(raw: Uint8Array): Key;
  sign(key: Key, prefix: string, body: string | Uint8Array): string | Promise<string>;
}
