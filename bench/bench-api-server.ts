import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import type { Db } from '../db/database.ts';
import { silentLogger } from '../runtime/logger.ts';

/**
 * The API over real HTTP on a free loopback port, with the default settings and a rate limit no
 * bench reaches. `base` ends in `/api/v1`.
 */
export async function serveBenchApi(db: Db): Promise<{ base: string; close(): void }> {
  const app = createApp({
    db,
    log: silentLogger,
    rateLimiter: createMemoryRateLimiter(1e9, 10_000),
    config: { bodyLimitBytes: 262_144, deviceStatus: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, onTimeToleranceMinutes: 5 },
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`, close: () => server.close() };
}
