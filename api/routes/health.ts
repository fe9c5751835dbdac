import { Hono } from 'hono';
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { pendingMigrations } from '../../db/migrator.ts';

/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: database reachable, schema current). */
export function healthRoutes(db: Db) {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await sql`SELECT 1`.execute(db);
      const pending = await pendingMigrations(db);
      if (pending.length > 0) return c.json({ status: 'not ready', reason: `pending migrations: ${pending.join(', ')}` }, 503);
      return c.json({ status: 'ready' });
    } catch (error) {
      return c.json({ status: 'not ready', reason: `database unreachable: ${(error as Error).message}` }, 503);
    }
  });
  return app;
}
