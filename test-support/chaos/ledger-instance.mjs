// One instance of the ledger chaos harness (ledger-harness.ts): a webhook route in inbox mode, an
// inbox worker that observes each event's verification through the ledger, and a reconciler, all
// with the same ledger options. onChange writes an effect row through ctx.sql with no unique key,
// so only the ledger's own transaction keeps it once; now and then it throws after that write,
// which must leave neither the effect nor the change recorded.
import { createClient, createInboxWorker, createReconciler } from '@verikit/core';
import { serveInstance } from './instance.mjs';

const [engine, framework, namespace, secret, engineUrl, baseUrl, apiKey, settingsJson] = process.argv.slice(2);
const settings = JSON.parse(settingsJson);

/** Every warning and error as one JSON line on stdout: the harness counts the "webhook was missed" ones by refId and version. */
const print = (level) => (fields, msg) => {
  const { err, ...rest } = fields;
  console.log(JSON.stringify({ level, msg, ...rest, ...(err === undefined ? {} : { err: String(err?.message ?? err) }) }));
};
const logger = { debug() {}, info() {}, warn: print('warn'), error: print('error') };

/** The engine's inbox and ledger, and how an effect row is written through its `ctx.sql`. */
async function postgres() {
  const [{ createPostgresInbox, createPostgresLedger }, { default: pg }] = await Promise.all([import('@verikit/postgres'), import('pg')]);
  const pool = new pg.Pool({ connectionString: engineUrl, max: 12, application_name: `verikit-ledger-chaos-${namespace}` });
  pool.on('error', () => {});
  const inbox = createPostgresInbox({ db: pool, schema: namespace, onError: () => {} });
  const ledger = createPostgresLedger({ db: pool, schema: namespace });
  await inbox.migrate();
  await ledger.migrate();
  return {
    inbox,
    ledger,
    writeEffect: (sql, e) =>
      sql.query(
        `INSERT INTO ${namespace}.ledger_effects (kind, ref_id, version, status, final, source, updated_at, pid) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [e.kind, e.refId, e.version, e.status, e.final, e.source, e.updatedAt, e.pid],
      ),
  };
}

async function redis() {
  const [{ createRedisInbox, createRedisLedger }, { Redis }] = await Promise.all([import('@verikit/redis'), import('ioredis')]);
  const client = new Redis(engineUrl, { connectionName: `verikit-ledger-chaos-${namespace}` });
  client.on('error', () => {});
  return {
    inbox: createRedisInbox({ redis: client, prefix: namespace, persistence: 'ignore', logger: false }),
    // The prefix holds the run's hash tag, so the effects list below shares the ledger's slot.
    ledger: createRedisLedger({ redis: client, prefix: `${namespace}:ledger:`, persistence: 'ignore', logger: false }),
    writeEffect: (sql, e) => sql.call('RPUSH', `${namespace}:effects`, JSON.stringify(e)),
  };
}

const { inbox, ledger, writeEffect } = engine === 'postgres' ? await postgres() : await redis();
const observing = {
  ledger,
  client: createClient({ baseUrl, apiKey }),
  readsPerMinute: settings.readsPerMinute,
  schedule: settings.schedule,
  lockMs: settings.lockMs,
  logger,
  onChange: async (ctx) => {
    await writeEffect(ctx.sql, {
      kind: ctx.kind,
      refId: ctx.refId,
      version: ctx.version,
      status: ctx.current,
      final: ctx.final,
      source: ctx.source,
      updatedAt: ctx.result.updatedAt,
      pid: process.pid,
    });
    if (Math.random() < settings.onChangeFailRate) {
      logger.warn({ kind: ctx.kind, refId: ctx.refId, version: ctx.version }, 'chaos: onChange threw after its write, on purpose');
      throw new Error('integrator failure after the effect was written');
    }
  },
};
createInboxWorker({ inbox, ...observing, ...settings.worker, onError: () => {} }).start();
createReconciler({ ...observing, pollIntervalMs: settings.reconcilerPollMs }).start();
await serveInstance(framework, { secret, inbox, logger: false });
