import { sql } from 'kysely';
import type { Db } from './database.ts';

/** One decoded fix with the telemetry that the status endpoints show. */
export interface DeviceFix {
  deviceId: number;
  fixTime: Date;
  valid: boolean;
  latitude: number;
  longitude: number;
  altitude?: number | null;
  speedKmh?: number | null;
  heading?: number | null;
  satellites?: number | null;
  ignition?: boolean | null;
  motion?: boolean | null;
  odometerKm?: number | null;
  powerVoltage?: number | null;
  backupVoltage?: number | null;
  signalStrength?: number | null;
  connectionType?: string | null;
  address?: string | null;
  driverId?: string | null;
  attributes?: Record<string, unknown>;
}

const FIX_COLUMNS = [
  'fix_time', 'valid', 'latitude', 'longitude', 'altitude', 'speed_kmh', 'heading', 'satellites', 'ignition', 'motion',
  'odometer_km', 'power_voltage', 'backup_voltage', 'signal_strength', 'connection_type', 'address', 'driver_id', 'attributes',
] as const;

/**
 * Stores a fix as the device's latest state. The state only moves forward in fix time: an older fix
 * (a tracker unloading its buffer) leaves it as it is, but still counts as a report.
 */
export async function recordDeviceFix(db: Db, fix: DeviceFix, receivedAt: Date = new Date()): Promise<void> {
  const values = {
    device_id: fix.deviceId,
    fix_time: fix.fixTime,
    last_report_at: receivedAt,
    valid: fix.valid,
    latitude: fix.latitude,
    longitude: fix.longitude,
    altitude: fix.altitude ?? null,
    speed_kmh: fix.speedKmh ?? null,
    heading: fix.heading ?? null,
    satellites: fix.satellites ?? null,
    ignition: fix.ignition ?? null,
    motion: fix.motion ?? null,
    odometer_km: fix.odometerKm ?? null,
    power_voltage: fix.powerVoltage ?? null,
    backup_voltage: fix.backupVoltage ?? null,
    signal_strength: fix.signalStrength ?? null,
    connection_type: fix.connectionType ?? null,
    address: fix.address ?? null,
    driver_id: fix.driverId ?? null,
    attributes: JSON.stringify(fix.attributes ?? {}),
  };
  const newer = sql`excluded.fix_time > device_states.fix_time`;
  const set: Record<string, unknown> = {
    last_report_at: sql`greatest(device_states.last_report_at, excluded.last_report_at)`,
  };
  for (const column of FIX_COLUMNS) {
    set[column] = sql`CASE WHEN ${newer} THEN excluded.${sql.ref(column)} ELSE device_states.${sql.ref(column)} END`;
  }
  await db
    .insertInto('device_states')
    .values(values)
    .onConflict((oc) => oc.column('device_id').doUpdateSet(set as never))
    .execute();
}
