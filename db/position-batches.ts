import { sql } from 'kysely';
import { inTransaction, type Db } from './database.ts';
import type { DeviceFix } from './device-states.ts';

export interface StoredFix extends DeviceFix {
  receivedAt: Date;
}

/** Telemetry without a fix: it moves the device's last report time and nothing else. */
export interface StoredReport {
  deviceId: number;
  receivedAt: Date;
}

const column = <T>(rows: StoredFix[], pick: (f: StoredFix) => T) => rows.map(pick);

/**
 * Writes one batch of fixes from many connections in one transaction: the history (a fix already
 * stored, same device and fix time, is skipped) and each device's latest state, which only moves
 * forward in fix time. Arrays through `unnest` make it one statement per table whatever the batch size.
 */
export async function storeFixBatch(db: Db, fixes: StoredFix[], reports: StoredReport[] = []): Promise<void> {
  if (fixes.length === 0 && reports.length === 0) return;
  await inTransaction(db, async (trx) => {
    if (fixes.length > 0) {
      await sql`
        INSERT INTO positions (device_id, fix_time, server_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites, ignition, attributes)
        SELECT * FROM unnest(
          ${column(fixes, (f) => f.deviceId)}::int[], ${column(fixes, (f) => f.fixTime.toISOString())}::timestamptz[],
          ${column(fixes, (f) => f.receivedAt.toISOString())}::timestamptz[], ${column(fixes, (f) => f.valid)}::bool[],
          ${column(fixes, (f) => f.latitude)}::float8[], ${column(fixes, (f) => f.longitude)}::float8[],
          ${column(fixes, (f) => f.altitude ?? null)}::float8[], ${column(fixes, (f) => f.speedKmh ?? null)}::float8[],
          ${column(fixes, (f) => f.heading ?? null)}::float8[], ${column(fixes, (f) => f.satellites ?? null)}::int[],
          ${column(fixes, (f) => f.ignition ?? null)}::bool[], ${column(fixes, (f) => JSON.stringify(f.attributes ?? {}))}::jsonb[]
        )
        ON CONFLICT (device_id, fix_time) DO NOTHING
      `.execute(trx);
      await upsertLatest(trx, newestPerDevice(fixes));
    }
    if (reports.length > 0) {
      const latest = new Map<number, Date>();
      for (const r of reports) if ((latest.get(r.deviceId)?.getTime() ?? 0) < r.receivedAt.getTime()) latest.set(r.deviceId, r.receivedAt);
      await sql`
        UPDATE device_states s SET last_report_at = greatest(s.last_report_at, r.at)
        FROM unnest(${[...latest.keys()]}::int[], ${[...latest.values()].map((d) => d.toISOString())}::timestamptz[]) AS r(device_id, at)
        WHERE s.device_id = r.device_id
      `.execute(trx);
    }
  });
}

function newestPerDevice(fixes: StoredFix[]): StoredFix[] {
  const newest = new Map<number, StoredFix>();
  for (const f of fixes) {
    const held = newest.get(f.deviceId);
    if (!held || held.fixTime < f.fixTime || (held.fixTime.getTime() === f.fixTime.getTime() && held.receivedAt < f.receivedAt)) newest.set(f.deviceId, f);
  }
  return [...newest.values()];
}

const STATE_COLUMNS = [
  'fix_time', 'valid', 'latitude', 'longitude', 'altitude', 'speed_kmh', 'heading', 'satellites', 'ignition', 'motion',
  'odometer_km', 'power_voltage', 'backup_voltage', 'signal_strength', 'connection_type', 'address', 'driver_id', 'attributes',
] as const;

/** The latest state per device; an older fix than the stored one only moves `last_report_at`. */
export async function upsertLatest(db: Db, fixes: StoredFix[]): Promise<void> {
  if (fixes.length === 0) return;
  const newer = sql`excluded.fix_time > device_states.fix_time`;
  const updates = STATE_COLUMNS.map(
    (c) => sql`${sql.ref(c)} = CASE WHEN ${newer} THEN excluded.${sql.ref(c)} ELSE device_states.${sql.ref(c)} END`,
  );
  await sql`
    INSERT INTO device_states (device_id, last_report_at, fix_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites,
      ignition, motion, odometer_km, power_voltage, backup_voltage, signal_strength, connection_type, address, driver_id, attributes)
    SELECT * FROM unnest(
      ${column(fixes, (f) => f.deviceId)}::int[], ${column(fixes, (f) => f.receivedAt.toISOString())}::timestamptz[],
      ${column(fixes, (f) => f.fixTime.toISOString())}::timestamptz[], ${column(fixes, (f) => f.valid)}::bool[],
      ${column(fixes, (f) => f.latitude)}::float8[], ${column(fixes, (f) => f.longitude)}::float8[],
      ${column(fixes, (f) => f.altitude ?? null)}::float8[], ${column(fixes, (f) => f.speedKmh ?? null)}::float8[],
      ${column(fixes, (f) => f.heading ?? null)}::float8[], ${column(fixes, (f) => f.satellites ?? null)}::int[],
      ${column(fixes, (f) => f.ignition ?? null)}::bool[], ${column(fixes, (f) => f.motion ?? null)}::bool[],
      ${column(fixes, (f) => f.odometerKm ?? null)}::float8[], ${column(fixes, (f) => f.powerVoltage ?? null)}::float8[],
      ${column(fixes, (f) => f.backupVoltage ?? null)}::float8[], ${column(fixes, (f) => f.signalStrength ?? null)}::int[],
      ${column(fixes, (f) => f.connectionType ?? null)}::text[], ${column(fixes, (f) => f.address ?? null)}::text[],
      ${column(fixes, (f) => f.driverId ?? null)}::text[], ${column(fixes, (f) => JSON.stringify(f.attributes ?? {}))}::jsonb[]
    )
    ON CONFLICT (device_id) DO UPDATE SET
      last_report_at = greatest(device_states.last_report_at, excluded.last_report_at),
      ${sql.join(updates)}
  `.execute(db);
}
