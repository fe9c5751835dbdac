import { sql, type Selectable } from 'kysely';
import type { TripTotals } from '../domain/trips/trip-kpis.ts';
import type { Db } from './database.ts';
import type { StopsTable, TripsTable } from './schema.ts';

/** Trips and stops are reported when they start within [from, to]. */
export interface TripReportFilter {
  deviceIds: number[];
  from: Date;
  to: Date;
}

/** A trip row as stored, with its driver's name. */
export type TripRow = Omit<Selectable<TripsTable>, 'id' | 'address_due_at'> & { driver_name: string | null };

export type StopRow = Omit<Selectable<StopsTable>, 'id' | 'address_due_at'>;

/** One vehicle's totals over the range, as the KPIs read them (domain/trips/trip-kpis.ts). */
export interface VehicleTotals extends TripTotals {
  device_id: number;
}

/** Trips of the devices that start in the range, by device and start time; at most `limit`. */
export async function tripsInRange(db: Db, f: TripReportFilter, limit: number): Promise<TripRow[]> {
  const { rows } = await sql<TripRow>`
    SELECT t.device_id, t.start_time, t.end_time, t.last_fix_time, t.start_lat, t.start_lng, t.end_lat, t.end_lng, t.start_geofence, t.end_geofence,
      t.distance_m, t.driving_s, t.idle_s, t.overspeed_s, t.max_speed_kmh, t.harsh_events, t.driver_id, dr.name AS driver_name,
      t.start_address, t.end_address
    FROM trips t LEFT JOIN drivers dr ON dr.id = t.driver_id
    WHERE t.device_id = ANY(${f.deviceIds}::int[]) AND t.start_time >= ${f.from} AND t.start_time <= ${f.to}
    ORDER BY t.device_id, t.start_time
    LIMIT ${limit}
  `.execute(db);
  return rows;
}

/** Stops of the devices that start in the range, by device and start time; at most `limit`. */
export async function stopsInRange(db: Db, f: TripReportFilter, limit: number): Promise<StopRow[]> {
  const { rows } = await sql<StopRow>`
    SELECT device_id, start_time, end_time, last_fix_time, lat, lng, geofence, engine_idle_s, address
    FROM stops
    WHERE device_id = ANY(${f.deviceIds}::int[]) AND start_time >= ${f.from} AND start_time <= ${f.to}
    ORDER BY device_id, start_time
    LIMIT ${limit}
  `.execute(db);
  return rows;
}

/** Per device, the totals of its trips and stops that start in the range (zeros for a device without any). */
export async function vehicleTotals(db: Db, f: TripReportFilter): Promise<VehicleTotals[]> {
  const { rows } = await sql<VehicleTotals>`
    SELECT d.id AS device_id, coalesce(t.trip_count, 0)::int AS trip_count, coalesce(t.distance_m, 0) AS distance_m,
      coalesce(t.driving_s, 0) AS driving_s, coalesce(t.idle_s, 0) AS trip_idle_s, coalesce(s.idle_s, 0) AS stop_idle_s,
      coalesce(t.overspeed_s, 0) AS overspeed_s, t.max_speed_kmh
    FROM unnest(${f.deviceIds}::int[]) AS d(id)
    LEFT JOIN LATERAL (
      SELECT count(*) AS trip_count, sum(distance_m) AS distance_m, sum(driving_s) AS driving_s, sum(idle_s) AS idle_s,
        sum(overspeed_s) AS overspeed_s, max(max_speed_kmh) AS max_speed_kmh
      FROM trips WHERE device_id = d.id AND start_time >= ${f.from} AND start_time <= ${f.to}
    ) t ON true
    LEFT JOIN LATERAL (
      SELECT sum(engine_idle_s) AS idle_s FROM stops WHERE device_id = d.id AND start_time >= ${f.from} AND start_time <= ${f.to}
    ) s ON true
  `.execute(db);
  return rows;
}
