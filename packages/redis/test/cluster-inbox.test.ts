import { createInboxWorker, createWebhookHandler } from '@verikit/core';
import { signWebhook } from '@verikit/testing';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxAdminCases } from '../../../test-support/inbox-admin.js';
import { type LocalRedisCluster, requireRedisCluster, startRedisCluster } from '../../../test-support/redis-cluster.js';
import { createRedisInbox, RedisCrossSlotError, type RedisInbox, type RedisTransaction } from '../src/index.js';
import { redisAdminStorages } from './admin-storage.js';
import { inboxAdminRedisCases } from './inbox-admin-redis.js';
import { inboxSuite } from './inbox-suite.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const canRun = requireRedisCluster();

const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe.runIf(canRun)('the Redis inbox on BullMQ, on a local 3-master Redis Cluster through an ioredis Cluster', () => {
  let cluster: LocalRedisCluster;
  let redis: Cluster;
  const opened: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3 });
    redis = new Cluster(cluster.startupNodes);
  }, 60_000);
  afterAll(async () => {
    for (const thing of opened.reverse()) await thing.close();
    redis?.disconnect();
    await cluster?.stop();
  });

  // Each queue of the suite has a hash tag of its own, so they land on different masters; the whole
  // cluster is thrown away at the end, so nothing is left to remove.
  inboxSuite({ redis: () => redis, cleanup: async () => {} });

  describe('InboxAdmin, payload retention, encryption at rest (each storage a queue and a ledger under a tag of its own)', () => {
    const storages = redisAdminStorages(() => redis);
    afterAll(() => storages.cleanup());
    inboxAdminCases(storages.fresh);
    describe('on Redis itself', () => inboxAdminRedisCases(() => redis));
  });

  const inboxOn = (options: Partial<Parameters<typeof createRedisInbox>[0]>): RedisInbox => {
    const inbox = createRedisInbox({ redis, persistence: 'ignore', logger: false, ...options });
    opened.push(inbox);
    return inbox;
  };
  const deliver = async (inbox: RedisInbox, id: string) => {
    const handler = createWebhookHandler({ secret: SECRET, inbox, logger: false });
    const signed = signWebhook({ secret: SECRET, payload: { type: 'kyb.case.status_changed', data: { refId: id } }, id });
    return (await handler({ method: 'POST', headers: signed.headers, body: signed.body })).status;
  };

  it('keeps every key of a queue in the slot of its hash tag, on one master, while queues of other tags use other masters', async () => {
    const tags = ['{cluster-a}', '{cluster-b}', '{cluster-c}', '{cluster-d}', '{cluster-e}', '{cluster-f}'];
    for (const prefix of tags) {
      const inbox = inboxOn({ prefix });
      expect(await deliver(inbox, `msg_slot_${prefix.slice(1, -1)}`)).toBe(204);
    }
    // Which master holds which queue's keys, and which master serves each tag's slot, as the client knows them.
    const holders = new Map<string, string[]>();
    for (const node of redis.nodes('master')) {
      for (const key of await node.keys('{cluster-?}*')) {
        const tag = key.slice(0, key.indexOf('}') + 1);
        const address = `${node.options.host}:${node.options.port}`;
        if (!holders.get(tag)?.includes(address)) holders.set(tag, [...(holders.get(tag) ?? []), address]);
      }
    }
    const owners = new Set<string>();
    for (const prefix of tags) {
      const slot = Number(await redis.cluster('KEYSLOT', prefix));
      const [master] = redis.slots[slot] ?? [];
      expect(holders.get(prefix)).toEqual([master]);
      owners.add(master as string);
    }
    expect(owners.size).toBeGreaterThan(1);
  });

  it('refuses at creation a prefix and queue name holding no hash tag (BullMQ would answer every add with CROSSSLOT); a tag in either is enough', async () => {
    for (const prefix of ['bull', 'verikit:inbox', '{}', '{verikit', 'verikit}']) {
      expect(() => createRedisInbox({ redis, prefix, queueName: 'events' })).toThrow(
        expect.objectContaining({ name: 'ConfigurationError', option: 'prefix', message: expect.stringMatching(/hash tag/) }),
      );
    }
    expect(await deliver(inboxOn({ prefix: 'bull', queueName: '{events}' }), 'msg_tag_in_queue')).toBe(204);
    expect(await deliver(inboxOn({ prefix: 'app:{events}' }), 'msg_tag_in_prefix')).toBe(204);
  });

  it('a ctx.sql write to a key outside the queue slot is refused before anything is applied (RedisCrossSlotError), dead-lettered, and replays once fixed', async () => {
    const prefix = '{cluster-cross}';
    const inbox = inboxOn({ prefix });
    const inSlot = `${prefix}:results`;
    // A key of another slot (checked below), as a user might write it after moving from a single server.
    const elsewhere = 'results-elsewhere';
    expect(await redis.cluster('KEYSLOT', elsewhere)).not.toBe(await redis.cluster('KEYSLOT', inSlot));
    let fixed = false;
    const errors: unknown[] = [];
    const worker = createInboxWorker<RedisTransaction>({
      inbox,
      pollIntervalMs: 100,
      retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
      logger: false,
      onError: (error) => errors.push(error),
      onEvent: async (ctx) => {
        ctx.sql.call('HINCRBY', inSlot, ctx.id, 1);
        ctx.sql.call('HINCRBY', fixed ? `${prefix}:more` : elsewhere, ctx.id, 1);
      },
    });
    opened.push({ close: () => worker.stop({ timeoutMs: 2_000 }) });
    worker.start();
    expect(await deliver(inbox, 'msg_cross_slot')).toBe(204);
    await until(async () => (await worker.deadLetters()).length === 1, 'the dead letter');
    const [dead] = await worker.deadLetters();
    expect(dead).toMatchObject({ id: 'msg_cross_slot', attempts: 2 });
    expect(dead?.lastError).toMatch(/ctx\.sql command 2 \(HINCRBY\) writes a key outside the slot .* \{cluster-cross\}/);
    expect(errors[0]).toBeInstanceOf(RedisCrossSlotError);
    expect(errors[0]).toMatchObject({ code: 'invalid_argument', command: 'HINCRBY', position: 2 });
    // Two attempts, neither applied its first (valid) write: the script refused before any command ran.
    expect(await redis.hgetall(inSlot)).toEqual({});
    expect(await redis.exists(elsewhere)).toBe(0);
    fixed = true;
    expect(await worker.replay('msg_cross_slot')).toBe(true);
    await until(async () => (await redis.hget(`${prefix}:more`, 'msg_cross_slot')) === '1', 'the replayed effect');
    expect(await redis.hgetall(inSlot)).toEqual({ msg_cross_slot: '1' });
  });
});
