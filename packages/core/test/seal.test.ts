import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createPayloadSealer, openUnsealed, PayloadSealError } from '../src/index.node.js';
import { webAesGcm } from '../src/privacy/aes-web.js';
import { createSealerWith } from '../src/privacy/seal.js';

const key = (id: string) => ({ id, key: randomBytes(32).toString('base64') });
const body = '{"type":"kyb.case.updated","data":{"refId":"biz-42","name":"Zoë Ångström"}}';

describe('createPayloadSealer', () => {
  it('seals with the current key, bound to its record, and opens it again; plain text opens as it is', async () => {
    const sealer = createPayloadSealer({ keys: [key('k2')] });
    if (sealer === undefined) throw new Error('expected a sealer');
    const sealed = await sealer.seal(body, 'msg_1');
    expect(sealed).toMatch(/^vk1\.k2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('biz-42');
    expect(await sealer.seal(body, 'msg_1')).not.toBe(sealed); // a fresh IV each time
    expect(await sealer.open(sealed, 'msg_1')).toBe(body);
    expect(await sealer.open(body, 'msg_1')).toBe(body);
    expect(sealer.needsReseal(body)).toBe(true);
    expect(sealer.needsReseal(sealed)).toBe(false);
  });

  it('opens with any configured key, so keys rotate; names the key it lacks; refuses another record or an altered value', async () => {
    const old = key('old');
    const before = createPayloadSealer({ keys: [old] });
    const sealed = (await before?.seal(body, 'msg_1')) as string;
    const rotated = createPayloadSealer({ keys: [key('new'), old] });
    expect(await rotated?.open(sealed, 'msg_1')).toBe(body);
    expect(rotated?.needsReseal(sealed)).toBe(true);
    const withoutOld = createPayloadSealer({ keys: [key('new')] });
    await expect(withoutOld?.open(sealed, 'msg_1')).rejects.toMatchObject({ code: 'payload_sealed', reason: 'unknown_key', keyId: 'old' });
    await expect(before?.open(sealed, 'msg_2')).rejects.toMatchObject({ reason: 'unreadable' });
    const wrongKeySameId = createPayloadSealer({ keys: [key('old')] });
    await expect(wrongKeySameId?.open(sealed, 'msg_1')).rejects.toBeInstanceOf(PayloadSealError);
    const flipped = `${sealed.slice(0, -2)}${sealed.endsWith('A') ? 'B' : 'A'}${sealed.slice(-1)}`;
    await expect(before?.open(flipped, 'msg_1')).rejects.toMatchObject({ reason: 'unreadable' });
    await expect(before?.open('vk1.old.bad', 'msg_1')).rejects.toMatchObject({ reason: 'unreadable' });
    const [, , iv, rest] = sealed.split('.');
    await expect(before?.open(`vk1.old.${iv}.${rest}!`, 'msg_1')).rejects.toMatchObject({ reason: 'unreadable' });
  });

  it('its error never holds the key or the value', async () => {
    const k = key('k');
    const sealed = (await createPayloadSealer({ keys: [k] })?.seal(body, 'msg_1')) as string;
    const error = await createPayloadSealer({ keys: [key('k')] })
      ?.open(sealed, 'msg_1')
      .catch((e: unknown) => e);
    const text = `${String(error)} ${JSON.stringify(error)}`;
    expect(text).not.toContain(k.key);
    expect(text).not.toContain(sealed.slice(12));
  });

  it('without keys: nothing to seal with, and a sealed value is a clear error', async () => {
    expect(createPayloadSealer(undefined)).toBeUndefined();
    expect(openUnsealed(body)).toBe(body);
    const sealed = (await createPayloadSealer({ keys: [key('k')] })?.seal(body, 'msg_1')) as string;
    expect(() => openUnsealed(sealed)).toThrow(expect.objectContaining({ reason: 'no_keys', keyId: 'k' }));
  });

  it('refuses keys that are not 32 bytes, bad or repeated ids, and an empty list, at creation', () => {
    const bad = [
      { keys: [] },
      { keys: [{ id: 'k', key: randomBytes(16).toString('base64') }] },
      { keys: [{ id: 'k', key: 'not base64!' }] },
      { keys: [{ id: 'a.b', key: randomBytes(32) }] },
      { keys: [{ id: '', key: randomBytes(32) }] },
      { keys: [key('k'), key('k')] },
    ];
    for (const option of bad) expect(() => createPayloadSealer(option)).toThrow(ConfigurationError);
    expect(createPayloadSealer({ keys: [{ id: 'raw', key: new Uint8Array(randomBytes(32)) }] })?.currentKeyId).toBe('raw');
  });

  it("the Web build's WebCrypto sealer and Node's open each other's values", async () => {
    const k = key('k');
    const node = createPayloadSealer({ keys: [k] });
    const web = createSealerWith(webAesGcm, { keys: [k] });
    expect(await web?.open((await node?.seal(body, 'id')) as string, 'id')).toBe(body);
    expect(await node?.open((await web?.seal(body, 'id')) as string, 'id')).toBe(body);
  });
});
