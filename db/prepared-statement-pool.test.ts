import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../test/support/test-database.ts';
import { preparedStatementPool } from './prepared-statement-pool.ts';

// Named statements are used on real PostgreSQL only.
describe.skipIf(!process.env.DATABASE_URL)('preparedStatementPool', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: Kysely<any>;
  beforeAll(async () => {
    database = await openTestDatabase();
    pool = new pg.Pool({ connectionString: database.env.DATABASE_URL, max: 1 });
    // Dropping the database at the end terminates a session that may still be closing.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    db = new Kysely<any>({ dialect: new PostgresDialect({ pool: preparedStatementPool(pool, 3) }) });
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.destroy();
  });

  const preparedNames = async () =>
    (await sql<{ name: string }>`SELECT name FROM pg_prepared_statements ORDER BY name`.execute(db)).rows.map((r) => r.name);

  it('prepares each data query once per connection and answers with its own parameters', async () => {
    for (let i = 0; i < 5; i++) {
      const { rows } = await sql<{ v: number }>`SELECT ${i}::int AS v`.execute(db);
      expect(rows[0]!.v).toBe(i);
    }
    const names = await preparedNames();
    expect(names.filter((n) => n.startsWith('fc_'))).toHaveLength(2); // the probe and the listing itself
  });

  it('runs statements past the cap unnamed, still correctly', async () => {
    for (const shape of ['SELECT $1::int + 1 AS v', 'SELECT $1::int + 2 AS v', 'SELECT $1::int + 3 AS v']) {
      const { rows } = await sql<{ v: number }>`${sql.raw(shape.replace('$1', '10'))}`.execute(db);
      expect(rows[0]!.v).toBeGreaterThan(10);
    }
    expect((await preparedNames()).filter((n) => n.startsWith('fc_'))).toHaveLength(3);
  });

  it('hands Kysely the same connection each time, so its connection set-up runs once per connection', async () => {
    let setUps = 0;
    const once = new Kysely<any>({
      dialect: new PostgresDialect({ pool: preparedStatementPool(pool, 3), onCreateConnection: async () => void setUps++ }),
    });
    // SHOW is not a data statement, so this prepares nothing on the connection the other tests count.
    for (let i = 0; i < 4; i++) await once.transaction().execute((trx) => sql`SHOW jit`.execute(trx));
    expect(setUps).toBe(1);
  });

    it('leaves DDL unnamed', async () => {
    await sql`CREATE TEMP TABLE prepared_probe (n int)`.execute(db);
    expect((await preparedNames()).every((n) => n.startsWith('fc_'))).toBe(true);
    expect(await preparedNames()).toHaveLength(3);
  });
});
