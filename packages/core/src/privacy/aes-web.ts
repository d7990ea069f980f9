import { type AesGcmEngine, webBase64 } from './seal.js';

/** WebCrypto AES-256-GCM, for runtimes without Node built-ins. */
export const webAesGcm: AesGcmEngine<Promise<CryptoKey>> = {
  ...webBase64,
  importKey: (raw) => crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']),
  async encrypt(key, iv, plaintext, aad) {
    const params = { name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer>, additionalData: aad as Uint8Array<ArrayBuffer> };
    return new Uint8Array(await crypto.subtle.encrypt(params, await key, plaintext as Uint8Array<ArrayBuffer>));
  },
  async decrypt(key, iv, sealed, aad) {
    const params = { name: 'AES-GCM', iv: iv as Uint8Array<ArrayBuffer>, additionalData: aad as Uint8Array<ArrayBuffer> };
    return new Uint8Array(await crypto.subtle.decrypt(params, await key, sealed as Uint8Array<ArrayBuffer>));
  },
};
