import { ConfigurationError, createPayloadSealer, type EncryptionKey, type EncryptionOptions } from '@verikit/core';

/** The variable the CLI reads the encryption keys from. */
export const KEYS_VARIABLE = 'VERIKIT_ENCRYPTION_KEYS';

/**
 * Reads encryption keys written as `id:base64,id:base64` (the current key first, older ones after
 * it, as the engines' `encryption.keys` take them), the format of `VERIKIT_ENCRYPTION_KEYS`. Each
 * key is checked now (an id of 1-32 `A-Z a-z 0-9 _ -`, 32 bytes of base64); a message names the
 * entry by its position and id, never the key.
 * @example
 * // VERIKIT_ENCRYPTION_KEYS="2026-11:$(openssl rand -base64 32),2026-05:<the previous key>"
 * const inbox = createPostgresInbox({ db: pool, encryption: parseEncryptionKeys(process.env.VERIKIT_ENCRYPTION_KEYS!) });
 */
export function parseEncryptionKeys(text: string, variable: string = KEYS_VARIABLE): EncryptionOptions {
  const keys = text.split(',').map((raw, index): EncryptionKey => {
    const entry = raw.trim();
    const colon = entry.indexOf(':');
    const at = `${variable}: entry ${index + 1}`;
    if (colon < 1 || colon === entry.length - 1)
      throw new ConfigurationError(variable, `${at} is not "id:base64-key" (keys are separated by commas)`);
    const key = { id: entry.slice(0, colon).trim(), key: entry.slice(colon + 1).trim() };
    try {
      createPayloadSealer({ keys: [key] });
    } catch (error) {
      // Core names the field at fault (`encryption.keys[0].id` or `.key`); the message here names the entry, never the key.
      const field = error instanceof ConfigurationError ? error.option : '';
      throw new ConfigurationError(
        variable,
        field.endsWith('.id')
          ? `${at} has an id that is not 1-32 of A-Z a-z 0-9 _ -`
          : `${at} (id ${JSON.stringify(key.id)}) is not base64 of 32 bytes (openssl rand -base64 32)`,
      );
    }
    return key;
  });
  const seen = new Set<string>();
  for (const [index, { id }] of keys.entries()) {
    if (seen.has(id)) throw new ConfigurationError(variable, `${variable}: entry ${index + 1} repeats the id ${JSON.stringify(id)}`);
    seen.add(id);
  }
  return { keys };
}
