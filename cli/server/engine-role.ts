import type { DatabaseHandle } from '../../db/database.ts';
import type { QueueBackend } from '../../engine/queue/job-queue.ts';
import { startEngine } from '../../engine/start-engine.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Config } from '../config.ts';

/** The engine role: the engine queue's worker and its schedules. */
export async function startEngineRole(config: Config, log: Logger, deps: { database: DatabaseHandle; queues: QueueBackend }): Promise<{ stop(): Promise<void> }> {
  const engine = await startEngine(deps.database, deps.queues, log, {
    status: config.deviceStatus,
    eta: { roadFactor: config.engine.roadFactor, defaultSpeedKmh: config.engine.defaultSpeedKmh },
    etaRefreshMs: config.engine.etaRefreshMs,
    inactivitySweepMs: config.engine.inactivitySweepMs,
    geofencePollMs: config.engine.geofencePollMs,
    concurrency: config.engine.concurrency,
    fixesPerDevice: 1000,
    lateWindowMs: config.engine.lateWindowMs,
    retention: {
      geofenceChangesMs: config.engine.geofenceChangesRetentionMs,
      lateFixesMs: config.engine.lateFixesRetentionMs,
    },
    pruneIntervalMs: config.engine.pruneIntervalMs,
  });
  return { stop: () => engine.close() };
}
