import type { TripSettings } from '../domain/trips/device-trips.ts';
import type { Logger } from '../runtime/logger.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { devicesBehind } from '../db/engine-states.ts';
import { scheduledTravels } from '../db/travel-progress.ts';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import { ENGINE_JOBS, scheduleTravelStart, type EnginePayloads } from './engine-jobs.ts';
import { concurrencyShares, EngineQueues } from './engine-queues.ts';
import { EngineLag } from './engine-metrics.ts';
import { GeofenceCatalog } from './geofence-catalog.ts';
import { CommittedFixes } from './committed-fixes.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { jobRequestId, observedJob } from './observed-job.ts';
import { LateFixLog } from './late-fix-log.ts';
import type { QueueBackend } from './queue/job-queue.ts';
import { routeJobs, type JobProcessors } from './queue/route-jobs.ts';
import type { EtaSettings } from '../domain/travels/travel-eta.ts';
import type { EvaluationSettings } from './workers/evaluate-devices.ts';
import { evaluateSignalledDevices } from './workers/evaluate-signalled-devices.ts';
import type { EtaRefreshSettings } from './workers/refresh-etas.ts';
import { refreshEtasAndCatchUp } from './workers/refresh-etas-and-catch-up.ts';
import { startScheduledTravel } from './workers/start-scheduled-travel.ts';
import type { Retention } from './workers/prune-history.ts';
import { pruneEngine } from './workers/prune-engine.ts';
import { keepPositionHistory } from './workers/keep-position-history.ts';
import type { PositionHistorySettings } from './workers/maintain-position-partitions.ts';
import { sweepInactive } from './workers/sweep-inactive.ts';
import type { DrivingSettings } from '../domain/driving/driving-behaviour.ts';
import type { FuelThresholds } from '../domain/fuel/device-fuel.ts';
import { expireDueCommands } from './workers/expire-commands.ts';
import { checkMaintenance } from './workers/check-maintenance.ts';
import { startAddressKeeper, type AddressKeeperSettings } from './geocoding/address-keeper.ts';
import type { ReverseGeocoder } from './geocoding/reverse-geocoder.ts';

export interface EngineSettings {
  status: DeviceStatusThresholds;
  eta: EtaSettings;
  etaRefreshMs: number;
  inactivitySweepMs: number;
  geofencePollMs: number;
  /** Engine jobs run at once in this process, shared over its queues (at least one per queue). */
  concurrency: number;
  /**
   * The engine queues devices' signals are spread over, by device (ENGINE_QUEUES; default 1, the
   * single `fleetcore-engine` queue). This process works every one of them.
   */
  queues?: number;
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
  /** How often maintenance items are checked against their vehicles' readings (MAINTENANCE_CHECK_S; default 60 s). */
  maintenanceCheckMs?: number;
  /** A speeding stretch ends below the speed limit minus this (OVERSPEED_HYSTERESIS_KMH; default 5). */
  overspeedHysteresisKmh?: number;
  /** Trip segmentation (TRIP_* settings); the moving speed is `status.movingSpeedKmh`. */
  trips?: Partial<TripSettings>;
  /** Harsh driving and idling (HARSH_*, IDLE_MIN_S; default DEFAULT_DRIVING_SETTINGS). */
  driving?: DrivingSettings;
  /** Fuel refills and drops (FUEL_*; default DEFAULT_FUEL_THRESHOLDS). */
  fuel?: FuelThresholds;
  /** A waypoint estimated later than expected by more than this is delayed (ON_TIME_TOLERANCE_MINUTES; default 5). */
  onTimeToleranceMinutes?: number;
  /**
   * Reverse geocoding: addresses kept after the commit by a loop of their own (address-keeper.ts);
   * absent, none are looked up. `reuseM` also decides which events' positions carry the known address.
   */
  geocoding?: AddressKeeperSettings & { geocoder: ReverseGeocoder };
}

export interface RunningEngine {
  catalog: GeofenceCatalog;
  /**
   * Told the fixes of each batch committed by an ingest in this process: the engine evaluates them
   * from memory instead of reading them back (CommittedFixes). Fixes committed elsewhere need no telling.
   */
  fixesCommitted(fixes: readonly StoredFix[]): void;
  close(): Promise<void>;
}

/**
 * The engine role: a worker for each engine queue (EngineQueues) and the schedules it relies on. Each job name
 * (engine-jobs.ts) has its processor in workers/, a plain function over the database; none keeps
 * state between jobs except the geofence catalog, which follows the database. Scheduled work is
 * rebuilt from the database at start, so the in-process queue loses nothing a restart can't recover,
 * and BullMQ's copies are deduplicated by job id.
 */
