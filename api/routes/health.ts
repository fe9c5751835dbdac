import { Hono } from 'hono';
import type { Db } from '../../db/database.ts';
import { databaseReadiness } from '../../db/readiness.ts';
import type { Logger } from '../../runtime/logger.ts';

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: database reachable, schema
 * current). Both are public, so a failure is told in a few words (the database's own error, which
 * may name hosts, users or paths, goes to the log only).
 */
export function healthRoutes(db: Db, log: Logger) {
  const app = new Hono<{ Variables: { log?: Logger } }>();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const readiness = await databaseReadiness(db);
    if (!readiness.ready) {
      if (readiness.detail) (c.get('log') ?? log).warn('not ready', { reason: readiness.reason, error: readiness.detail });
      return c.json({ status: 'not ready', reason: readiness.reason }, 503);
    }
    return c.json({ status: 'ready' });
  });
  return app;
}
