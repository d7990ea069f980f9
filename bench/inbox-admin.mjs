// Operator work on the PostgreSQL inbox (VERIKIT_TEST_DATABASE_URL, else 127.0.0.1:5432/test): how long
// erase and reseal take on an inbox of `rows` events of which `kept` still have a body (the rest done,
// their body removed by payload retention, as most of a 7-day table is), and what sealing a body costs.
import { randomBytes } from 'node:crypto';
import { createPayloadSealer } from '@verikit/core';
import { createPostgresInbox } from '@verikit/postgres';
import pg from 'pg';
import { fmt, report, reportMedian } from './lib.mjs';

const URL = process.env.VERIKIT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const key = (id) => ({ id, key: randomBytes(32) });

/** Fills `schema`'s inbox: `rows` done events, the last `kept` of them with a ~1.5 KB body about one of 1,000 people. */
async function fill(pool, schema, rows, kept) {
  await pool.query(
    `INSERT INTO ${schema}.verikit_inbox (id, payload, svix_timestamp, state, next_run_at, finished_at, attempts)
     SELECT 'msg_' || lpad(i::text, 7, '0'),
       CASE WHEN i > $1 - $2 THEN json_build_object('type', 'kyc.session.status_changed', 'data', json_build_object(
         'refId', 'user-' || (i % 1000), 'status', 'IN_REVIEW',
         'person', json_build_object('name', 'Zoë Canary-Ångström ' || i, 'address', i || ' Rue des Mésanges, 75011 Paris'),
         'pad', repeat('x', 1300)))::text END,
       1, 'done', NULL, now(), 1
     FROM generate_series(1, $1) i`,
    [rows, kept],
  );
  await pool.query(`ANALYZE ${schema}.verikit_inbox`);
}

async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

/** Seals (and opens) per second of a 2 KiB body, on this process's AES-256-GCM. */
async function sealRate(durationMs = 1_000) {
  const sealer = createPayloadSealer({ keys: [key('k1')] });
  const body = JSON.stringify({ type: 'kyc.session.status_changed', pad: 'x'.repeat(2_000) }).slice(0, 2_048);
  const sealed = await sealer.seal(body, 'msg_1');
  const rate = async (op) => {
    let n = 0;
    const stopAt = performance.now() + durationMs;
    while (performance.now() < stopAt) for (let i = 0; i < 100; i++, n++) await op();
    return n / (durationMs / 1000);
  };
  return { seal: await rate(() => sealer.seal(body, 'msg_1')), open: await rate(() => sealer.open(sealed, 'msg_1')) };
}

/** Runs the operator benchmarks and prints their figures. */
export async function benchInboxAdmin({ rows = 100_000, kept = 10_000, rounds = 3 } = {}) {
  const pool = new pg.Pool({ connectionString: URL, max: 4 });
  const figures = { erasePlain: [], sealPlain: [], rotate: [], eraseSealed: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      const schema = `verikit_bench_admin_${Date.now().toString(36)}`;
      const [k1, k2] = [key('k1'), key('k2')];
      const inbox = (keys) => createPostgresInbox({ db: pool, schema, pruneIntervalMs: 0, ...(keys ? { encryption: { keys } } : {}) });
      try {
        await inbox().migrate();
        await fill(pool, schema, rows, kept);
        const erasePlain = await timed(() => inbox().erase({ kind: 'kyc', refId: 'user-7' }));
        const sealPlain = await timed(() => inbox([k1]).reseal());
        const rotate = await timed(() => inbox([k2, k1]).reseal());
        const eraseSealed = await timed(() => inbox([k2]).erase({ kind: 'kyc', refId: 'user-8' }));
        if (erasePlain.result.erased !== kept / 1000 || eraseSealed.result.erased !== kept / 1000)
          throw new Error(`erased ${erasePlain.result.erased} and ${eraseSealed.result.erased}, not ${kept / 1000} each`);
        if (sealPlain.result.resealed !== kept - kept / 1000 || rotate.result.resealed !== sealPlain.result.resealed)
          throw new Error(`resealed ${sealPlain.result.resealed} then ${rotate.result.resealed}`);
        figures.erasePlain.push(erasePlain.ms);
        figures.sealPlain.push(sealPlain.ms);
        figures.rotate.push(rotate.ms);
        figures.eraseSealed.push(eraseSealed.ms);
      } finally {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      }
    }
  } finally {
    await pool.end();
  }
  const ms = (key, label, list) => reportMedian({ name: `admin/postgres/${key}`, label: label.padEnd(36), list, unit: 'ms' });
  console.log(
    `inbox admin (PostgreSQL at ${new globalThis.URL(URL).host}): ${fmt(rows)} events, ${fmt(kept)} with a ~1.5 KB body, median of ${rounds} rounds:`,
  );
  ms('erase-plain', 'erase one refId, plain bodies', figures.erasePlain);
  ms('reseal-plain', 'reseal plain -> k1', figures.sealPlain);
  ms('reseal-rotate', 'reseal k1 -> k2 (key rotation)', figures.rotate);
  ms('erase-sealed', 'erase one refId, sealed bodies', figures.eraseSealed);
  const rate = await sealRate();
  report({ name: 'admin/aes-gcm-2KiB/seal', label: 'AES-256-GCM seal, 2 KiB body, one core'.padEnd(36), value: rate.seal, unit: 'ops/s' });
  report({ name: 'admin/aes-gcm-2KiB/open', label: 'AES-256-GCM open, 2 KiB body, one core'.padEnd(36), value: rate.open, unit: 'ops/s' });
  return figures;
}
