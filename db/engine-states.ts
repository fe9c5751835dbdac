import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { DeviceMode } from './schema.ts';
import type { PendingCrossing } from '../domain/geofences/pending-crossing.ts';
import type { EngineFix, EngineState, EngineStateUpdate } from '../domain/engine-step/engine-state.ts';
import type { EngineStepInput } from '../domain/engine-step/evaluate-engine-step.ts';
import { driverKeys } from '../domain/drivers/driver-step.ts';
import { driverSnapshot } from './driver-assignments.ts';
import { stepTravels } from './travel-progress.ts';
import { finiteOrNull } from './column-values.ts';
import type { StoredFix } from '../domain/stored-rows.ts';

/**
 * Locks the engine state of each device that has a fix past its cursor or a listed late fix (creating the state on first
 * sight), in device order so two workers given overlapping devices wait for each other instead of
 * deadlocking. Held until the transaction ends: whoever holds it is the only one evaluating that
 * device. A device whose newest stored fix is not past its cursor has nothing to evaluate (an older
 * arrival never moves the state), so it is left alone: under load, when signals for the same devices
 * pile up, a later job costs one join instead of a search of each device's history. The condition is
 * checked again after waiting for a lock, on the state as the previous holder committed it.
 */
export async function lockEngineStates(trx: Db, deviceIds: number[]): Promise<EngineState[]> {
  const ids = [...new Set(deviceIds)].sort((a, b) => a - b);
  await sql`
    INSERT INTO device_engine_states (device_id)
    SELECT d.id FROM devices d WHERE d.id = ANY(${ids}::int[]) ORDER BY d.id
    ON CONFLICT (device_id) DO NOTHING
  `.execute(trx);
  const { rows } = await sql<{
    device_id: number; account_id: number; mode: DeviceMode; cursor_fix_time: Date | null; inside: number[]; pending: PendingCrossing[]; status: string | null; has_late: boolean;
    ignition: boolean | null; overspeed: boolean; speed_limit_kmh: number | null; segment: Record<string, unknown> | null;
    accumulators: Record<string, unknown> | null;
    driving: Record<string, unknown> | null;
    fuel: Record<string, unknown> | null; fuel_tank_litres: number | null;
    address: string | null; address_latitude: number | null; address_longitude: number | null;
  }>`
    SELECT s.device_id, d.account_id, d.mode, s.cursor_fix_time, s.inside, s.pending, s.status, late.has_late,
      s.ignition, s.overspeed, coalesce(d.speed_limit_kmh, a.speed_limit_kmh) AS speed_limit_kmh, s.segment, s.accumulators, s.driving,
      s.fuel, d.fuel_tank_litres,
      latest.address, latest.address_latitude, latest.address_longitude
    FROM device_engine_states s
    JOIN devices d ON d.id = s.device_id
    JOIN accounts a ON a.id = d.account_id
    JOIN device_states latest ON latest.device_id = s.device_id
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM late_fixes l WHERE l.device_id = s.device_id) AS has_late) late
    WHERE s.device_id = ANY(${ids}::int[])
      AND (latest.fix_time > coalesce(s.cursor_fix_time, '-infinity'::timestamptz) OR late.has_late)
    ORDER BY s.device_id
    FOR UPDATE OF s
  `.execute(trx);
  return rows.map((r) => ({
    deviceId: r.device_id, accountId: r.account_id, mode: r.mode, cursor: r.cursor_fix_time, inside: r.inside, pending: r.pending, status: r.status, hasLateFixes: r.has_late,
    ignition: r.ignition, overspeed: r.overspeed, speedLimitKmh: r.speed_limit_kmh, segment: r.segment, accumulators: r.accumulators, driving: r.driving,
    fuel: r.fuel, fuelTankLitres: r.fuel_tank_litres,
    knownAddress: r.address === null || r.address_latitude === null || r.address_longitude === null
      ? null : { address: r.address, latitude: r.address_latitude, longitude: r.address_longitude },
  }));
}

