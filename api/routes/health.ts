import { Hono } from 'hono';
import type { Db } from '../../db/database.ts';
import { databaseReadiness } from '../../db/readiness.ts';

/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: database reachable, schema current). */
export function healthRoutes(db: Db) {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = await databaseReadiness(db);
    if (!readiness.ready) return c.json({ status: 'not ready', reason: readiness.reason }, 503);
    return c.json({ status: 'ready' });
  });
  return app;
}
