import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { SeededFleet } from './seeded-fleet.ts';
import type { SeededTracker } from './seeded-tracker.ts';

/** One event of the log as the suite compares it. */
export interface LoggedEvent {
  id: string;
  type: string;
  imei: string | null;
  occurredAt: Date;
  recordedAt: Date;
  data: any;
}

/**
 * What identifies an event across two runs of the same fleet: its kind, vehicle, time and what it is
 * about (never ids or server times). Undefined for the kinds stamped with the server's clock, which
 * no two runs share: presence (`device.online`/`offline`, one pair per connection, so a fault that
 * reconnects trackers adds some by design), `travel.delayed` (an ETA refresh's time) and the sweep's
 * `Inactive`; and for the start of the parked van's travel, whose start time is the run's own clock.
 */
export function eventKey(e: LoggedEvent, parkedImei: string): string | undefined {
  const at = e.occurredAt.toISOString();
  const d = e.data ?? {};
  switch (e.type) {
    case 'device.online':
    case 'device.offline':
    case 'travel.delayed':
      return undefined;
    case 'vehicle.status.changed':
      return d.to === 'Inactive' ? undefined : `${e.type} ${e.imei} ${at} to ${d.to}`;
    case 'vehicle.geofence.enter':
    case 'vehicle.geofence.exit':
      return `${e.type} ${e.imei} ${at} ${d.geofence?.name}`;
    case 'travel.waypoint.arrived':
      return `${e.type} ${e.imei} ${at} #${d.waypoint?.order} ${d.waypoint?.geofence}`;
    case 'travel.started':
      return e.imei === parkedImei ? `${e.type} ${e.imei} (its own start time)` : `${e.type} ${e.imei} ${at}`;
    case 'vehicle.overspeed':
      return `${e.type} ${e.imei} ${at} ${d.speedKmh}/${d.limitKmh}`;
    default:
      return `${e.type} ${e.imei} ${at}`;
  }
}

export async function loggedEvents(db: Db, accountId: number): Promise<LoggedEvent[]> {
  const { rows } = await sql<{ id: string; type: string; imei: string | null; occurred_at: Date; recorded_at: Date; data: any }>`
    SELECT e.id::text AS id, e.type, d.imei, e.occurred_at, e.recorded_at, e.data
    FROM events e LEFT JOIN devices d ON d.id = e.device_id
    WHERE e.account_id = ${accountId} ORDER BY e.id
  `.execute(db);
  return rows.map((r) => ({ id: r.id, type: r.type, imei: r.imei, occurredAt: r.occurred_at, recordedAt: r.recorded_at, data: r.data }));
}

/** Stored positions per IMEI (fix times in ms), and how many rows repeat a (device, fix time) already stored. */
export async function storedPositions(db: Db, accountId: number): Promise<{ byImei: Map<string, Set<number>>; rows: number; repeated: number }> {
  const { rows } = await sql<{ imei: string; t: number }>`
    SELECT d.imei, (extract(epoch FROM p.fix_time) * 1000)::float8 AS t
    FROM positions p JOIN devices d ON d.id = p.device_id WHERE d.account_id = ${accountId}
  `.execute(db);
  const byImei = new Map<string, Set<number>>();
  let repeated = 0;
  for (const r of rows) {
    let set = byImei.get(r.imei);
    if (!set) byImei.set(r.imei, (set = new Set()));
    if (set.has(Math.round(r.t))) repeated++;
    set.add(Math.round(r.t));
  }
  return { byImei, rows: rows.length, repeated };
}

/** Fixes a tracker was told were stored that are not in positions. */
export function ackedButMissing(trackers: SeededTracker[], stored: Map<string, Set<number>>): Array<{ imei: string; fixTime: string }> {
  const lost: Array<{ imei: string; fixTime: string }> = [];
  for (const t of trackers) {
    const set = stored.get(t.imei) ?? new Set<number>();
    t.ackedAt.forEach((at, k) => {
      const time = t.vehicle.fixes[k]!.time;
      if (at !== undefined && !set.has(time.getTime())) lost.push({ imei: t.imei, fixTime: time.toISOString() });
    });
  }
  return lost;
}

const STATUS_NAMES = ['Scheduled', 'In progress', 'Completed', 'Cancelled'];

export interface TravelState {
  vehicle: string;
  status: string;
  waypoints: string[];
}

/** Each travel's status and waypoints (order, place, status, arrival): what "advanced as in the baseline" compares. */
export async function travelStates(db: Db, accountId: number): Promise<TravelState[]> {
  const { rows } = await sql<{ name: string; status: number; seq: number; geofence_name: string; wstatus: string; arrived_at: Date | null }>`
    SELECT d.name, t.status, w.seq, w.geofence_name, w.status AS wstatus, w.arrived_at
    FROM travels t JOIN devices d ON d.id = t.device_id JOIN travel_waypoints w ON w.travel_id = t.id
    WHERE t.account_id = ${accountId} ORDER BY d.name, w.seq
  `.execute(db);
  const byVehicle = new Map<string, TravelState>();
  for (const r of rows) {
    let travel = byVehicle.get(r.name);
    if (!travel) byVehicle.set(r.name, (travel = { vehicle: r.name, status: STATUS_NAMES[r.status] ?? String(r.status), waypoints: [] }));
    // Waypoint 1's arrival is the start time: the parked van's is its run's own clock.
    const arrived = r.seq === 1 ? (r.arrived_at ? 'started' : '-') : (r.arrived_at?.toISOString() ?? '-');
    travel.waypoints.push(`${r.seq} ${r.geofence_name} ${r.wstatus} ${arrived}`);
  }
  return [...byVehicle.values()];
}

/** The parked van's travel: started by the engine's schedules, and when its ETA was last refreshed. */
export async function parkedTravel(db: Db, travelId: number): Promise<{ status: number; estimatedAt: Date | null }> {
  const { rows } = await sql<{ status: number; estimated_at: Date | null }>`
    SELECT t.status, max(w.estimated_at) AS estimated_at FROM travels t JOIN travel_waypoints w ON w.travel_id = t.id
    WHERE t.id = ${travelId} GROUP BY t.status
  `.execute(db);
  return { status: rows[0]!.status, estimatedAt: rows[0]!.estimated_at };
}

/** The engine's cursor per IMEI: the newest fix it has evaluated in order. */
export async function engineCursors(db: Db, accountId: number): Promise<Map<string, number>> {
  const { rows } = await sql<{ imei: string; t: number | null }>`
    SELECT d.imei, (extract(epoch FROM e.cursor_fix_time) * 1000)::float8 AS t
    FROM devices d JOIN device_engine_states e ON e.device_id = d.id WHERE d.account_id = ${accountId}
  `.execute(db);
  return new Map(rows.filter((r) => r.t !== null).map((r) => [r.imei, Math.round(r.t!)]));
}

/** The fleet's timelines as the comparison reads them: the newest fix time of each vehicle. */
export function lastFixTimes(fleet: SeededFleet): Map<string, number> {
  return new Map([...fleet.vehicles, fleet.parked].map((v) => [v.imei, v.fixes[v.fixes.length - 1]!.time.getTime()]));
}

/** Keys of `a` not matched one for one in `b` (a multiset difference). */
export function unmatched(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const k of b) left.set(k, (left.get(k) ?? 0) + 1);
  const out: string[] = [];
  for (const k of a) {
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else out.push(k);
  }
  return out;
}
