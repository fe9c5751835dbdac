import { randomBytes } from 'node:crypto';
import { createApp, type App } from '../../api/app.ts';
import { createMemoryRateLimiter } from '../../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { DeviceSignals } from '../../engine/device-signals.ts';
import { bullmqQueues } from '../../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../../engine/queue/in-process-queue.ts';
import type { QueueBackend } from '../../engine/queue/job-queue.ts';
import { scheduleTravelStart, unscheduleTravelStart } from '../../engine/engine-jobs.ts';
import { EngineQueues } from '../../engine/engine-queues.ts';
import { startEngine, type EngineSettings, type RunningEngine } from '../../engine/start-engine.ts';
import { startIngest, type RunningIngest } from '../../ingest/start-ingest.ts';
import { freePort } from './fleet-process.ts';
import { deleteRedisKeys } from './redis-keys.ts';
import type { TestDatabase } from './test-database.ts';

export const ENGINE_TEST_SETTINGS: EngineSettings = {
  status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 },
  eta: { roadFactor: 1.3, defaultSpeedKmh: 40 },
  etaRefreshMs: 1_000,
  inactivitySweepMs: 1_000,
  geofencePollMs: 100,
  concurrency: 2,
  fixesPerDevice: 1000,
  lateWindowMs: 3_600_000,
  retention: { geofenceChangesMs: 86_400_000, lateFixesMs: 7 * 86_400_000 },
  pruneIntervalMs: 3_600_000,
};

/** A queue backend of the test's own: BullMQ with a unique prefix when REDIS_URL is set, in-process otherwise. */
export function testQueues(): { backend: QueueBackend; prefix: string } {
  const prefix = `fc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  if (!process.env.REDIS_URL) return { backend: inProcessQueues(), prefix };
  const bullmq = bullmqQueues(process.env.REDIS_URL, { prefix });
  // Closing also deletes the test's keys, so runs leave nothing in Redis.
  const backend: QueueBackend = {
    ...bullmq,
    async close() {
      await bullmq.close();
      await deleteRedisKeys(prefix);
    },
  };
  return { backend, prefix };
}

export interface EngineHarness {
  app: App;
  ingest: RunningIngest;
  engine: RunningEngine;
  queues: QueueBackend;
  teltonikaPort: number;
  /** The port of each protocol listening (teltonika, and those asked for). */
  ports: Record<string, number>;
  close(): Promise<void>;
}

/** The three roles wired as `fleet serve` wires them, in this process, on the test's database; Teltonika and `protocols` listen. */
export async function startEngineHarness(database: TestDatabase, settings: EngineSettings = ENGINE_TEST_SETTINGS, protocols: string[] = []): Promise<EngineHarness> {
  const { backend: queues } = testQueues();
  const engineQueues = new EngineQueues(queues, settings.queues ?? 1);
  const engineQueue = engineQueues.first;
  const engine = await startEngine(database, queues, silentLogger, settings);
  const signals = new DeviceSignals(engineQueues, () => undefined);
  const ingest = await startIngest(database, silentLogger, {
    host: '127.0.0.1', ports: Object.fromEntries(await Promise.all(['teltonika', ...protocols].map(async (p) => [p, await freePort()]))), osmandPort: 0,
    limits: { idleTimeoutMs: 60_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 2,
    onDevicesUpdated: (ids) => signals.add(ids),
  });
  const rateLimiter = createMemoryRateLimiter(100_000, 10_000);
  const app = createApp({
    db: database.db, log: silentLogger, rateLimiter,
    config: { bodyLimitBytes: 64 * 1024, deviceStatus: settings.status, onTimeToleranceMinutes: 5 },
    travelSchedule: {
      scheduled: (id, start) => scheduleTravelStart(engineQueue, id, start),
      cancelled: (id) => unscheduleTravelStart(engineQueue, id),
    },
  });
  return {
    app, ingest, engine, queues,
    teltonikaPort: ingest.listeners.find((l) => l.protocol === 'teltonika')!.port,
    ports: Object.fromEntries(ingest.listeners.map((l) => [l.protocol, l.port])),
    async close() {
      await ingest.close();
      await signals.close();
      await engine.close();
      await queues.close();
      await rateLimiter.close();
    },
  };
}
