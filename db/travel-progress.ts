import { sql } from 'kysely';
import type { Db } from './database.ts';
import { lastPosition, type EventPosition, type NewEvent } from '../domain/events/event-payloads.ts';
import { travelStarts, type StepTravel, type StepWaypoint, type TravelStart, type WaypointArrival } from '../domain/travels/travel-step.ts';
import { STARTING_WAYPOINT_NAME } from './travels.ts';
import { TravelStatus } from './schema.ts';

/**
 * Starts the Scheduled travels whose start time has come (all of them, or one):
 * In progress, waypoint 1 (`Current position`) Completed at the start time, the vehicle's last known
 * position kept as the starting point. A travel already started or cancelled is left alone (the due
 * ones are locked first, so of two callers the second finds them started), so the delayed job, the
 * periodic catch-up and an engine step (which starts its vehicles' own) can all start them safely. Returns the travels started and
 * their `travel.started` events, for the caller to log in the same transaction.
 */
export async function startDueTravels(
  trx: Db,
  filter: { travelId?: number } = {},
): Promise<{ started: Array<{ id: number; deviceId: number }>; events: NewEvent[] }> {
  const { rows } = await sql<TravelRow>`
    SELECT t.id, t.device_id, t.status, t.start_time, t.started_at, s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time
    FROM travels t LEFT JOIN device_states s ON s.device_id = t.device_id
    WHERE t.status = ${TravelStatus.Scheduled} AND t.start_time <= now()
      ${filter.travelId !== undefined ? sql`AND t.id = ${filter.travelId}` : sql``}
    ORDER BY t.id
    FOR UPDATE OF t
  `.execute(trx);
  const { starts, events } = travelStarts(rows.map((r) => stepTravel(r, [])));
  const started = new Set(await saveTravelStarts(trx, starts));
  const ordered = starts.map((s, i) => ({ id: s.travelId, event: events[i]! })).filter((s) => started.has(s.id));
  return { started: ordered.map((s) => ({ id: s.id, deviceId: s.event.deviceId! })), events: ordered.map((s) => s.event) };
}

interface TravelRow {
  id: number;
  device_id: number;
  status: number;
  start_time: Date;
  started_at: Date | null;
  latitude: number | null;
  longitude: number | null;
  speed_kmh: number | null;
  heading: number | null;
  fix_time: Date | null;
}

const stepTravel = (r: TravelRow, waypoints: StepWaypoint[]): StepTravel => ({
  id: r.id, deviceId: r.device_id, due: r.status === TravelStatus.Scheduled, startTime: r.start_time, startedAt: r.started_at,
  lastPosition: lastPosition(r), waypoints,
});

/**
 * The active travel of each of these vehicles, for an engine step: In progress, or Scheduled with its
 * start time come (the step starts it). Locked to the end of the transaction, in id order as the ETA
 * refresh and a cancel take them, so nothing else moves them while the step decides.
 */
export async function stepTravels(trx: Db, deviceIds: number[]): Promise<StepTravel[]> {
  if (deviceIds.length === 0) return [];
  const { rows } = await sql<TravelRow & {
    seq: number | null; geofence_id: number | null; waypoint_status: 'pending' | 'completed' | 'cancelled' | null; geofence_name: string | null;
    expected_arrival: Date | null;
  }>`
    SELECT t.id, t.device_id, t.status, t.start_time, t.started_at, s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time,
      w.seq, w.geofence_id, w.status AS waypoint_status, w.geofence_name, w.expected_arrival
    FROM travels t
    LEFT JOIN travel_waypoints w ON w.travel_id = t.id
    LEFT JOIN device_states s ON s.device_id = t.device_id
    WHERE t.device_id = ANY(${deviceIds}::int[])
      AND (t.status = ${TravelStatus.InProgress} OR (t.status = ${TravelStatus.Scheduled} AND t.start_time <= now()))
    ORDER BY t.id, w.seq
    FOR UPDATE OF t
  `.execute(trx);
  const byId = new Map<number, StepTravel>();
  for (const r of rows) {
    let travel = byId.get(r.id);
    if (!travel) byId.set(r.id, (travel = stepTravel(r, [])));
    if (r.seq === null) continue;
    travel.waypoints.push({
      seq: r.seq, geofenceId: r.geofence_id, status: r.waypoint_status!, geofenceName: r.geofence_name!, expectedArrival: r.expected_arrival!,
      starting: r.seq === 1 && r.geofence_name === STARTING_WAYPOINT_NAME,
    });
  }
  return [...byId.values()];
}

/** Starts travels: In progress from their start time, the starting waypoint completed then. Returns those started. */
export async function saveTravelStarts(trx: Db, starts: readonly TravelStart[]): Promise<number[]> {
  if (starts.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    WITH started AS (
      UPDATE travels t SET status = ${TravelStatus.InProgress}, started_at = t.start_time, start_latitude = u.lat, start_longitude = u.lng
      FROM unnest(${starts.map((s) => s.travelId)}::int[], ${starts.map((s) => s.position?.lat ?? null)}::float8[],
        ${starts.map((s) => s.position?.lng ?? null)}::float8[]) AS u(id, lat, lng)
      WHERE t.id = u.id AND t.status = ${TravelStatus.Scheduled}
      RETURNING t.id, t.start_time
    ), first_waypoint AS (
      UPDATE travel_waypoints w SET status = 'completed', arrived_at = started.start_time
      FROM started WHERE w.travel_id = started.id AND w.seq = 1 AND w.geofence_name = ${STARTING_WAYPOINT_NAME}
      RETURNING w.travel_id
    )
    SELECT id FROM started
  `.execute(trx);
  return rows.map((r) => r.id);
}

/**
 * Completes waypoints at their arrival times (a waypoint no longer pending is left alone), and the
 * travels whose last waypoint was reached, at that arrival.
 */
export async function saveArrivals(trx: Db, arrivals: readonly WaypointArrival[], completions: ReadonlyArray<{ travelId: number; at: Date }>): Promise<void> {
  if (arrivals.length > 0) {
    await sql`
      UPDATE travel_waypoints w SET status = 'completed', arrived_at = a.arrived_at, estimated_arrival = NULL
      FROM unnest(${arrivals.map((a) => a.travelId)}::int[], ${arrivals.map((a) => a.seq)}::int[],
        ${arrivals.map((a) => a.arrivedAt.toISOString())}::timestamptz[]) AS a(travel_id, seq, arrived_at)
      WHERE w.travel_id = a.travel_id AND w.seq = a.seq AND w.status = 'pending'
    `.execute(trx);
  }
  if (completions.length > 0) {
    await sql`
      UPDATE travels t SET status = ${TravelStatus.Completed}, completed_at = c.at
      FROM unnest(${completions.map((c) => c.travelId)}::int[], ${completions.map((c) => c.at.toISOString())}::timestamptz[]) AS c(id, at)
      WHERE t.id = c.id AND t.status = ${TravelStatus.InProgress}
    `.execute(trx);
  }
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