/** Each device's fixes after its cursor, oldest first, at most `perDevice` of them. */
export async function fixesAfterCursors(trx: Db, deviceIds: number[], perDevice: number): Promise<EngineFix[]> {
  const { rows } = await sql<{
    device_id: number; fix_time: Date; valid: boolean; latitude: number; longitude: number; speed_kmh: number | null; heading: number | null; ignition: boolean | null;
    alarm: string | null; odometer_m: number | null; driver: string | null; fuel_percent: number | null; fuel_litres: number | null;
  }>`
    SELECT s.device_id, p.fix_time, p.valid, p.latitude, p.longitude, p.speed_kmh, p.heading, p.ignition, p.alarm, p.odometer_m, p.driver, p.fuel_percent, p.fuel_litres
    FROM device_engine_states s
    CROSS JOIN LATERAL (
      SELECT fix_time, valid, latitude, longitude, speed_kmh, heading, ignition, a->>'alarm' AS alarm,
        -- jsonb_typeof: a decoder that wrote a non-number (never expected) yields null, not a failed cast.
        CASE WHEN jsonb_typeof(a->'odometer') = 'number' THEN (a->>'odometer')::float8 END AS odometer_m,
        coalesce(a->>'driverUniqueId', a->>'driverLicense') AS driver,
        -- The fuel level: percent (fuel) and litres (fuelVolume), as the decoders write them (docs/trackers.md).
        CASE WHEN jsonb_typeof(a->'fuel') = 'number' THEN (a->>'fuel')::float8 END AS fuel_percent,
        CASE WHEN jsonb_typeof(a->'fuelVolume') = 'number' THEN (a->>'fuelVolume')::float8 END AS fuel_litres
      FROM (
        -- Parsed once per fix: each ->> on json text scans the whole document again.
        SELECT fix_time, valid, latitude, longitude, speed_kmh, heading, ignition, attributes::jsonb AS a
        FROM positions
        WHERE device_id = s.device_id AND fix_time > coalesce(s.cursor_fix_time, '-infinity'::timestamptz)
        ORDER BY fix_time
        LIMIT ${perDevice}
      ) f
    ) p
    WHERE s.device_id = ANY(${deviceIds}::int[])
    ORDER BY s.device_id, p.fix_time
  `.execute(trx);
  return rows.map((r) => ({
    deviceId: r.device_id, fixTime: r.fix_time, valid: r.valid, latitude: r.latitude, longitude: r.longitude, speedKmh: r.speed_kmh, heading: r.heading, ignition: r.ignition, alarm: r.alarm,
    odometerKm: r.odometer_m === null ? null : r.odometer_m / 1000, driverIdentifier: r.driver,
    fuelPercent: r.fuel_percent, fuelLitres: r.fuel_litres,
  }));
}

/** A number JSON can hold (not NaN or ±Infinity, which it stores as null); anything else reads back as null. */
const jsonNumber = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * A fix as fixesAfterCursors would read it back once stored, or undefined when its attributes hold a
 * value whose text the database would spell differently (a non-string alarm or driver key): such a
 * fix is read back from the database. Kept beside the query so the two read a fix alike.
 */
export function engineFixOf(fix: StoredFix): EngineFix | undefined {
  const attributes = fix.attributes ?? {};
  const alarm = attributes.alarm;
  const driver = attributes.driverUniqueId ?? attributes.driverLicense;
  if ((alarm !== undefined && alarm !== null && typeof alarm !== 'string') || (driver !== undefined && driver !== null && typeof driver !== 'string')) return undefined;
  const odometer = jsonNumber(attributes.odometer);
  return {
    deviceId: fix.deviceId, fixTime: fix.fixTime, valid: fix.valid, latitude: fix.latitude, longitude: fix.longitude,
    speedKmh: finiteOrNull(fix.speedKmh), heading: finiteOrNull(fix.heading), ignition: fix.ignition ?? null, alarm: alarm ?? null,
    odometerKm: odometer === null ? null : odometer / 1000, driverIdentifier: driver ?? null,
    fuelPercent: jsonNumber(attributes.fuel), fuelLitres: jsonNumber(attributes.fuelVolume),
  };
}

/**
 * The fixes this process committed lately, per device: an engine step reads them from memory instead
 * of the database when the database proves them complete (see readEngineStep).
 */
export interface CommittedFixLookup {
  /** The device's committed fixes after `cursor`, oldest first, if this process holds every one it committed; else undefined. */
  after(deviceId: number, cursor: Date | null): EngineFix[] | undefined;
}

/** How many fixes each device has after its cursor, counted up to `limit` (a device with more shows limit). */
async function countFixesAfterCursors(trx: Db, deviceIds: number[], limit: number): Promise<Map<number, number>> {
  const { rows } = await sql<{ device_id: number; n: number }>`
    SELECT s.device_id, (
      SELECT count(*)::int FROM (
        SELECT 1 FROM positions WHERE device_id = s.device_id AND fix_time > coalesce(s.cursor_fix_time, '-infinity'::timestamptz) LIMIT ${limit}
      ) held
    ) AS n
    FROM device_engine_states s
    WHERE s.device_id = ANY(${deviceIds}::int[])
  `.execute(trx);
  return new Map(rows.map((r) => [r.device_id, r.n]));
}

/**
 * What one engine step reads for a batch of devices, in its transaction: their engine states locked
 * (lockEngineStates), the fixes after each cursor, the active travels of the devices with fixes (locked
 * too, so nothing else moves them meanwhile), and where their drivers stand. Null when no device has
 * anything to evaluate. The geofences come from the caller's catalog.
 *
 * With `committed`, a device's fixes come from memory when the database holds exactly as many after
 * its cursor as memory does: memory only holds fixes already committed, taken before the count, so
 * the same count means the same fixes (another process's fixes, or a commit memory has not heard of
 * yet, make the counts differ and the device is read from the database). Counting reads the
 * positions index; reading the rows back would fetch and parse each one.
 */
