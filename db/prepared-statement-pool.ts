import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

const DATA_STATEMENT = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Runs each data query as a named prepared statement, so PostgreSQL plans it once per connection
 * instead of on every call: 3–4× less time per query for the API's small indexed lookups, measured
 * here (auth lookup 0.6 ms → 0.18 ms). The name is derived from the SQL text, so one text is one
 * statement. A connection keeps at most `maxPerConnection`; past that, queries run unnamed. Only for
 * real PostgreSQL: the embedded PGlite is one session shared by every connection, where two
 * connections preparing the same name would collide.
 */
export function preparedStatementPool(pool: pg.Pool, maxPerConnection = 500): PostgresPool {
  const prepared = new WeakMap<pg.PoolClient, Set<string>>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let names = prepared.get(client);
      if (!names) prepared.set(client, (names = new Set()));
      const known = names;
      return {
        query(sqlOrCursor: unknown, parameters?: readonly unknown[]) {
          if (typeof sqlOrCursor !== 'string' || !DATA_STATEMENT.test(sqlOrCursor)) {
            return client.query(sqlOrCursor as string, parameters as unknown[]);
          }
          const name = `fc_${createHash('sha1').update(sqlOrCursor).digest('hex').slice(0, 20)}`;
          if (!known.has(name)) {
            if (known.size >= maxPerConnection) return client.query(sqlOrCursor, parameters as unknown[]);
            known.add(name);
          }
          return client.query({ name, text: sqlOrCursor, values: parameters as unknown[] });
        },
        release() {
          client.release();
        },
      } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}
