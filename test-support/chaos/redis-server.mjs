// One instance of the multi-instance chaos harness over the real Redis, in inline mode (store) or
// inbox mode (BullMQ inbox + worker, the effect queued on ctx.sql): see instance.mjs.
import { createRedisInbox, createRedisStore } from '@verikit/redis';
import { Cluster, Redis } from 'ioredis';
import { inboxWebhook, inlineWebhook, serveInstance } from './instance.mjs';

// `url` is a server's (redis://host:port) or a Cluster's nodes (cluster:host:port,host:port,...).
const [mode, framework, prefix, secret, url, connectionName] = process.argv.slice(2);
const redis = url.startsWith('cluster:')
  ? new Cluster(
      url
        .slice('cluster:'.length)
        .split(',')
        .map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) })),
      { redisOptions: { connectionName } },
    )
  : new Redis(url, { connectionName });
// Connections killed by the harness (CLIENT KILL) surface here; ioredis reconnects: expected, not fatal.
redis.on('error', () => {});
const effectsKey = `${prefix}:effects`;
const countRun = () => redis.incr(`${prefix}:runs`);

const webhook =
  mode === 'inline'
    ? inlineWebhook({
        secret,
        store: createRedisStore({ redis, prefix: `${prefix}:receipt:`, persistence: 'ignore', logger: false }),
        countRun,
        writeKeyedEffect: (ctx) => redis.hsetnx(effectsKey, ctx.id, 1),
      })
    : inboxWebhook({
        secret,
        inbox: createRedisInbox({ redis, prefix, persistence: 'ignore', logger: false }),
        countRun,
        writeEffect: (ctx) => ctx.sql.call('HINCRBY', effectsKey, ctx.id, 1),
      });
await serveInstance(framework, webhook);
