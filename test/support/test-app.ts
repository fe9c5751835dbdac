import type { Redis } from 'ioredis';
import { createApp, type App } from '../../api/app.ts';
import { EventFeed } from '../../api/events/event-feed.ts';
import type { EventStreamSettings } from '../../api/events/event-stream.ts';
import type { CommandBus } from '../../ingest/commands/command-bus.ts';
import { createMemoryRateLimiter } from '../../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../../api/rate-limit/redis-rate-limiter.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { connectRedis } from '../../cli/redis-connection.ts';
import { fixtures } from '../../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './test-database.ts';

export interface TestApp {
  app: App;
  database: TestDatabase;
  fixtures: ReturnType<typeof fixtures>;
  /** Calls the real Hono app; `key` goes in `Authorization: Bearer`. */
  call(path: string, options?: { key?: string; method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  /** Calls and reads the JSON envelope. */
  json(path: string, options?: Parameters<TestApp['call']>[1]): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export const TEST_CONFIG = {
  bodyLimitBytes: 64 * 1024,
  deviceStatus: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 },
  onTimeToleranceMinutes: 5,
  webhookAllowPrivate: true,
};

/**
 * The whole HTTP app on this file's own database. Rate limits are kept in Redis when REDIS_URL is set,
 * as in production; `rateLimitMax` defaults high so only the rate-limit tests meet it.
 */
export async function startTestApp(
  options: {
    rateLimitMax?: number;
    overviewRateLimitMax?: number;
    /** 401s per client address a minute (or `authFailureWindowMs`) before 429 (default: more than any test makes). */
    authFailureLimit?: number;
    authFailureWindowMs?: number;
    eventStream?: Partial<EventStreamSettings>;
    commandBus?: CommandBus;
    oauthTokenTtlS?: number;
  } = {},
): Promise<TestApp> {
  const database = await openTestDatabase();
  const max = options.rateLimitMax ?? 100_000;
  const overviewMax = options.overviewRateLimitMax ?? 100_000;
  const redis: Redis | undefined = process.env.REDIS_URL ? await connectRedis(process.env.REDIS_URL) : undefined;
  const rateLimiter = redis ? createRedisRateLimiter(redis, max, 10_000) : createMemoryRateLimiter(max, 10_000);
  const overviewRateLimiter = redis
    ? createRedisRateLimiter(redis, overviewMax, 60_000, 'fleetcore:ratelimit:overview:')
    : createMemoryRateLimiter(overviewMax, 60_000);
  const authFailureLimiter = redis
    ? createRedisRateLimiter(redis, options.authFailureLimit ?? 100_000, options.authFailureWindowMs ?? 60_000, `fleetcore-test-${process.pid}-${Date.now()}:auth-failures:`)
    : createMemoryRateLimiter(options.authFailureLimit ?? 100_000, options.authFailureWindowMs ?? 60_000);
  const eventFeed = await EventFeed.open(database.db, silentLogger, database.pool, { pollMs: 100 });
  const app = createApp({
    db: database.db, log: silentLogger, rateLimiter, overviewRateLimiter, eventFeed,
    config: { ...TEST_CONFIG, eventStream: options.eventStream },
    commandBus: options.commandBus,
    authFailureLimiter,
    oauth: { tokenTtlS: options.oauthTokenTtlS ?? 3600 },
  });

  const call: TestApp['call'] = (path, { key, method = 'GET', body, headers = {} } = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (key) (init.headers as Record<string, string>).Authorization = `Bearer ${key}`;
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
    }
    return Promise.resolve(app.request(path, init));
  };
  return {
    app,
    database,
    fixtures: fixtures(database.db),
    call,
    async json(path, opts) {
      const res = await call(path, opts);
      return { status: res.status, body: await res.json(), headers: res.headers };
    },
    async close() {
      await eventFeed.close();
      await rateLimiter.close();
      await overviewRateLimiter.close();
      await authFailureLimiter.close();
      redis?.disconnect();
      await database.destroy();
    },
  };
}
