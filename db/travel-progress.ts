import { sql } from 'kysely';
import type { Db } from './database.ts';
import { STARTING_WAYPOINT_NAME } from './travels.ts';
import { TravelStatus } from './schema.ts';

/**
 * Starts the Scheduled travels whose start time has come (all of them, one, or a set of vehicles'):
 * In progress, waypoint 1 (`Current position`) Completed at the start time, the vehicle's last known
 * position kept as the starting point. A travel already started or cancelled is left alone, so the
 * delayed job, the periodic catch-up and the device worker can all call this safely.
 */
export async function startDueTravels(db: Db, filter: { travelId?: number; deviceIds?: number[] } = {}): Promise<Array<{ id: number; deviceId: number }>> {
  const { rows } = await sql<{ id: number; device_id: number }>`
    WITH started AS (
      UPDATE travels t SET status = ${TravelStatus.InProgress}, started_at = t.start_time,
        start_latitude = s.latitude, start_longitude = s.longitude
      FROM travels t0 LEFT JOIN device_states s ON s.device_id = t0.device_id
      WHERE t.id = t0.id AND t.status = ${TravelStatus.Scheduled} AND t.start_time <= now()
        ${filter.travelId !== undefined ? sql`AND t.id = ${filter.travelId}` : sql``}
        ${filter.deviceIds ? sql`AND t.device_id = ANY(${filter.deviceIds}::int[])` : sql``}
      RETURNING t.id, t.device_id, t.start_time
    ), first_waypoint AS (
      UPDATE travel_waypoints w SET status = 'completed', arrived_at = started.start_time
      FROM started WHERE w.travel_id = started.id AND w.seq = 1 AND w.geofence_name = ${STARTING_WAYPOINT_NAME}
      RETURNING w.travel_id
    )
    SELECT id, device_id FROM started
  `.execute(db);
  return rows.map((r) => ({ id: r.id, deviceId: r.device_id }));
}

export interface TravelInProgress {
  id: number;
  deviceId: number;
  startedAt: Date;
  waypoints: Array<{ seq: number; geofenceId: number | null; status: 'pending' | 'completed' | 'cancelled' }>;
}

export async function travelsInProgress(db: Db, deviceIds: number[]): Promise<TravelInProgress[]> {
  if (deviceIds.length === 0) return [];
  const { rows } = await sql<{ id: number; device_id: number; started_at: Date; seq: number; geofence_id: number | null; status: 'pending' | 'completed' | 'cancelled' }>`
    SELECT t.id, t.device_id, t.started_at, w.seq, w.geofence_id, w.status
    FROM travels t JOIN travel_waypoints w ON w.travel_id = t.id
    WHERE t.device_id = ANY(${deviceIds}::int[]) AND t.status = ${TravelStatus.InProgress}
    ORDER BY t.id, w.seq
    FOR UPDATE OF t
  `.execute(db);
  const byId = new Map<number, TravelInProgress>();
  for (const r of rows) {
    let travel = byId.get(r.id);
    if (!travel) byId.set(r.id, (travel = { id: r.id, deviceId: r.device_id, startedAt: r.started_at, waypoints: [] }));
    travel.waypoints.push({ seq: r.seq, geofenceId: r.geofence_id, status: r.status });
  }
  return [...byId.values()];
}

/** Completes waypoints at their arrival times; the travel is Completed with its last arrival. */
export async function recordArrivals(db: Db, travelId: number, arrivals: Array<{ seq: number; arrivedAt: Date }>, completed: boolean): Promise<void> {
  if (arrivals.length === 0) return;
  await sql`
    UPDATE travel_waypoints w SET status = 'completed', arrived_at = a.arrived_at, estimated_arrival = NULL
    FROM unnest(${arrivals.map((a) => a.seq)}::int[], ${arrivals.map((a) => a.arrivedAt.toISOString())}::timestamptz[]) AS a(seq, arrived_at)
    WHERE w.travel_id = ${travelId} AND w.seq = a.seq AND w.status = 'pending'
  `.execute(db);
  if (completed) {
    await db
      .updateTable('travels')
      .set({ status: TravelStatus.Completed, completed_at: arrivals[arrivals.length - 1]!.arrivedAt })
      .where('id', '=', travelId)
      .where('status', '=', TravelStatus.InProgress)
      .execute();
  }
}

export interface EtaInput {
  travelId: number;
  deviceId: number;
  /** The vehicle's last known position, or null when it never reported. */
  latitude: number | null;
  longitude: number | null;
  /** Average speed of its moving fixes in the 15 minutes before its last fix. */
  recentSpeedKmh: number | null;
  pending: Array<{ seq: number; latitude: number; longitude: number }>;
}

/** What the ETA refresh needs for In progress travels (all, or some). */
export async function etaInputs(db: Db, movingSpeedKmh: number, travelIds?: number[]): Promise<EtaInput[]> {
  const { rows } = await sql<{
    id: number; device_id: number; latitude: number | null; longitude: number | null; recent_speed: number | null;
    seq: number; center_lat: number; center_lng: number;
  }>`
    SELECT t.id, t.device_id, s.latitude, s.longitude, speed.recent AS recent_speed, w.seq, g.center_lat, g.center_lng
    FROM travels t
    JOIN travel_waypoints w ON w.travel_id = t.id AND w.status = 'pending'
    JOIN geofences g ON g.id = w.geofence_id
    LEFT JOIN device_states s ON s.device_id = t.device_id
    LEFT JOIN LATERAL (
      SELECT avg(p.speed_kmh) AS recent FROM positions p
      WHERE p.device_id = t.device_id AND p.fix_time > s.fix_time - interval '15 minutes' AND p.fix_time <= s.fix_time
        AND p.speed_kmh >= ${movingSpeedKmh}
    ) speed ON true
    WHERE t.status = ${TravelStatus.InProgress} ${travelIds ? sql`AND t.id = ANY(${travelIds}::int[])` : sql``}
    ORDER BY t.id, w.seq
  `.execute(db);
  const byId = new Map<number, EtaInput>();
  for (const r of rows) {
    let input = byId.get(r.id);
    if (!input) {
      byId.set(r.id, (input = {
        travelId: r.id, deviceId: r.device_id, latitude: r.latitude, longitude: r.longitude,
        recentSpeedKmh: r.recent_speed === null ? null : Number(r.recent_speed), pending: [],
      }));
    }
    input.pending.push({ seq: r.seq, latitude: r.center_lat, longitude: r.center_lng });
  }
  return [...byId.values()];
}

export async function saveEstimates(db: Db, estimates: Array<{ travelId: number; seq: number; estimatedArrival: Date }>, at: Date): Promise<void> {
  if (estimates.length === 0) return;
  await sql`
    UPDATE travel_waypoints w SET estimated_arrival = e.estimated, estimated_at = ${at.toISOString()}::timestamptz
    FROM unnest(${estimates.map((e) => e.travelId)}::int[], ${estimates.map((e) => e.seq)}::int[],
      ${estimates.map((e) => e.estimatedArrival.toISOString())}::timestamptz[]) AS e(travel_id, seq, estimated)
    WHERE w.travel_id = e.travel_id AND w.seq = e.seq AND w.status = 'pending'
  `.execute(db);
}

/** Scheduled travels still to start, for rebuilding their start jobs. */
export async function scheduledTravels(db: Db): Promise<Array<{ id: number; startTime: Date }>> {
  const rows = await db.selectFrom('travels').select(['id', 'start_time']).where('status', '=', TravelStatus.Scheduled).execute();
  return rows.map((r) => ({ id: r.id, startTime: r.start_time }));
}
