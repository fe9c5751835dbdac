import { sql } from 'kysely';
import type { DriverChange } from '../domain/drivers/driver-assignment.ts';
import type { EngineDecisions } from '../domain/engine-step/evaluate-engine-step.ts';
import type { ExcursionVisit } from '../domain/engine-step/late-fix-plan.ts';
import type { LoggedCrossing } from '../domain/events/event-payloads.ts';
import type { DeviceCrossing, VisitChanges } from '../domain/geofences/geofence-visits.ts';
import type { Db } from './database.ts';
import { recordUnknownIdentifiers, saveDriverChanges } from './driver-assignments.ts';
import { saveEngineStates } from './engine-states.ts';
import { saveArrivals, saveTravelStarts } from './travel-progress.ts';
import { saveTripRecords } from './trip-records.ts';

/**
 * The write phase of an engine step, in the step's transaction: what evaluateEngineStep decided,
 * written as given. Travels first (a travel started now may complete in the same step), the
 * engine states last. Returns what only the writes know: the crossings actually stored (a crossing
 * stored before, by a replay, is not) and the driver changes that changed something, whose events
 * are the ones to log.
 */
export async function saveEngineResults(trx: Db, d: EngineDecisions): Promise<{ crossings: LoggedCrossing[]; driverChanges: DriverChange[] }> {
  await saveTravelStarts(trx, d.travelStarts);
  await saveArrivals(trx, d.arrivals, d.completions);
  const crossings = await insertCrossings(trx, d.crossings);
  await saveVisits(trx, d.visits);
  await recordUnknownIdentifiers(trx, d.drivers.unknown);
  const driverChanges = d.drivers.changes.length === 0 ? [] : await saveDriverChanges(trx, d.drivers.changes);
  await saveTripRecords(trx, d.trips, d.stops);
  await saveEngineStates(trx, d.states);
  return { crossings, driverChanges };
}

/**
 * Stores enter/exit crossings and returns each one actually inserted, with the geofence's name and
 * the fix's speed and heading for its event, in time order (an exit before an enter at the same
 * instant): a crossing already stored (a replay) returns nothing, so nothing is logged twice.
 */
export async function insertCrossings(trx: Db, crossings: readonly DeviceCrossing[]): Promise<LoggedCrossing[]> {
  if (crossings.length === 0) return [];
  const { rows } = await sql<{
    id: string; device_id: number; geofence_id: number; geofence_name: string; type: 'enter' | 'exit'; fix_time: Date;
    latitude: number; longitude: number; speed_kmh: number | null; heading: number | null;
  }>`
    WITH inserted AS (
      INSERT INTO geofence_events (device_id, geofence_id, type, fix_time, latitude, longitude)
      SELECT * FROM unnest(${crossings.map((c) => c.deviceId)}::int[], ${crossings.map((c) => c.geofenceId)}::int[],
        ${crossings.map((c) => c.type)}::text[], ${crossings.map((c) => c.fixTime.toISOString())}::timestamptz[],
        ${crossings.map((c) => c.latitude)}::float8[], ${crossings.map((c) => c.longitude)}::float8[])
      ON CONFLICT (device_id, geofence_id, type, fix_time) DO NOTHING
      RETURNING id, device_id, geofence_id, type, fix_time, latitude, longitude
    )
    SELECT i.id::text AS id, i.device_id, i.geofence_id, g.name AS geofence_name, i.type, i.fix_time, i.latitude, i.longitude, p.speed_kmh, p.heading
    FROM inserted i JOIN geofences g ON g.id = i.geofence_id
    LEFT JOIN positions p ON p.device_id = i.device_id AND p.fix_time = i.fix_time
    ORDER BY i.fix_time, i.type DESC, i.id
  `.execute(trx);
  return rows.map((r) => ({
    id: r.id, deviceId: r.device_id, geofenceId: r.geofence_id, geofenceName: r.geofence_name, type: r.type, fixTime: r.fix_time,
    latitude: r.latitude, longitude: r.longitude, speedKmh: r.speed_kmh, heading: r.heading,
  }));
}

