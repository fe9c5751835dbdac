import { sql } from 'kysely';
import type { DeviceStop, DeviceTrip } from '../domain/trips/device-trips.ts';
import type { Db } from './database.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Writes the trips and stops an evaluation touched, keyed by (device, start time): a replayed
 * evaluation writes the same values again, and a row in progress is brought up to date. Geofence
 * names are resolved here and kept, so a later rename does not rewrite history. A driver deleted
 * meanwhile leaves the trip without one.
 */
export async function saveTripRecords(trx: Db, trips: readonly DeviceTrip[], stops: readonly DeviceStop[]): Promise<void> {
  if (trips.length > 0) {
    await sql`
      INSERT INTO trips (device_id, start_time, end_time, last_fix_time, start_lat, start_lng, end_lat, end_lng, start_geofence, end_geofence,
        distance_m, driving_s, idle_s, overspeed_s, max_speed_kmh, harsh_events, driver_id)
      SELECT u.device_id, u.start_time, u.end_time, u.last_fix_time, u.start_lat, u.start_lng, u.end_lat, u.end_lng,
        (SELECT name FROM geofences WHERE id = u.start_geofence_id), (SELECT name FROM geofences WHERE id = u.end_geofence_id),
        u.distance_m, u.driving_s, u.idle_s, u.overspeed_s, u.max_speed_kmh, u.harsh_events, (SELECT id FROM drivers WHERE id = u.driver_id)
      FROM unnest(
        ${trips.map((t) => t.deviceId)}::int[], ${trips.map((t) => iso(t.startTime))}::timestamptz[], ${trips.map((t) => iso(t.endTime))}::timestamptz[],
        ${trips.map((t) => iso(t.lastFixTime))}::timestamptz[], ${trips.map((t) => t.startLat)}::float8[], ${trips.map((t) => t.startLng)}::float8[],
        ${trips.map((t) => t.endLat)}::float8[], ${trips.map((t) => t.endLng)}::float8[],
        ${trips.map((t) => t.startGeofenceId)}::int[], ${trips.map((t) => t.endGeofenceId)}::int[],
        ${trips.map((t) => t.distanceM)}::float8[], ${trips.map((t) => t.drivingS)}::float8[], ${trips.map((t) => t.idleS)}::float8[],
        ${trips.map((t) => t.overspeedS)}::float8[], ${trips.map((t) => t.maxSpeedKmh)}::float8[], ${trips.map((t) => t.harshEvents)}::int[],
        ${trips.map((t) => t.driverId)}::int[]
      ) AS u(device_id, start_time, end_time, last_fix_time, start_lat, start_lng, end_lat, end_lng, start_geofence_id, end_geofence_id,
        distance_m, driving_s, idle_s, overspeed_s, max_speed_kmh, harsh_events, driver_id)
      ORDER BY u.device_id, u.start_time
      ON CONFLICT (device_id, start_time) DO UPDATE SET
        end_time = EXCLUDED.end_time, last_fix_time = EXCLUDED.last_fix_time, end_lat = EXCLUDED.end_lat, end_lng = EXCLUDED.end_lng,
        end_geofence = EXCLUDED.end_geofence, distance_m = EXCLUDED.distance_m, driving_s = EXCLUDED.driving_s, idle_s = EXCLUDED.idle_s,
        overspeed_s = EXCLUDED.overspeed_s, max_speed_kmh = EXCLUDED.max_speed_kmh, harsh_events = EXCLUDED.harsh_events,
        driver_id = coalesce(trips.driver_id, EXCLUDED.driver_id)
    `.execute(trx);
  }
  // A stop that ended where it began (a first fix, then at once a trip) is no stop.
  const empty = stops.filter((s) => s.endTime === s.startTime);
  const kept = stops.filter((s) => s.endTime !== s.startTime);
  if (empty.length > 0) {
    await sql`
      DELETE FROM stops s USING unnest(${empty.map((s) => s.deviceId)}::int[], ${empty.map((s) => iso(s.startTime))}::timestamptz[]) AS u(device_id, start_time)
      WHERE s.device_id = u.device_id AND s.start_time = u.start_time
    `.execute(trx);
  }
  if (kept.length > 0) {
    await sql`
      INSERT INTO stops (device_id, start_time, end_time, last_fix_time, lat, lng, geofence, engine_idle_s)
      SELECT u.device_id, u.start_time, u.end_time, u.last_fix_time, u.lat, u.lng, (SELECT name FROM geofences WHERE id = u.geofence_id), u.engine_idle_s
      FROM unnest(
        ${kept.map((s) => s.deviceId)}::int[], ${kept.map((s) => iso(s.startTime))}::timestamptz[], ${kept.map((s) => iso(s.endTime))}::timestamptz[],
        ${kept.map((s) => iso(s.lastFixTime))}::timestamptz[], ${kept.map((s) => s.lat)}::float8[], ${kept.map((s) => s.lng)}::float8[],
        ${kept.map((s) => s.geofenceId)}::int[], ${kept.map((s) => s.engineIdleS)}::float8[]
      ) AS u(device_id, start_time, end_time, last_fix_time, lat, lng, geofence_id, engine_idle_s)
      ORDER BY u.device_id, u.start_time
      ON CONFLICT (device_id, start_time) DO UPDATE SET
        end_time = EXCLUDED.end_time, last_fix_time = EXCLUDED.last_fix_time, engine_idle_s = EXCLUDED.engine_idle_s
    `.execute(trx);
  }
}
