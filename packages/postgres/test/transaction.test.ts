import { EventEmitter } from 'node:events';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, requireService } from '../../../test-support/services.js';
import { checkout, type PooledClient, type PoolLike } from '../src/pool.js';
import { inLazyTransaction } from '../src/transaction.js';

const serverAvailable = await requireService('PostgreSQL', POSTGRES_URL);

/** A pool whose client records the statements it runs, and can fail the way pg reports a killed connection. */
function recordingPool(options: { errorOnHandover?: boolean } = {}) {
  const statements: string[] = [];
  const released: Array<Error | boolean | undefined> = [];
  const client = Object.assign(new EventEmitter(), {
    query: async (text: string) => {
      statements.push(text);
      return { rows: [{ ok: 1 }] };
    },
    release: (error?: Error | boolean) => released.push(error),
  }) as unknown as PooledClient & EventEmitter;
  const pool: PoolLike = {
    totalCount: 1,
    query: async (text: string) => {
      statements.push(`pool: ${text}`);
      return { rows: [{ ok: 1 }] };
    },
    connect(callback) {
      callback(undefined, client);
      // pg parses one network read at once: a kill can be emitted right after the handover, before any await resumes.
      if (options.errorOnHandover) client.emit('error', new Error('terminating connection due to administrator command'));
    },
  };
  return { pool, statements, released };
}

describe('checkout', () => {
  it('listens for errors from the moment pg hands the client over (no unhandled error event)', async () => {
    const { pool } = recordingPool({ errorOnHandover: true });
    const heard: Error[] = [];
    const client = await checkout(pool, (error) => heard.push(error));
    expect(heard.map((e) => e.message)).toEqual(['terminating connection due to administrator command']);
    expect(typeof client.query).toBe('function');
  });
});

describe('inLazyTransaction', () => {
  it('work that never queries opens no transaction: the last statement runs alone', async () => {
    const { pool, statements, released } = recordingPool();
    const result = await inLazyTransaction({ db: pool, timeoutMs: 5_000 }, async () => {}, {
      what: 'the last statement',
      run: async (db) => (await db.query('UPDATE done')).rows.length,
    });
    expect(result).toBe(1);
    expect(statements).toEqual(['UPDATE done']);
    expect(released).toEqual([undefined]);
  });

  it('work that queries runs between BEGIN and COMMIT, with the last statement in the same transaction', async () => {
    const { pool, statements, released } = recordingPool();
    await inLazyTransaction(
      { db: pool, timeoutMs: 5_000 },
      async (tx) => {
        await Promise.all([tx.query('INSERT a'), tx.query('INSERT b')]);
      },
      { what: 'the last statement', run: (tx) => tx.query('UPDATE done') },
    );
    expect(statements).toEqual(['BEGIN', 'INSERT a', 'INSERT b', 'UPDATE done', 'COMMIT']);
    expect(released).toEqual([undefined]);
  });

  it('a throw from the work or from the last statement rolls back and releases the client once', async () => {
    for (const failing of ['work', 'last'] as const) {
      const { pool, statements, released } = recordingPool();
      const outcome = inLazyTransaction(
        { db: pool, timeoutMs: 5_000 },
        async (tx) => {
          await tx.query('INSERT a');
          if (failing === 'work') throw new Error('work failed');
        },
        {
          what: 'the last statement',
          run: async () => {
            throw new Error('last failed');
          },
        },
      );
      await expect(outcome).rejects.toThrow(`${failing} failed`);
      expect(statements).toEqual(['BEGIN', 'INSERT a', 'ROLLBACK']);
      expect(released).toEqual([undefined]);
    }
  });
});

describe.skipIf(!serverAvailable)('inLazyTransaction on the real PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  afterAll(() => pool.end());

  it('writes through the transaction are invisible to others until the last statement has run and it commits', async () => {
    const table = `verikit_lazy_${process.pid}_${Date.now().toString(36)}`;
    await pool.query(`CREATE TABLE ${table} (id text)`);
    try {
      let seenInside = -1;
      await inLazyTransaction(
        { db: pool, timeoutMs: 5_000 },
        async (tx) => {
          await tx.query(`INSERT INTO ${table} VALUES ('a')`);
          seenInside = (await pool.query(`SELECT * FROM ${table}`)).rows.length;
        },
        { what: 'the last statement', run: (tx) => tx.query(`INSERT INTO ${table} VALUES ('done')`) },
      );
      expect(seenInside).toBe(0);
      expect((await pool.query(`SELECT id FROM ${table} ORDER BY id`)).rows).toEqual([{ id: 'a' }, { id: 'done' }]);
      await expect(
        inLazyTransaction({ db: pool, timeoutMs: 5_000 }, (tx) => tx.query(`INSERT INTO ${table} VALUES ('b')`).then(() => undefined), {
          what: 'the last statement',
          run: async () => {
            throw new Error('lease gone');
          },
        }),
      ).rejects.toThrow('lease gone');
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n).toBe(2);
    } finally {
      await pool.query(`DROP TABLE ${table}`);
    }
  });
});
