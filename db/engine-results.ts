import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { EventPosition, NewEvent } from './event-log.ts';

export interface DeviceCrossing {
  deviceId: number;
  geofenceId: number;
  type: 'enter' | 'exit';
  fixTime: Date;
  latitude: number;
  longitude: number;
}

/**
 * Stores enter/exit crossings and returns, for each one actually inserted, its event for the log
 * (`vehicle.geofence.enter` / `.exit`, with the geofence's name and the fix's speed and heading): a
 * crossing already stored (a replay) returns nothing, so nothing is logged twice.
 */
export async function insertCrossingEvents(trx: Db, crossings: DeviceCrossing[]): Promise<NewEvent[]> {
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
    type: r.type === 'enter' ? 'vehicle.geofence.enter' : 'vehicle.geofence.exit',
    occurredAt: r.fix_time,
    deviceId: r.device_id,
    position: { lat: r.latitude, lng: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, fixTime: r.fix_time },
    data: { geofence: { id: r.geofence_id, name: r.geofence_name } },
    dedupeKey: `geofence-event:${r.id}`,
  }));
}

/**
 * Visits from crossings in time order: an enter opens one, an exit closes the open one (opened in
 * this batch or stored earlier). Closing comes before inserting, so a device that leaves and comes
 * back within one batch never holds two open visits of a geofence.
 */
export async function recordVisits(trx: Db, crossings: DeviceCrossing[]): Promise<void> {
  if (crossings.length === 0) return;
  const opened = new Map<string, { deviceId: number; geofenceId: number; entry: Date; exit: Date | null }>();
  const finished: Array<{ deviceId: number; geofenceId: number; entry: Date; exit: Date | null }> = [];
  const closeStored: Array<{ deviceId: number; geofenceId: number; exit: Date }> = [];
  for (const c of crossings) {
    const key = `${c.deviceId}:${c.geofenceId}`;
    if (c.type === 'enter') {
      const open = opened.get(key);
      if (open) finished.push(open); // two enters without an exit cannot happen; kept rather than lost
      opened.set(key, { deviceId: c.deviceId, geofenceId: c.geofenceId, entry: c.fixTime, exit: null });
    } else {
      const open = opened.get(key);
      if (open) {
        open.exit = c.fixTime;
        finished.push(open);
        opened.delete(key);
      } else {
        closeStored.push({ deviceId: c.deviceId, geofenceId: c.geofenceId, exit: c.fixTime });
      }
    }
  }
  const visits = [...finished, ...opened.values()];
  if (closeStored.length > 0) {
    await sql`
      UPDATE geofence_visits v SET exit_time = c.exit_time
      FROM unnest(${closeStored.map((c) => c.deviceId)}::int[], ${closeStored.map((c) => c.geofenceId)}::int[],
        ${closeStored.map((c) => c.exit.toISOString())}::timestamptz[]) AS c(device_id, geofence_id, exit_time)
      WHERE v.device_id = c.device_id AND v.geofence_id = c.geofence_id AND v.exit_time IS NULL AND v.entry_time <= c.exit_time
    `.execute(trx);
  }
  if (visits.length > 0) {
    await sql`
      INSERT INTO geofence_visits (device_id, geofence_id, entry_time, exit_time)
      SELECT * FROM unnest(${visits.map((v) => v.deviceId)}::int[], ${visits.map((v) => v.geofenceId)}::int[],
        ${visits.map((v) => v.entry.toISOString())}::timestamptz[], ${visits.map((v) => v.exit?.toISOString() ?? null)}::timestamptz[])
      ON CONFLICT DO NOTHING
    `.execute(trx);
  }
}

export interface StatusChange {
  deviceId: number;
  from: string | null;
  to: string;
  at: Date;
  /** The fix that showed the new status; none for Inactive (silence has no fix). */
  position?: EventPosition;
}

/** Status changes as events (`vehicle.status.changed`); a change is named by its device, time and new status. */
export function statusChangeEvents(changes: StatusChange[]): NewEvent[] {
  return changes.map((c) => ({
    type: 'vehicle.status.changed',
    occurredAt: c.at,
    deviceId: c.deviceId,
    position: c.position ?? null,
    data: { from: c.from, to: c.to },
    dedupeKey: `status:${c.deviceId}:${c.at.getTime()}:${c.to}`,
  }));
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
export async function recordExcursionVisits(
  trx: Db,
  excursions: Array<{ deviceId: number; geofenceId: number; into: { type: 'enter' | 'exit'; fixTime: Date }; back: { fixTime: Date } }>,
): Promise<void> {
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
