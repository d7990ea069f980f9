import type { HmacEngine } from './hmac.js';

const encoder = new TextEncoder();

// An HMAC-SHA256 is 32 bytes: few enough to spread into one call.
const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

/** WebCrypto HMAC, for runtimes without Node built-ins (Workers, Deno, Bun, browsers). */
export const webHmac: HmacEngine<Promise<CryptoKey>> = {
  importKey: (raw) => crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
  async sign(key, prefix, body) {
    const head = encoder.encode(prefix);
    const tail = typeof body === 'string' ? encoder.encode(body) : body;
    const data = new Uint8Array(head.length + tail.length);
    data.set(head, 0);
    data.set(tail, head.length);
    return toBase64(new Uint8Array(await crypto.subtle.sign('HMAC', await key, data)));
  },
};
