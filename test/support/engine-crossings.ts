import { expect } from 'vitest';
import { silentLogger } from '../../runtime/logger.ts';
import type { DatabaseHandle } from '../../db/database.ts';
import { storeFixBatch } from '../../db/position-batches.ts';
import type { StoredFix } from '../../domain/stored-rows.ts';
import { GeofenceCatalog } from '../../engine/geofence-catalog.ts';
import { evaluateDevices } from '../../engine/workers/evaluate-devices.ts';

export interface Crossing {
  deviceId: number;
  geofenceId: number;
  type: 'enter' | 'exit';
  at: Date;
}

// No test geofence is near null island: a fix there is outside all of them.
const OUTSIDE = { latitude: 0.5, longitude: 0.5 };

/**
 * Makes the engine record the given crossings the way it records real ones: each becomes a fix of its
 * device at its time (at the geofence's center for an enter, far outside for an exit), stored by the
 * ingest batch writer and evaluated by the engine's own worker, which writes the events and visits.
 * A device's crossings must come in time order, one geofence at a time, as a vehicle makes them.
 */
export async function recordCrossingsThroughEngine(database: DatabaseHandle, crossings: Crossing[]): Promise<void> {
  const ids = [...new Set(crossings.map((c) => c.geofenceId))];
  const centers = new Map(
    (await database.db.selectFrom('geofences').select(['id', 'center_lat', 'center_lng']).where('id', 'in', ids).execute()).map((g) => [g.id, g]),
  );
  const fixes: StoredFix[] = crossings.map((c) => {
    const center = centers.get(c.geofenceId)!;
    const at = c.type === 'enter' ? { latitude: center.center_lat, longitude: center.center_lng } : OUTSIDE;
    return { deviceId: c.deviceId, fixTime: c.at, receivedAt: c.at, valid: true, ...at, speedKmh: 30, ignition: true, attributes: {} };
  });
  await storeFixBatch(database.db, fixes);
  const catalog = await GeofenceCatalog.open(database.db, silentLogger, undefined, { pollMs: 60_000 });
  const devices = [...new Set(crossings.map((c) => c.deviceId))];
  try {
    await evaluateDevices(database.db, catalog, devices, { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 10_000, lateWindowMs: 3_600_000 });
  } finally {
    await catalog.close();
  }
  // A seed the engine read differently (crossings out of order, overlapping geofences) would make
  // the report tests assert against events that do not exist: check that each one was recorded.
  const recorded = await database.db
    .selectFrom('geofence_events')
    .select(['device_id as deviceId', 'geofence_id as geofenceId', 'type', 'fix_time as at'])
    .where('device_id', 'in', devices)
    .where('fix_time', 'in', crossings.map((c) => c.at))
    .execute();
  const line = (c: Crossing) => `device ${c.deviceId} ${c.type} geofence ${c.geofenceId} at ${c.at.toISOString()}`;
  expect(recorded.map(line).sort(), 'crossings the engine recorded').toEqual(crossings.map(line).sort());
}
