import type { DatabaseHandle } from '../db/database.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { DeviceSignals } from '../engine/device-signals.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { EngineQueues } from '../engine/engine-queues.ts';
import { startEngine } from '../engine/start-engine.ts';
import { startIngest } from '../ingest/start-ingest.ts';
import { silentLogger } from '../runtime/logger.ts';
import { freePort } from './tracker-load.ts';

export interface BenchPipeline {
  /** The Teltonika listener's port, for the tracker load. */
  trackerPort: number;
  /** Stops taking fixes: in-flight batches commit and their signals reach the engine queue. */
  stopIngest(): Promise<void>;
  stopEngine(): Promise<void>;
}

/**
 * Ingest (Teltonika on a free port) and the engine as `fleet serve` wires them, in this process with
 * the default settings and no logs: what the benches that drive trackers through the whole pipeline run.
 */
export async function startBenchPipeline(
  handle: DatabaseHandle,
  queues: QueueBackend,
  /** Told each committed batch's fixes, as `fleet serve` tells the vehicle.position feed. */
  onFixesCommitted?: (fixes: StoredFix[]) => void,
): Promise<BenchPipeline> {
  const engine = await startEngine(handle, queues, silentLogger, {
    status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, eta: { roadFactor: 1.3, defaultSpeedKmh: 40 },
    etaRefreshMs: 30_000, inactivitySweepMs: 60_000, geofencePollMs: 500, concurrency: 2, fixesPerDevice: 1000, lateWindowMs: 3_600_000,
    retention: { geofenceChangesMs: 86_400_000, lateFixesMs: 7 * 86_400_000 }, pruneIntervalMs: 3_600_000,
  });
  const signals = new DeviceSignals(new EngineQueues(queues), () => undefined);
  const ingest = await startIngest(handle, silentLogger, {
    host: '127.0.0.1', ports: { teltonika: await freePort() }, osmandPort: 0,
    limits: { idleTimeoutMs: 120_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 5,
    onDevicesUpdated: (ids) => signals.add(ids),
    onFixesCommitted,
  });
  return {
    trackerPort: ingest.listeners[0]!.port,
    async stopIngest() {
      await ingest.close();
      await signals.close();
    },
    stopEngine: () => engine.close(),
  };
}
