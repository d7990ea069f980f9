// A worker process whose onEvent kills it (SIGKILL: no cleanup, no recorded failure), as a poison
// event does: it notes each run in a file first. Arguments: engine (postgres | redis), the server's
// URL, the schema or key prefix, the runs file.
import { appendFileSync } from 'node:fs';
import { createInboxWorker } from '@verikit/core';

const [engine, url, namespace, runsFile] = process.argv.slice(2);

async function openInbox() {
  if (engine === 'postgres') {
    const { createPostgresInbox } = await import('@verikit/postgres');
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    return createPostgresInbox({ db: pool, schema: namespace });
  }
  const { createRedisInbox } = await import('@verikit/redis');
  const { Redis } = await import('ioredis');
  return createRedisInbox({ redis: new Redis(url), prefix: namespace, persistence: 'ignore', logger: false });
}

createInboxWorker({
  inbox: await openInbox(),
  // Short, so each restart finds the dead worker's lease run out soon; nothing else holds it meanwhile.
  leaseMs: 1_000,
  pollIntervalMs: 100,
  retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
  logger: false,
  onEvent: (ctx) => {
    appendFileSync(runsFile, `${ctx.id} ${ctx.attempt}\n`);
    process.kill(process.pid, 'SIGKILL');
  },
}).start();
console.log('worker started');
