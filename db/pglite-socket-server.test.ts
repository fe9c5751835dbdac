import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedSocketDir, EMBEDDED_SOCKET_PORT } from './embedded-postgres.ts';
import { openTestDatabase, type TestDatabase } from '../test/support/test-database.ts';

// The socket server exists only on the embedded default.
describe.skipIf(Boolean(process.env.DATABASE_URL))('PgliteSocketServer', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await openTestDatabase();
    pool = new pg.Pool({ host: embeddedSocketDir(database.env.DATA_DIR!), port: EMBEDDED_SOCKET_PORT, user: 'postgres', database: 'postgres', max: 8 });
    await pool.query('CREATE TABLE socket_probe (n integer PRIMARY KEY)');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.destroy();
  });

  it('keeps concurrent parameterised queries from different connections apart', async () => {
    const shapes = ['SELECT $1::int AS v', 'SELECT $1::int AS v, 1 AS z', 'SELECT ($1::int * 1)::int AS v, $1::text AS s'];
    const values = await Promise.all(Array.from({ length: 600 }, (_, i) => pool.query(shapes[i % 3]!, [i]).then((r) => r.rows[0].v)));
    expect(values).toEqual(Array.from({ length: 600 }, (_, i) => i));
  });

  it('returns large results intact (several MB, read by concurrent clients)', async () => {
    const query = "SELECT n, repeat(md5(n::text), 8) AS pad FROM generate_series(1, 20000) n";
    const results = await Promise.all([pool.query(query), pool.query(query)]);
    for (const { rows } of results) {
      expect(rows).toHaveLength(20_000);
      expect(rows[19_999]).toMatchObject({ n: 20_000 });
      expect(rows.every((r: { n: number; pad: string }, i: number) => r.n === i + 1 && r.pad.length === 256)).toBe(true);
    }
  });

  it('runs concurrent transactions one at a time, each seeing only its own work', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query('INSERT INTO socket_probe VALUES ($1)', [i % 10]);
          const { rows } = await client.query('SELECT count(*)::int AS n FROM socket_probe WHERE n = $1', [i % 10]);
          await client.query('COMMIT');
          return rows[0].n as number;
        } catch {
          await client.query('ROLLBACK');
          return 'conflict';
        } finally {
          client.release();
        }
      }),
    );
    expect(outcomes.filter((o) => o === 1)).toHaveLength(10);
    expect(outcomes.filter((o) => o === 'conflict')).toHaveLength(30);
    expect((await pool.query('SELECT count(*)::int AS n FROM socket_probe')).rows[0].n).toBe(10);
  });

  it('rolls back the transaction of a connection that goes away, and lets the others go on', async () => {
    const client = new pg.Client({ host: embeddedSocketDir(database.env.DATA_DIR!), port: EMBEDDED_SOCKET_PORT, user: 'postgres', database: 'postgres' });
    await client.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO socket_probe VALUES (1000)');
    const waiting = pool.query('SELECT count(*)::int AS n FROM socket_probe WHERE n = 1000');
    await client.end();
    expect((await waiting).rows[0].n).toBe(0);
  });
});
