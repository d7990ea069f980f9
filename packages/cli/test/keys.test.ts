import { ConfigurationError, createPayloadSealer } from '@verikit/core';
import { describe, expect, it } from 'vitest';
import { parseEncryptionKeys } from '../src/index.js';

const key = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');

describe('parseEncryptionKeys', () => {
  it("reads id:base64 pairs, the current key first, into the engines' encryption option (spaces around entries allowed)", async () => {
    const [current, old] = [key(), key()];
    const option = parseEncryptionKeys(` 2026-11:${current} , 2026-05:${old}`);
    expect(option).toEqual({
      keys: [
        { id: '2026-11', key: current },
        { id: '2026-05', key: old },
      ],
    });
    // What it reads seals with the first key and opens with the second.
    const oldSealer = createPayloadSealer({ keys: [{ id: '2026-05', key: old }] });
    const sealer = createPayloadSealer(option);
    expect(sealer?.currentKeyId).toBe('2026-11');
    expect(await sealer?.open((await oldSealer?.seal('body', 'msg_1')) as string, 'msg_1')).toBe('body');
  });

  it.each([
    ['', /entry 1 is not "id:base64-key"/],
    ['k1:', /entry 1 is not "id:base64-key"/],
    [`k1:${key()},,`, /entry 2 is not "id:base64-key"/],
    ['k1:c2hvcnQ=', /entry 1 \(id "k1"\) is not base64 of 32 bytes/],
    [`k.1:${key()}`, /entry 1 has an id that is not 1-32 of/],
  ])('refuses %j with a ConfigurationError naming the variable and the entry', (text, message) => {
    expect(() => parseEncryptionKeys(text)).toThrow(message);
    expect(() => parseEncryptionKeys(text)).toThrow(ConfigurationError);
    expect(() => parseEncryptionKeys(text)).toThrow(/^VERIKIT_ENCRYPTION_KEYS: /);
  });

  it('never puts a key in its message, and names another variable when asked to', () => {
    const secret = key();
    const error = (() => {
      try {
        parseEncryptionKeys(`a:${secret},a:${secret}`, 'MY_KEYS');
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toBe('MY_KEYS: entry 2 repeats the id "a"');
    expect(JSON.stringify(error)).not.toContain(secret.slice(0, 10));
  });
});
