import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectCrashLoopDeadLettered } from '../../../test-support/crash-loop/restart.js';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { createPostgresInbox, type PostgresInbox } from '../src/index.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);

describe.runIf(serverAvailable)('a poison event on the real PostgreSQL', () => {
  const schema = `verikit_crash_loop_${process.pid}_${Date.now().toString(36)}`;
  let pool: pg.Pool;
  let inbox: PostgresInbox;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    inbox = createPostgresInbox({ db: pool, schema });
    await inbox.migrate();
  });
  afterAll(async () => {
    await inbox?.close();
    await pool?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool?.end();
  });

  it('an event that SIGKILLs its worker runs retry.maxAttempts times across restarts, then is dead-lettered without running', async () => {
    await inbox.accept({ id: 'msg_poison', timestamp: 1, body: '{"type":"kyb.case.status_changed","data":{"refId":"poison"}}' });
    await expectCrashLoopDeadLettered({
      engine: 'postgres',
      url: POSTGRES_URL,
      namespace: schema,
      id: 'msg_poison',
      deadLetters: () => inbox.deadLetters(),
    });
  }, 120_000);
});