/** Writes visit changes (geofence-visits.ts): the stored visits an exit closes first, then the new ones. */
export async function saveVisits(trx: Db, visits: VisitChanges): Promise<void> {
  const { close, open } = visits;
  if (close.length > 0) {
    await sql`
      UPDATE geofence_visits v SET exit_time = c.exit_time
      FROM unnest(${close.map((c) => c.deviceId)}::int[], ${close.map((c) => c.geofenceId)}::int[],
        ${close.map((c) => c.exit.toISOString())}::timestamptz[]) AS c(device_id, geofence_id, exit_time)
      WHERE v.device_id = c.device_id AND v.geofence_id = c.geofence_id AND v.exit_time IS NULL AND v.entry_time <= c.exit_time
    `.execute(trx);
  }
  if (open.length > 0) {
    await sql`
      INSERT INTO geofence_visits (device_id, geofence_id, entry_time, exit_time)
      SELECT * FROM unnest(${open.map((v) => v.deviceId)}::int[], ${open.map((v) => v.geofenceId)}::int[],
        ${open.map((v) => v.entry.toISOString())}::timestamptz[], ${open.map((v) => v.exit?.toISOString() ?? null)}::timestamptz[])
      ON CONFLICT DO NOTHING
    `.execute(trx);
  }
}

/**
 * A device's stored crossings around a window: the geofences it was inside just before `from` (its
 * last stored crossing of each before then was an enter), and its crossings from `from` through `to`.
 */
export async function storedCrossingsAround(
  trx: Db,
  deviceId: number,
  from: Date,
  to: Date,
): Promise<{ insideBefore: Set<number>; crossings: Array<{ geofenceId: number; type: 'enter' | 'exit'; fixTime: number }> }> {
  const before = await sql<{ geofence_id: number; type: 'enter' | 'exit' }>`
    SELECT DISTINCT ON (geofence_id) geofence_id, type FROM geofence_events
    WHERE device_id = ${deviceId} AND fix_time < ${from.toISOString()}::timestamptz
    ORDER BY geofence_id, fix_time DESC, (type = 'enter') DESC
  `.execute(trx);
  const within = await sql<{ geofence_id: number; type: 'enter' | 'exit'; fix_time: Date }>`
    SELECT geofence_id, type, fix_time FROM geofence_events
    WHERE device_id = ${deviceId} AND fix_time >= ${from.toISOString()}::timestamptz AND fix_time <= ${to.toISOString()}::timestamptz
    ORDER BY fix_time, (type = 'enter'), id
  `.execute(trx);
  return {
    insideBefore: new Set(before.rows.filter((r) => r.type === 'enter').map((r) => r.geofence_id)),
    crossings: within.rows.map((r) => ({ geofenceId: r.geofence_id, type: r.type, fixTime: r.fix_time.getTime() })),
  };
}

/**
 * Visits for excursions found late: an excursion inside a geofence is a visit of its own; one outside
 * a geofence the device was in splits that visit in two (closed at the exit, and a new one from the
 * re-entry carrying the old exit).
 */
export async function recordExcursionVisits(trx: Db, excursions: readonly ExcursionVisit[]): Promise<void> {
  for (const e of excursions) {
    if (e.into.type === 'enter') {
      await sql`
        INSERT INTO geofence_visits (device_id, geofence_id, entry_time, exit_time)
        VALUES (${e.deviceId}, ${e.geofenceId}, ${e.into.fixTime.toISOString()}::timestamptz, ${e.back.fixTime.toISOString()}::timestamptz)
        ON CONFLICT DO NOTHING
      `.execute(trx);
      continue;
    }
    const { rows } = await sql<{ id: number; exit_time: Date | null }>`
      SELECT id, exit_time FROM geofence_visits
      WHERE device_id = ${e.deviceId} AND geofence_id = ${e.geofenceId} AND entry_time <= ${e.into.fixTime.toISOString()}::timestamptz
        AND (exit_time IS NULL OR exit_time >= ${e.back.fixTime.toISOString()}::timestamptz)
      ORDER BY entry_time DESC LIMIT 1
    `.execute(trx);
    const visit = rows[0];
    if (!visit) continue;
    // Closed first, so the device never holds two open visits of the geofence.
    await sql`UPDATE geofence_visits SET exit_time = ${e.into.fixTime.toISOString()}::timestamptz WHERE id = ${visit.id}`.execute(trx);
    await sql`
      INSERT INTO geofence_visits (device_id, geofence_id, entry_time, exit_time)
      VALUES (${e.deviceId}, ${e.geofenceId}, ${e.back.fixTime.toISOString()}::timestamptz, ${visit.exit_time?.toISOString() ?? null}::timestamptz)
      ON CONFLICT DO NOTHING
    `.execute(trx);
  }
}
