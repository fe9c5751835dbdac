import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import { createApp } from '../../api/app.ts';
import type { RateLimiter } from '../../api/rate-limit/rate-limiter.ts';
import type { DatabaseHandle } from '../../db/database.ts';
import type { JobQueue } from '../../engine/queue/job-queue.ts';
import { scheduleTravelStart, unscheduleTravelStart } from '../../engine/start-engine.ts';
import type { Logger } from '../../runtime/logger.ts';
import { listenAndStayUp } from '../../runtime/listening-server.ts';
import type { Config } from '../config.ts';
import { localBaseUrl } from '../commands/demo.ts';

export interface RunningApi {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The API role: the Hono app on HTTP, telling the engine queue when travels must start. */
export async function startApiRole(
  config: Config,
  log: Logger,
  deps: { database: DatabaseHandle; rateLimiter: RateLimiter; engineQueue: JobQueue },
): Promise<RunningApi> {
  const app = createApp({
    db: deps.database.db,
    log,
    rateLimiter: deps.rateLimiter,
    config,
    travelSchedule: {
      scheduled: (travelId, startTime) => scheduleTravelStart(deps.engineQueue, travelId, startTime),
      cancelled: (travelId) => unscheduleTravelStart(deps.engineQueue, travelId),
    },
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  // Slow or stalled clients are cut off instead of holding sockets open.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  const port = await listenAndStayUp(server, {
    host: config.host,
    port: config.port,
    name: 'HTTP API',
    portVariable: 'PORT',
    maxConnections: config.httpMaxConnections,
    log,
  });
  return {
    url: localBaseUrl({ ...config, port }),
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}