export async function startEngine(database: DatabaseHandle, backend: QueueBackend, log: Logger, settings: EngineSettings): Promise<RunningEngine> {
  const { db } = database;
  // Half the log's retention: a catalog that stalled that long may have missed pruned changes.
  const catalog = await GeofenceCatalog.open(db, log, database.listenPool, {
    pollMs: settings.geofencePollMs, reloadAfterMs: settings.retention.geofenceChangesMs / 2,
  });
  const queues = new EngineQueues(backend, settings.queues ?? 1);
  // Travel starts and the schedules: always on the first, whose name no count changes.
  const first = queues.first;
  const eta: EtaRefreshSettings = { ...settings.eta, movingSpeedKmh: settings.status.movingSpeedKmh, onTimeToleranceMinutes: settings.onTimeToleranceMinutes ?? 5 };
  const evaluation: EvaluationSettings = {
    status: settings.status, fixesPerDevice: settings.fixesPerDevice, lateWindowMs: settings.lateWindowMs,
    overspeedHysteresisKmh: settings.overspeedHysteresisKmh ?? 5,
    trips: settings.trips,
    ...(settings.driving ? { driving: settings.driving } : {}),
    ...(settings.fuel ? { fuel: settings.fuel } : {}),
    ...(settings.geocoding ? { addressReuseM: settings.geocoding.reuseM } : {}),
  };
  const lateFixLog = new LateFixLog(log, settings.lateWindowMs);
  const committed = new CommittedFixes();

  const processors: JobProcessors<EnginePayloads> = {
    devices: ({ deviceIds }) => evaluateSignalledDevices({ db, catalog, queues, lateFixLog, committed }, { evaluation, eta }, deviceIds),
    'travel-start': ({ travelId }) => startScheduledTravel(db, eta, travelId),
    'eta-refresh': () => refreshEtasAndCatchUp(db, queues, eta),
    'inactivity-sweep': () => sweepInactive(db, settings.status.inactiveAfterMinutes),
    'command-expiry': (_, jobLog) => expireDueCommands(db, jobLog),
    'maintenance-check': () => checkMaintenance(db),
    prune: (_, jobLog) => pruneEngine(db, settings, jobLog),
  };

  const lag = new EngineLag();
  const shares = concurrencyShares(settings.concurrency, queues.all.length);
  // Every queue, so any engine process takes over the devices of one whose process stopped.
  const workers = queues.all.map((q, i) => backend.worker(q.name, observedJob(log, lag, routeJobs(q.name, ENGINE_JOBS, processors)), {
    concurrency: shares[i]!,
    onFailed: (job, error) => log.warn('engine job failed', { job: job.name, queue: q.name, jobId: job.id, attempt: job.attempt, requestId: jobRequestId(job), error: error.message }),
  }));
  // Today's partition and the next days' exist before the first fix of the day needs them. A failure
  // (a lock not granted in time) costs nothing yet: fixes without a partition go to the default one,
  // and the prune job tries again.
  await keepPositionHistory(db, settings.positionHistory, log).catch((error: Error) => log.warn('position partitions not maintained at start', { error: error.message }));
  await first.repeat('eta-refresh', settings.etaRefreshMs);
  await first.repeat('inactivity-sweep', settings.inactivitySweepMs);
  await first.repeat('prune', settings.pruneIntervalMs);
  await first.repeat('command-expiry', settings.commandExpiryMs ?? 5_000);
  await first.repeat('maintenance-check', settings.maintenanceCheckMs ?? 60_000);
  for (const travel of await scheduledTravels(db)) await scheduleTravelStart(first, travel.id, travel.startTime);
  // Into the queues of this process's count: signals still waiting in queues a different count no
  // longer works (ENGINE_QUEUES lowered) are only repeated here, as they tell nothing the cursors don't.
  const behind = await devicesBehind(db, 50_000);
  const step = 500 * queues.all.length;
  for (let i = 0; i < behind.length; i += step) await queues.signal(behind.slice(i, i + step));
  const addresses = settings.geocoding ? startAddressKeeper(db, settings.geocoding.geocoder, log.child({ component: 'addresses' }), settings.geocoding) : undefined;

  return {
    catalog,
    fixesCommitted: (fixes) => committed.add(fixes),
    async close() {
      await addresses?.close();
      await Promise.all(workers.map((w) => w.close()));
      lag.close();
      await catalog.close();
    },
  };
}
