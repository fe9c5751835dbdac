import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.ts';
import { bullmqQueues } from '../../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../../engine/queue/in-process-queue.ts';
import type { QueueBackend } from '../../engine/queue/job-queue.ts';
import { createLogger } from '../../runtime/logger.ts';
import { freePort } from '../../test/support/fleet-process.ts';
import { healthRoutes } from './health.ts';

// A database that is not there and a Redis that is not there (a port nobody listens on): /readyz
// says both, in words that name neither.
describe('GET /readyz with the queues', () => {
  let pool: pg.Pool;
  let downDb: Kysely<Database>;
  let port: number;
  let redisGone: QueueBackend;

  beforeAll(async () => {
    pool = new pg.Pool({ host: '/nonexistent/fleetcore-socket', max: 1, connectionTimeoutMillis: 1000 });
    pool.on('error', () => undefined);
    downDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    port = await freePort();
    redisGone = bullmqQueues(`redis://:s3cret@127.0.0.1:${port}`, { prefix: 'fc-health-test', healthTimeoutMs: 500 });
  });

  afterAll(async () => {
    await redisGone?.close();
    await pool?.end();
  });

  it('joins the reasons of every check that fails, and logs what each store said', async () => {
    const lines: string[] = [];
    const app = healthRoutes(downDb, createLogger('warn', (line) => void lines.push(line)), () => redisGone.health());
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ status: 'not ready', reason: 'database unreachable; queue unreachable' });
    expect(body).not.toMatch(new RegExp(`nonexistent|s3cret|127\\.0\\.0\\.1|${port}`));
    expect(lines.join('\n')).toMatch(/"msg":"not ready"/);
    expect(lines.join('\n')).toMatch(/nonexistent/);
  });

  it('counts the in-process queue as always up', async () => {
    const queues = inProcessQueues();
    try {
      const res = await healthRoutes(downDb, createLogger('silent'), () => queues.health()).request('/readyz');
      expect(await res.json()).toEqual({ status: 'not ready', reason: 'database unreachable' });
    } finally {
      await queues.close();
    }
  });
});
