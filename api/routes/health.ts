import { Hono } from 'hono';
import type { Db } from '../../db/database.ts';
import { databaseReadiness, type Readiness } from '../../db/readiness.ts';
import type { QueueHealth } from '../../engine/queue/queue-health.ts';
import type { Logger } from '../../runtime/logger.ts';

/** The queues' health as a readiness: `queue unreachable`, `queue read-only`… */
async function queueReadiness(queueHealth: () => Promise<QueueHealth>): Promise<Readiness> {
  const health = await queueHealth();
  return health.up ? { ready: true } : { ready: false, reason: `queue ${health.reason}`, detail: health.detail };
}

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: database reachable, schema
 * current, and the queues this process adds jobs to taking them). Both are public, so a failure is
 * told in a few words (the database's or Redis's own error, which may name hosts, users or paths,
 * goes to the log only).
 */
export function healthRoutes(db: Db, log: Logger, queueHealth?: () => Promise<QueueHealth>) {
  const app = new Hono<{ Variables: { log?: Logger } }>();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks = await Promise.all([databaseReadiness(db), ...(queueHealth ? [queueReadiness(queueHealth)] : [])]);
    const failed = checks.filter((check): check is Extract<Readiness, { ready: false }> => !check.ready);
    if (failed.length > 0) {
      const reason = failed.map((check) => check.reason).join('; ');
      const details = failed.flatMap((check) => (check.detail ? [check.detail] : []));
      if (details.length > 0) (c.get('log') ?? log).warn('not ready', { reason, error: details.join('; ') });
      return c.json({ status: 'not ready', reason }, 503);
    }
    return c.json({ status: 'ready' });
  });
  return app;
}
