import { sql } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';

/** What the engine has counted, over `device_engine_states e` (0 before it counted anything). */
const countedM = sql`coalesce((e.accumulators->>'odometerM')::float8, 0)`;
const countedS = sql`coalesce((e.accumulators->>'engineS')::float8, 0)`;

/**
 * A vehicle's odometer and engine hours as SQL, over `device_states s`, `device_engine_states e` and
 * `vehicle_baselines b` joined by device (docs/engine.md, "Odometer and engine hours"). With a
 * baseline, the installer's figure plus what the engine counted since it was set; without, what the
 * engine counted; null before it counted anything.
 */
export const serverOdometerKmSql = sql<number | null>`CASE
  WHEN b.odometer_km IS NOT NULL THEN b.odometer_km + (${countedM} - b.odometer_from_m) / 1000
  WHEN e.accumulators IS NOT NULL THEN ${countedM} / 1000 END`;

export const engineHoursSql = sql<number | null>`CASE
  WHEN b.engine_hours IS NOT NULL THEN b.engine_hours + (${countedS} - b.engine_from_s) / 3600
  WHEN e.accumulators IS NOT NULL THEN ${countedS} / 3600 END`;

/**
 * The odometer a vehicle's status shows: the tracker's own, on its newest fix, when it reports one
 * (0 is no reading: many trackers send 0 when theirs is off); else the server's.
 */
export const shownOdometerKmSql = sql<number | null>`coalesce(nullif(s.odometer_km, 0), ${serverOdometerKmSql})`;

export interface VehicleAccumulators {
  imei: string;
  /** The tracker's own odometer on its newest fix; null when it reports none. */
  trackerOdometerKm: number | null;
  serverOdometerKm: number | null;
  engineHours: number | null;
  odometerBaselineKm: number | null;
  odometerSetAt: Date | null;
  engineBaselineHours: number | null;
  engineSetAt: Date | null;
}

/** One visible vehicle's accumulators; undefined when the scope does not see it. */
export async function visibleVehicleAccumulators(db: Db, scope: AccessScope, imei: string): Promise<VehicleAccumulators | undefined> {
  const { rows } = await sql<{
    imei: string; tracker_odometer_km: number | null; server_odometer_km: number | null; engine_hours: number | null;
    odometer_baseline_km: number | null; odometer_set_at: Date | null; engine_baseline_hours: number | null; engine_set_at: Date | null;
  }>`
    SELECT d.imei, nullif(s.odometer_km, 0) AS tracker_odometer_km, ${serverOdometerKmSql} AS server_odometer_km, ${engineHoursSql} AS engine_hours,
      b.odometer_km AS odometer_baseline_km, b.odometer_set_at, b.engine_hours AS engine_baseline_hours, b.engine_set_at
    FROM devices d
    JOIN user_devices ud ON ud.device_id = d.id AND ud.user_id = ${scope.userId}
    LEFT JOIN device_states s ON s.device_id = d.id
    LEFT JOIN device_engine_states e ON e.device_id = d.id
    LEFT JOIN vehicle_baselines b ON b.device_id = d.id
    WHERE d.imei = ${imei} AND d.account_id = ${scope.accountId} AND d.mode = ${scope.mode}
  `.execute(db);
  const r = rows[0];
  if (!r) return undefined;
  return {
    imei: r.imei, trackerOdometerKm: r.tracker_odometer_km, serverOdometerKm: r.server_odometer_km, engineHours: r.engine_hours,
    odometerBaselineKm: r.odometer_baseline_km, odometerSetAt: r.odometer_set_at, engineBaselineHours: r.engine_baseline_hours, engineSetAt: r.engine_set_at,
  };
}

export interface VehicleBaseline {
  odometerKm?: number;
  engineHours?: number;
}

/**
 * Sets a visible vehicle's odometer and/or engine hours as they are now, remembering what the engine
 * had counted at this moment: the engine state is locked first, so a step evaluating the vehicle
 * meanwhile is either wholly before the baseline or wholly after it. A figure not given keeps its
 * baseline. Undefined when the scope does not see the vehicle.
 */
export async function setVehicleBaseline(db: Db, scope: AccessScope, imei: string, baseline: VehicleBaseline): Promise<VehicleAccumulators | undefined> {
  return inTransaction(db, async (trx) => {
    const device = await trx
      .selectFrom('devices as d')
      .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
      .select('d.id')
      .where('d.imei', '=', imei)
      .where('d.account_id', '=', scope.accountId)
      .where('d.mode', '=', scope.mode)
      .executeTakeFirst();
    if (!device) return undefined;
    await sql`INSERT INTO device_engine_states (device_id) VALUES (${device.id}) ON CONFLICT (device_id) DO NOTHING`.execute(trx);
    const { rows } = await sql<{ odometer_m: number; engine_s: number }>`
      SELECT ${countedM} AS odometer_m, ${countedS} AS engine_s FROM device_engine_states e WHERE e.device_id = ${device.id} FOR UPDATE
    `.execute(trx);
    const counted = rows[0]!;
    const odometer = baseline.odometerKm !== undefined;
    const engine = baseline.engineHours !== undefined;
    await sql`
      INSERT INTO vehicle_baselines AS b (device_id, odometer_km, odometer_from_m, odometer_set_at, engine_hours, engine_from_s, engine_set_at)
      VALUES (${device.id}, ${baseline.odometerKm ?? null}, ${counted.odometer_m}, ${odometer ? sql`now()` : null},
        ${baseline.engineHours ?? null}, ${counted.engine_s}, ${engine ? sql`now()` : null})
      ON CONFLICT (device_id) DO UPDATE SET
        odometer_km = CASE WHEN ${odometer}::bool THEN excluded.odometer_km ELSE b.odometer_km END,
        odometer_from_m = CASE WHEN ${odometer}::bool THEN excluded.odometer_from_m ELSE b.odometer_from_m END,
        odometer_set_at = CASE WHEN ${odometer}::bool THEN excluded.odometer_set_at ELSE b.odometer_set_at END,
        engine_hours = CASE WHEN ${engine}::bool THEN excluded.engine_hours ELSE b.engine_hours END,
        engine_from_s = CASE WHEN ${engine}::bool THEN excluded.engine_from_s ELSE b.engine_from_s END,
        engine_set_at = CASE WHEN ${engine}::bool THEN excluded.engine_set_at ELSE b.engine_set_at END
    `.execute(trx);
    return visibleVehicleAccumulators(trx, scope, imei);
  });
}
