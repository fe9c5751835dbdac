import type { TripSettings } from '../domain/trips/device-trips.ts';
import type { Logger } from '../runtime/logger.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { devicesBehind } from '../db/engine-states.ts';
import { scheduledTravels } from '../db/travel-progress.ts';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import { EngineLag } from './engine-metrics.ts';
import { GeofenceCatalog } from './geofence-catalog.ts';
import { jobRequestId, observedJob } from './observed-job.ts';
import { LateFixLog, type DeviceLateFixes } from './late-fix-log.ts';
import type { Job, JobQueue, QueueBackend } from './queue/job-queue.ts';
import type { EtaSettings } from '../domain/travels/travel-eta.ts';
import { evaluateDevices } from './workers/evaluate-devices.ts';
import { refreshEtas } from './workers/refresh-etas.ts';
import { startTravels } from './workers/start-travels.ts';
import { pruneEngineHistory, type Retention } from './workers/prune-history.ts';
import { maintainPositionPartitions, type PositionHistorySettings } from './workers/maintain-position-partitions.ts';
import { sweepInactive } from './workers/sweep-inactive.ts';
import { expireDueCommands } from './workers/expire-commands.ts';

export const ENGINE_QUEUE = 'fleetcore-engine';

export interface EngineSettings {
  status: DeviceStatusThresholds;
  eta: EtaSettings;
  etaRefreshMs: number;
  inactivitySweepMs: number;
  geofencePollMs: number;
  /** Engine jobs run at once in this process. */
  concurrency: number;
  fixesPerDevice: number;
  /** Late fixes at most this far behind a device's cursor are evaluated; older ones are only counted. */
  lateWindowMs: number;
  /** How long what the engine has finished with is kept, and how often it is pruned. */
  retention: Retention;
  pruneIntervalMs: number;
  /** The position history's partitions, kept at start and with each prune; absent, left alone. */
  positionHistory?: PositionHistorySettings;
  /** How often commands past their time to live are marked expired (default 5 s). */
  commandExpiryMs?: number;
  /** A speeding stretch ends below the speed limit minus this (OVERSPEED_HYSTERESIS_KMH; default 5). */
  overspeedHysteresisKmh?: number;
  /** Trip segmentation (TRIP_* settings); the moving speed is `status.movingSpeedKmh`. */
  trips?: Partial<TripSettings>;
  /** A waypoint estimated later than expected by more than this is delayed (ON_TIME_TOLERANCE_MINUTES; default 5). */
  onTimeToleranceMinutes?: number;
}

export interface RunningEngine {
  catalog: GeofenceCatalog;
  close(): Promise<void>;
}

/** Schedules a travel's start at its start time (at once when that has passed); adding it twice is a no-op. */
export async function scheduleTravelStart(queue: JobQueue, travelId: number, startTime: Date, requestId?: string): Promise<void> {
  await queue.add('travel-start', { travelId, ...(requestId ? { requestId } : {}) }, { jobId: `travel-start-${travelId}`, delay: Math.max(0, startTime.getTime() - Date.now()) });
}

export async function unscheduleTravelStart(queue: JobQueue, travelId: number): Promise<void> {
  await queue.remove(`travel-start-${travelId}`);
}

/**
 * The engine role: the worker for the engine queue and the schedules it relies on. Each job is a
 * small processor over the database; none keeps state between jobs except the geofence catalog, which
 * follows the database. Scheduled work is rebuilt from the database at start, so the in-process queue
 * loses nothing a restart can't recover, and BullMQ's copies are deduplicated by job id.
 */
