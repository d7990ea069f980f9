import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { REDIS_URL, requireService } from '../../../test-support/services.js';
import { createRedisInbox, type RedisInbox } from '../src/index.js';

// The engine's sealer, with a hook before each seal: where reseal has read a body and not yet written it back.
const hooks = vi.hoisted(() => ({ beforeSeal: undefined as undefined | ((context: string) => Promise<void>) }));
vi.mock('@verikit/core', async (importOriginal) => {
  const core = await importOriginal<typeof import('@verikit/core')>();
  return {
    ...core,
    createPayloadSealer: (option: Parameters<typeof core.createPayloadSealer>[0]) => {
      const sealer = core.createPayloadSealer(option);
      return (
        sealer && {
          ...sealer,
          seal: async (text: string, context: string) => {
            await hooks.beforeSeal?.(context);
            return sealer.seal(text, context);
          },
        }
      );
    },
  };
});

const serverAvailable = await requireService('Redis', REDIS_URL);
const prefix = `{verikit-reseal-race-${process.pid}-${Date.now().toString(36)}}`;

describe.runIf(serverAvailable)('reseal against a body changed meanwhile, on the real server', () => {
  let redis: Redis;
  const opened: RedisInbox[] = [];
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    for (const inbox of opened) await inbox.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('writes a body back only where it is still what reseal read: one erased between its read and its write stays erased', async () => {
    const inboxOn = (options: Parameters<typeof createRedisInbox>[0]) => {
      const inbox = createRedisInbox(options);
      opened.push(inbox);
      return inbox;
    };
    const plain = inboxOn({ redis, prefix, persistence: 'ignore', logger: false, pruneIntervalMs: 0 });
    const body = (refId: string) => JSON.stringify({ type: 'kyb.case.status_changed', data: { refId, name: 'Zoë Canary-Ångström' } });
    for (const [id, refId] of [
      ['msg_race_1', 'biz-race-1'],
      ['msg_race_2', 'biz-race-2'],
      ['msg_race_3', 'biz-race-3'],
    ] as const)
      await plain.accept({ id, timestamp: 1_700_000_000, body: body(refId) });
    const rotated = inboxOn({
      redis,
      prefix,
      persistence: 'ignore',
      logger: false,
      pruneIntervalMs: 0,
      encryption: { keys: [{ id: 'k1', key: crypto.getRandomValues(new Uint8Array(32)) }] },
    });
    hooks.beforeSeal = async (context) => {
      if (context === 'msg_race_2') expect(await plain.erase({ kind: 'kyb', refId: 'biz-race-2' })).toEqual({ erased: 1 });
    };
    try {
      expect(await rotated.reseal()).toEqual({ resealed: 2 });
    } finally {
      hooks.beforeSeal = undefined;
    }
    const data = async (id: string) => JSON.parse((await redis.hget(`${prefix}:verikit-inbox:${id}`, 'data')) as string);
    expect((await data('msg_race_1')).body).toMatch(/^vk1\.k1\./);
    expect(await data('msg_race_2')).toEqual({ id: 'msg_race_2', timestamp: 1_700_000_000 });
    expect((await data('msg_race_3')).body).toMatch(/^vk1\.k1\./);
    expect(await rotated.get('msg_race_2')).toMatchObject({ state: 'done', payload: 'removed' });
  });
});
