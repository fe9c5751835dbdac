import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface DeviceCrossing {
  deviceId: number;
  geofenceId: number;
  type: 'enter' | 'exit';
  fixTime: Date;
  latitude: number;
  longitude: number;
}

/**
 * Stores enter/exit events and, for each event actually inserted, its outbox record for the event
 * stream (`vehicle.geofence.enter` / `.exit` with the vehicle's and the geofence's names), in one
 * statement: an event already stored (a replay) adds nothing, so nothing is published twice.
 * Returns how many events were new.
 */
export async function insertCrossingEvents(trx: Db, crossings: DeviceCrossing[]): Promise<number> {
  if (crossings.length === 0) return 0;
  const { rows } = await sql<{ n: number }>`
    WITH inserted AS (
      INSERT INTO geofence_events (device_id, geofence_id, type, fix_time, latitude, longitude)
      SELECT * FROM unnest(${crossings.map((c) => c.deviceId)}::int[], ${crossings.map((c) => c.geofenceId)}::int[],
        ${crossings.map((c) => c.type)}::text[], ${crossings.map((c) => c.fixTime.toISOString())}::timestamptz[],
        ${crossings.map((c) => c.latitude)}::float8[], ${crossings.map((c) => c.longitude)}::float8[])
      ON CONFLICT (device_id, geofence_id, type, fix_time) DO NOTHING
      RETURNING id, device_id, geofence_id, type, fix_time, latitude, longitude
    ), published AS (
      INSERT INTO engine_outbox (kind, payload)
      SELECT 'vehicle.geofence.' || i.type, jsonb_build_object(
          'eventId', i.id, 'type', i.type, 'time', i.fix_time, 'latitude', i.latitude, 'longitude', i.longitude,
          'vehicle', jsonb_build_object('id', d.imei, 'name', d.name, 'plates', d.plates),
          'geofence', jsonb_build_object('id', g.id, 'name', g.name))
      FROM inserted i JOIN devices d ON d.id = i.device_id JOIN geofences g ON g.id = i.geofence_id
      ORDER BY i.fix_time, i.type DESC, i.id
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM published
  `.execute(trx);
  return rows[0]!.n;
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

/** Status changes for the event stream (`vehicle.status.changed`). */
export async function insertStatusChanges(
  trx: Db,
  changes: Array<{ deviceId: number; from: string | null; to: string; at: Date }>,
): Promise<void> {
  if (changes.length === 0) return;
  await sql`
    INSERT INTO engine_outbox (kind, payload)
    SELECT 'vehicle.status.changed', jsonb_build_object(
      'vehicle', jsonb_build_object('id', d.imei, 'name', d.name, 'plates', d.plates), 'from', c.from_status, 'to', c.to_status, 'time', c.at)
    FROM unnest(${changes.map((c) => c.deviceId)}::int[], ${changes.map((c) => c.from)}::text[], ${changes.map((c) => c.to)}::text[],
      ${changes.map((c) => c.at.toISOString())}::timestamptz[]) WITH ORDINALITY AS c(device_id, from_status, to_status, at, n)
    JOIN devices d ON d.id = c.device_id
    ORDER BY c.n
  `.execute(trx);
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