export async function startEngine(database: DatabaseHandle, backend: QueueBackend, log: Logger, settings: EngineSettings): Promise<RunningEngine> {
  const { db } = database;
  // Half the log's retention: a catalog that stalled that long may have missed pruned changes.
  const catalog = await GeofenceCatalog.open(db, log, database.pool, {
    pollMs: settings.geofencePollMs, reloadAfterMs: settings.retention.geofenceChangesMs / 2,
  });
  const queue = backend.queue(ENGINE_QUEUE);
  const etaSettings = { ...settings.eta, movingSpeedKmh: settings.status.movingSpeedKmh, onTimeToleranceMinutes: settings.onTimeToleranceMinutes ?? 5 };
  const lateFixLog = new LateFixLog(log, settings.lateWindowMs);

  async function keepPositionHistory(): Promise<void> {
    if (!settings.positionHistory) return;
    const kept = await maintainPositionPartitions(db, settings.positionHistory);
    if (kept.created.length + kept.dropped.length + kept.movedFromDefault + kept.prunedFromDefault > 0) log.info('position partitions maintained', { ...kept });
  }

  async function run(job: Job, log: Logger): Promise<void> {
    const data = job.data as Record<string, unknown>;
    switch (job.name) {
      case 'devices': {
        const deviceIds = (data.deviceIds as number[]) ?? [];
        const late: DeviceLateFixes[] = [];
        for (let i = 0; i < deviceIds.length; i += 500) {
          const outcome = await evaluateDevices(db, catalog, deviceIds.slice(i, i + 500), {
            status: settings.status, fixesPerDevice: settings.fixesPerDevice, lateWindowMs: settings.lateWindowMs,
            overspeedHysteresisKmh: settings.overspeedHysteresisKmh ?? 5,
            trips: settings.trips,
          });
          late.push(...outcome.lateByDevice);
          if (outcome.unfinished.length > 0) await queue.add('devices', { deviceIds: outcome.unfinished });
          if (outcome.progressedTravels.length > 0) await refreshEtas(db, etaSettings, outcome.progressedTravels);
        }
        lateFixLog.job(late);
        return;
      }
      case 'travel-start': {
        const started = await startTravels(db, { travelId: data.travelId as number });
        if (started.length > 0) await refreshEtas(db, etaSettings, started);
        return;
      }
      case 'eta-refresh': {
        // Also the catch-up: travels whose start job was lost, devices whose signal was lost.
        await startTravels(db);
        await refreshEtas(db, etaSettings);
        const behind = await devicesBehind(db, 5_000);
        if (behind.length > 0) await queue.add('devices', { deviceIds: behind });
        return;
      }
      case 'inactivity-sweep': {
        await sweepInactive(db, settings.status.inactiveAfterMinutes);
        return;
      }
      case 'command-expiry': {
        const expired = await expireDueCommands(db);
        if (expired > 0) log.info('commands expired', { expired });
        return;
      }
      case 'prune': {
        const pruned = await pruneEngineHistory(db, settings.retention);
        if (Object.values(pruned).some((n) => n > 0)) log.info('pruned what the engine has finished with', pruned);
        await keepPositionHistory();
        return;
      }
      default:
        log.warn('unknown engine job ignored', { name: job.name, id: job.id });
    }
  }

  const lag = new EngineLag();
  const worker = backend.worker(ENGINE_QUEUE, observedJob(log, lag, run), {
    concurrency: settings.concurrency,
    onFailed: (job, error) => log.warn('engine job failed', { job: job.name, jobId: job.id, attempt: job.attempt, requestId: jobRequestId(job), error: error.message }),
  });
  // Today's partition and the next days' exist before the first fix of the day needs them. A failure
  // (a lock not granted in time) costs nothing yet: fixes without a partition go to the default one,
  // and the prune job tries again.
  await keepPositionHistory().catch((error: Error) => log.warn('position partitions not maintained at start', { error: error.message }));
  await queue.repeat('eta-refresh', settings.etaRefreshMs);
  await queue.repeat('inactivity-sweep', settings.inactivitySweepMs);
  await queue.repeat('prune', settings.pruneIntervalMs);
  await queue.repeat('command-expiry', settings.commandExpiryMs ?? 5_000);
  for (const travel of await scheduledTravels(db)) await scheduleTravelStart(queue, travel.id, travel.startTime);
  const behind = await devicesBehind(db, 50_000);
  for (let i = 0; i < behind.length; i += 500) await queue.add('devices', { deviceIds: behind.slice(i, i + 500) });

  return {
    catalog,
    async close() {
      await worker.close();
      lag.close();
      await catalog.close();
    },
  };
}
