import { Buffer } from 'node:buffer';
import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import type { AesGcmEngine } from './seal.js';

/** node:crypto AES-256-GCM. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export const nodeAesGcm: AesGcmEngine<KeyObject> = {
  toBase64Url: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url'),
  // Buffer skips what is not base64 without a word: checked first, so a damaged value is refused, not half-read.
  fromBase64: (text) => (BASE64.test(text) ? new Uint8Array(Buffer.from(text, 'base64')) : undefined),
  importKey: (raw) => createSecretKey(raw),
  encrypt(key, iv, plaintext, aad) {
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad);
    const head = cipher.update(plaintext);
    const tail = cipher.final();
    const out = new Uint8Array(head.length + tail.length + 16);
    out.set(head, 0);
    out.set(tail, head.length);
    out.set(cipher.getAuthTag(), head.length + tail.length);
    return out;
  },
  decrypt(key, iv, sealed, aad) {
    const decipher = createDecipheriv('aes-256-gcm', key, iv).setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    const head = decipher.update(sealed.subarray(0, sealed.length - 16));
    const tail = decipher.final();
    const out = new Uint8Array(head.length + tail.length);
    out.set(head, 0);
    out.set(tail, head.length);
    return out;
  },
};
