// One instance of the multi-instance chaos harness over the real PostgreSQL, in inline mode (store)
// or inbox mode (inbox + worker, the effect written through ctx.sql): see instance.mjs.
import { createPostgresInbox, createPostgresStore } from '@verikit/postgres';
import pg from 'pg';
import { inboxWebhook, inlineWebhook, serveInstance } from './instance.mjs';

const [mode, framework, schema, secret, url, applicationName] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: 12, application_name: applicationName });
// Connections killed by the harness (pg_terminate_backend) surface here when idle: expected, not fatal.
pool.on('error', () => {});
const countRun = (ctx) => pool.query(`INSERT INTO ${schema}.runs (id) VALUES ($1)`, [ctx.id]);

let webhook;
if (mode === 'inline') {
  const store = createPostgresStore({ db: pool, schema, onError: () => {} });
  await store.migrate();
  webhook = inlineWebhook({
    secret,
    store,
    countRun,
    writeKeyedEffect: (ctx) => pool.query(`INSERT INTO ${schema}.effects (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, [ctx.id]),
  });
} else {
  const inbox = createPostgresInbox({ db: pool, schema, onError: () => {} });
  await inbox.migrate();
  // No unique key on effects: only the transaction that also marks the event done keeps this once.
  webhook = inboxWebhook({
    secret,
    inbox,
    countRun,
    writeEffect: (ctx) => ctx.sql.query(`INSERT INTO ${schema}.effects (id) VALUES ($1)`, [ctx.id]),
  });
}
await serveInstance(framework, webhook);
