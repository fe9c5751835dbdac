import { sql, type RawBuilder } from 'kysely';
import { attributesJson } from './attributes-json.ts';
import { finiteOrNull, int4OrNull } from './column-values.ts';
import { inTransaction, type Db } from './database.ts';
import { applyReportsSql, insertReportsSql } from './device-reports.ts';
import { appendEventsSql } from './event-log.ts';
import { upsertListingLateFixes, type RunStatement } from './late-fixes.ts';
import { POSITION_COLUMN_LIST, positionArrays } from './position-columns.ts';
import { reportAlarmEvents } from './vehicle-events.ts';
import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';

const column = <T>(rows: StoredFix[], pick: (f: StoredFix) => T) => rows.map(pick);
const finite = finiteOrNull;
const whole = int4OrNull;

/** The history rows of a batch; a fix already stored (same device and fix time) is skipped. */
export function insertFixesSkippingStored(fixes: StoredFix[]): RawBuilder<unknown> {
  return sql`
    INSERT INTO positions (${sql.raw(POSITION_COLUMN_LIST)})
    SELECT * FROM unnest(${positionArrays(fixes)})
    ON CONFLICT (device_id, fix_time) DO NOTHING
  `;
}

/**
 * The statements of one batch around its positions, in order: move each device's latest state (which
 * locks its row) and list the late fixes, [the positions], apply and keep the reports, and log the
 * alarms the reports carry. Both writers run them in one transaction; they differ only in how the
 * positions go in.
 *
 * A report has no fix for the engine to read after a cursor, so its alarm is logged here, with the
 * report: the batch's commit is the moment it is known. The log's lock is taken last, and only by a
 * batch that holds an alarm (a fix's alarm is the engine's, in fix order with the rest of the fix).
 */
export function batchStatements(fixes: StoredFix[], reports: StoredReport[]): { before(run: RunStatement): Promise<void>; after: RawBuilder<unknown>[] } {
  const after: RawBuilder<unknown>[] = [];
  if (reports.length > 0) {
    after.push(applyReportsSql(reports));
    const kept = insertReportsSql(reports);
    if (kept) after.push(kept);
    after.push(...appendEventsSql(reportAlarmEvents(reports)));
  }
  return {
    before: async (run) => {
      if (fixes.length > 0) await upsertListingLateFixes(run, upsertLatestSql(newestPerDevice(fixes)), fixes);
    },
    after,
  };
}

/**
 * Writes one batch of fixes from many connections in one transaction: the history (a fix already
 * stored, same device and fix time, is skipped) and each device's latest state, which only moves
 * forward in fix time. Arrays through `unnest` make it one statement per table whatever the batch
 * size. The embedded database's writer; PostgreSQL's streams the history with COPY (position-copy.ts).
 */
export async function storeFixBatch(db: Db, fixes: StoredFix[], reports: StoredReport[] = []): Promise<void> {
  if (fixes.length === 0 && reports.length === 0) return;
  const { before, after } = batchStatements(fixes, reports);
  await inTransaction(db, async (trx) => {
    await before(async (statement) => (await statement.execute(trx)).rows);
    if (fixes.length > 0) await insertFixesSkippingStored(fixes).execute(trx);
    for (const statement of after) await statement.execute(trx);
  });
}

/** Each device's newest fix of a batch, in device order so concurrent batches lock state rows alike. */
export function newestPerDevice(fixes: StoredFix[]): StoredFix[] {
  const newest = new Map<number, StoredFix>();
  for (const f of fixes) {
    const held = newest.get(f.deviceId);
    if (!held || held.fixTime < f.fixTime || (held.fixTime.getTime() === f.fixTime.getTime() && held.receivedAt < f.receivedAt)) newest.set(f.deviceId, f);
  }
  return [...newest.values()].sort((a, b) => a.deviceId - b.deviceId);
}

// Not `address`: the engine's address keeper writes it after the commit, and a newer fix keeps it
// until the keeper finds the vehicle has moved beyond the reuse distance.
const STATE_COLUMNS = [
  'fix_time', 'valid', 'latitude', 'longitude', 'altitude', 'speed_kmh', 'heading', 'satellites', 'ignition', 'motion',
  'odometer_km', 'power_voltage', 'backup_voltage', 'signal_strength', 'connection_type', 'driver_id', 'attributes',
] as const;

/**
 * Kept from earlier reports when a newer fix does not say them: trackers report their battery, signal
 * and network in some messages only (a GT06 between its heartbeats), and status shows the last known.
 */
const LAST_KNOWN_COLUMNS: ReadonlySet<string> = new Set(['backup_voltage', 'signal_strength', 'connection_type']);

/** The latest state per device; an older fix than the stored one only moves `last_report_at`. */
export async function upsertLatest(db: Db, fixes: StoredFix[]): Promise<void> {
  if (fixes.length > 0) await upsertLatestSql(fixes).execute(db);
}

export function upsertLatestSql(fixes: StoredFix[]): RawBuilder<unknown> {
  const newer = sql`(device_states.fix_time IS NULL OR excluded.fix_time > device_states.fix_time)`;
  const updates = STATE_COLUMNS.map((c) => {
    const value = LAST_KNOWN_COLUMNS.has(c) ? sql`coalesce(excluded.${sql.ref(c)}, device_states.${sql.ref(c)})` : sql`excluded.${sql.ref(c)}`;
    return sql`${sql.ref(c)} = CASE WHEN ${newer} THEN ${value} ELSE device_states.${sql.ref(c)} END`;
  });
  return sql`
    INSERT INTO device_states (device_id, last_report_at, fix_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites,
      ignition, motion, odometer_km, power_voltage, backup_voltage, signal_strength, connection_type, address, driver_id, attributes)
    SELECT * FROM unnest(
      ${column(fixes, (f) => f.deviceId)}::int[], ${column(fixes, (f) => f.receivedAt.toISOString())}::timestamptz[],
      ${column(fixes, (f) => f.fixTime.toISOString())}::timestamptz[], ${column(fixes, (f) => f.valid)}::bool[],
      ${column(fixes, (f) => f.latitude)}::float8[], ${column(fixes, (f) => f.longitude)}::float8[],
      ${column(fixes, (f) => finite(f.altitude))}::float8[], ${column(fixes, (f) => finite(f.speedKmh))}::float8[],
      ${column(fixes, (f) => finite(f.heading))}::float8[], ${column(fixes, (f) => whole(f.satellites))}::int[],
      ${column(fixes, (f) => f.ignition ?? null)}::bool[], ${column(fixes, (f) => f.motion ?? null)}::bool[],
      ${column(fixes, (f) => f.odometerKm ?? null)}::float8[], ${column(fixes, (f) => f.powerVoltage ?? null)}::float8[],
      ${column(fixes, (f) => finite(f.backupVoltage))}::float8[], ${column(fixes, (f) => whole(f.signalStrength))}::int[],
      ${column(fixes, (f) => f.connectionType ?? null)}::text[], ${column(fixes, (f) => f.address ?? null)}::text[],
      ${column(fixes, (f) => f.driverId ?? null)}::text[], ${column(fixes, attributesJson)}::json[]
    )
    ON CONFLICT (device_id) DO UPDATE SET
      last_report_at = greatest(device_states.last_report_at, excluded.last_report_at),
      previous_fix_time = device_states.fix_time,
      ${sql.join(updates)}
  `;
}
