import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { EventPosition, NewEvent } from './event-log.ts';
import { lastPosition, travelCompletedEvent, travelStartedEvent, waypointArrivedEvent } from './travel-events.ts';
import { STARTING_WAYPOINT_NAME } from './travels.ts';
import { TravelStatus } from './schema.ts';

/**
 * Starts the Scheduled travels whose start time has come (all of them, one, or a set of vehicles'):
 * In progress, waypoint 1 (`Current position`) Completed at the start time, the vehicle's last known
 * position kept as the starting point. A travel already started or cancelled is left alone, so the
 * delayed job, the periodic catch-up and the device worker can all call this safely. Returns the
 * travels started and their `travel.started` events, for the caller to log in the same transaction.
 */
export async function startDueTravels(
  trx: Db,
  filter: { travelId?: number; deviceIds?: number[] } = {},
): Promise<{ started: Array<{ id: number; deviceId: number }>; events: NewEvent[] }> {
  const { rows } = await sql<{
    id: number; device_id: number; start_time: Date;
    latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null; fix_time: Date | null;
  }>`
    WITH started AS (
      UPDATE travels t SET status = ${TravelStatus.InProgress}, started_at = t.start_time,
        start_latitude = s.latitude, start_longitude = s.longitude
      FROM travels t0 LEFT JOIN device_states s ON s.device_id = t0.device_id
      WHERE t.id = t0.id AND t.status = ${TravelStatus.Scheduled} AND t.start_time <= now()
        ${filter.travelId !== undefined ? sql`AND t.id = ${filter.travelId}` : sql``}
        ${filter.deviceIds ? sql`AND t.device_id = ANY(${filter.deviceIds}::int[])` : sql``}
      RETURNING t.id, t.device_id, t.start_time, s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time
    ), first_waypoint AS (
      UPDATE travel_waypoints w SET status = 'completed', arrived_at = started.start_time
      FROM started WHERE w.travel_id = started.id AND w.seq = 1 AND w.geofence_name = ${STARTING_WAYPOINT_NAME}
      RETURNING w.travel_id
    )
    SELECT * FROM started ORDER BY start_time, id
  `.execute(trx);
  const started = rows.map((r) => ({ id: r.id, deviceId: r.device_id }));
  return { started, events: rows.map((r, i) => travelStartedEvent(started[i]!, r.start_time, lastPosition(r))) };
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

/**
 * Completes waypoints at their arrival times; the travel is Completed with its last arrival. Returns the
 * events of what actually changed (a waypoint no longer pending is left alone and logs nothing):
 * `travel.waypoint.arrived` per waypoint, at its arrival fix (`positionAt`), then `travel.completed`.
 */
export async function recordArrivals(
  trx: Db,
  travel: { id: number; deviceId: number },
  arrivals: Array<{ seq: number; arrivedAt: Date }>,
  completed: boolean,
  positionAt: (arrivedAt: Date) => EventPosition | null,
): Promise<NewEvent[]> {
  if (arrivals.length === 0) return [];
  const { rows } = await sql<{ seq: number; geofence_name: string; expected_arrival: Date; arrived_at: Date }>`
    UPDATE travel_waypoints w SET status = 'completed', arrived_at = a.arrived_at, estimated_arrival = NULL
    FROM unnest(${arrivals.map((a) => a.seq)}::int[], ${arrivals.map((a) => a.arrivedAt.toISOString())}::timestamptz[]) AS a(seq, arrived_at)
    WHERE w.travel_id = ${travel.id} AND w.seq = a.seq AND w.status = 'pending'
    RETURNING w.seq, w.geofence_name, w.expected_arrival, w.arrived_at
  `.execute(trx);
  let completedAt: Date | undefined;
  if (completed) {
    const done = await trx
      .updateTable('travels')
      .set({ status: TravelStatus.Completed, completed_at: arrivals[arrivals.length - 1]!.arrivedAt })
      .where('id', '=', travel.id)
      .where('status', '=', TravelStatus.InProgress)
      .returning('completed_at')
      .executeTakeFirst();
    completedAt = done?.completed_at ?? undefined;
  }
  const events = rows
    .sort((a, b) => a.seq - b.seq)
    .map((r, i) => waypointArrivedEvent(
      travel,
      { seq: r.seq, geofenceName: r.geofence_name, expectedArrival: r.expected_arrival, arrivedAt: r.arrived_at },
      completedAt && i === rows.length - 1 ? 'Completed' : 'In progress',
      positionAt(r.arrived_at),
    ));
  if (completedAt) events.push(travelCompletedEvent(travel, completedAt, positionAt(completedAt)));
  return events;
}

export interface EtaInput {
  travelId: number;
  deviceId: number;
  /** The vehicle's last known position, or null when it never reported. */
  position: EventPosition | null;
  /** Average speed of its moving fixes in the 15 minutes before its last fix. */
  recentSpeedKmh: number | null;
  pending: Array<{ seq: number; latitude: number; longitude: number; geofenceName: string; expectedArrival: Date; delayed: boolean }>;
}

/**
 * What the ETA refresh needs for In progress travels (all, or some). In a transaction the travels stay
 * locked to its end, taken in id order as the device worker and a cancel take them: the refresh's
 * waypoint writes then never cross theirs in an order that deadlocks.
 */
export async function etaInputs(db: Db, movingSpeedKmh: number, travelIds?: number[]): Promise<EtaInput[]> {
  const { rows } = await sql<{
    id: number; device_id: number; latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null;
    fix_time: Date | null; recent_speed: number | null; seq: number; center_lat: number; center_lng: number;
    geofence_name: string; expected_arrival: Date; delayed: boolean;
  }>`
    SELECT t.id, t.device_id, s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time, speed.recent AS recent_speed,
      w.seq, g.center_lat, g.center_lng, w.geofence_name, w.expected_arrival, w.delayed_at IS NOT NULL AS delayed
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
    FOR NO KEY UPDATE OF t
  `.execute(db);
  const byId = new Map<number, EtaInput>();
  for (const r of rows) {
    let input = byId.get(r.id);
    if (!input) {
      byId.set(r.id, (input = {
        travelId: r.id, deviceId: r.device_id, position: lastPosition(r),
        recentSpeedKmh: r.recent_speed === null ? null : Number(r.recent_speed), pending: [],
      }));
    }
    input.pending.push({
      seq: r.seq, latitude: r.center_lat, longitude: r.center_lng, geofenceName: r.geofence_name, expectedArrival: r.expected_arrival, delayed: r.delayed,
    });
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

/**
 * Marks waypoints delayed, once: returns those this call marked (still pending, not marked before), so
 * of two refreshes deciding the same delay at once only one logs it.
 */
export async function markDelayed(trx: Db, waypoints: Array<{ travelId: number; seq: number }>, at: Date): Promise<Array<{ travelId: number; seq: number }>> {
  if (waypoints.length === 0) return [];
  const { rows } = await sql<{ travel_id: number; seq: number }>`
    UPDATE travel_waypoints w SET delayed_at = ${at.toISOString()}::timestamptz
    FROM unnest(${waypoints.map((w) => w.travelId)}::int[], ${waypoints.map((w) => w.seq)}::int[]) AS d(travel_id, seq)
    WHERE w.travel_id = d.travel_id AND w.seq = d.seq AND w.status = 'pending' AND w.delayed_at IS NULL
    RETURNING w.travel_id, w.seq
  `.execute(trx);
  return rows.map((r) => ({ travelId: r.travel_id, seq: r.seq }));
}

/** Scheduled travels still to start, for rebuilding their start jobs. */
export async function scheduledTravels(db: Db): Promise<Array<{ id: number; startTime: Date }>> {
  const rows = await db.selectFrom('travels').select(['id', 'start_time']).where('status', '=', TravelStatus.Scheduled).execute();
  return rows.map((r) => ({ id: r.id, startTime: r.start_time }));
}