export async function readEngineStep(
  trx: Db,
  deviceIds: number[],
  fixesPerDevice: number,
  committed?: CommittedFixLookup,
): Promise<Omit<EngineStepInput, 'geofences'> | null> {
  const states = await lockEngineStates(trx, deviceIds);
  if (states.length === 0) return null;
  const fixes = new Map<number, EngineFix[]>();
  let fromDatabase = states.map((s) => s.deviceId);
  if (committed) {
    const held = new Map<number, EngineFix[]>();
    for (const s of states) {
      const list = committed.after(s.deviceId, s.cursor);
      if (list && list.length > 0 && list.length <= fixesPerDevice) held.set(s.deviceId, list);
    }
    if (held.size > 0) {
      const counts = await countFixesAfterCursors(trx, [...held.keys()], fixesPerDevice + 1);
      for (const [deviceId, list] of held) if (counts.get(deviceId) === list.length) fixes.set(deviceId, list);
      fromDatabase = fromDatabase.filter((id) => !fixes.has(id));
    }
  }
  if (fromDatabase.length > 0) {
    for (const f of await fixesAfterCursors(trx, fromDatabase, fixesPerDevice)) {
      const list = fixes.get(f.deviceId);
      if (list) list.push(f);
      else fixes.set(f.deviceId, [f]);
    }
  }
  // In device order whichever way each came, as the states are: the step evaluates and locks alike.
  const inOrder = new Map<number, EngineFix[]>();
  for (const s of states) {
    const list = fixes.get(s.deviceId);
    if (list) inOrder.set(s.deviceId, list);
  }
  const withFixes = [...inOrder.keys()];
  const travels = await stepTravels(trx, withFixes);
  const drivers = await driverSnapshot(trx, withFixes, driverKeys(fixes));
  return { states, fixes: inOrder, travels, drivers };
}

export async function saveEngineStates(trx: Db, states: EngineStateUpdate[]): Promise<void> {
  if (states.length === 0) return;
  await sql`
    UPDATE device_engine_states s SET
      cursor_fix_time = u.cursor, inside = ARRAY(SELECT json_array_elements_text(u.inside)::int), pending = u.pending,
      status = u.status, ignition = u.ignition, overspeed = u.overspeed, segment = coalesce(u.segment, s.segment),
      accumulators = coalesce(u.accumulators, s.accumulators), driving = coalesce(u.driving, s.driving),
      fuel = coalesce(u.fuel, s.fuel), updated_at = now()
    FROM unnest(${states.map((s) => s.deviceId)}::int[], ${states.map((s) => s.cursor?.toISOString() ?? null)}::timestamptz[],
      ${states.map((s) => JSON.stringify(s.inside))}::json[], ${states.map((s) => JSON.stringify(s.pending))}::json[],
      ${states.map((s) => s.status)}::text[], ${states.map((s) => s.ignition)}::bool[], ${states.map((s) => s.overspeed)}::bool[],
      ${states.map((s) => (s.segment === undefined ? null : JSON.stringify(s.segment)))}::json[],
      ${states.map((s) => (s.accumulators === undefined ? null : JSON.stringify(s.accumulators)))}::jsonb[],
      ${states.map((s) => (s.driving === undefined ? null : JSON.stringify(s.driving)))}::json[],
      ${states.map((s) => (s.fuel === undefined ? null : JSON.stringify(s.fuel)))}::json[])
      AS u(device_id, cursor, inside, pending, status, ignition, overspeed, segment, accumulators, driving, fuel)
    WHERE s.device_id = u.device_id
  `.execute(trx);
}

/**
 * Devices silent for longer than the threshold become Inactive, once: returns those that changed, with
 * the status they had, for the event stream. Rows another worker holds are left for the next sweep.
 */
export async function markInactive(trx: Db, inactiveAfterMinutes: number): Promise<Array<{ deviceId: number; from: string | null; at: Date }>> {
  const { rows } = await sql<{ device_id: number; previous: string | null; at: Date }>`
    WITH silent AS (
      SELECT e.device_id, e.status AS previous FROM device_engine_states e
      LEFT JOIN device_states s ON s.device_id = e.device_id
      WHERE e.status IS DISTINCT FROM 'Inactive'
        AND (s.last_report_at IS NULL OR s.last_report_at < now() - ${inactiveAfterMinutes}::float8 * interval '1 minute')
      ORDER BY e.device_id
      FOR UPDATE OF e SKIP LOCKED
    )
    UPDATE device_engine_states e SET status = 'Inactive', updated_at = now()
    FROM silent WHERE e.device_id = silent.device_id
    RETURNING e.device_id, silent.previous, now() AS at
  `.execute(trx);
  return rows.map((r) => ({ deviceId: r.device_id, from: r.previous, at: r.at }));
}

/** Devices with stored fixes newer than their engine cursor, or listed late fixes: what a lost signal would leave behind. */
export async function devicesBehind(db: Db, limit: number): Promise<number[]> {
  const { rows } = await sql<{ device_id: number }>`
    SELECT s.device_id FROM device_states s LEFT JOIN device_engine_states e ON e.device_id = s.device_id
    WHERE s.fix_time IS NOT NULL AND (e.cursor_fix_time IS NULL OR s.fix_time > e.cursor_fix_time)
    UNION
    SELECT DISTINCT device_id FROM late_fixes
    ORDER BY device_id LIMIT ${limit}
  `.execute(db);
  return rows.map((r) => r.device_id);
}
