import { sql } from 'kysely';
import type { DriverChange, DriverState, VehicleDriverState } from '../domain/drivers/driver-assignment.ts';
import { keyOf, type DriverSnapshot } from '../domain/drivers/driver-step.ts';
import { driverChangedEvent, lastPosition, type DriverRef, type EventPosition, type NewEvent } from '../domain/events/event-payloads.ts';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import { appendEvents } from './event-log.ts';

/**
 * Driver assignments (`driver_assignments`): who drove which vehicle from when to when. An open row
 * (`until` null) is the current assignment, one per vehicle and one per driver. Rows of one vehicle,
 * and of one driver, never overlap: a change only happens after the newest boundary (see
 * domain/drivers/driver-assignment.ts), so the newest row by `since` is the one that says where things
 * stand.
 */

const ms = (d: Date | null) => (d === null ? null : d.getTime());

/**
 * Where the step's vehicles and the drivers their keys name stand, in two queries (one without keys):
 * each vehicle's current driver and newest boundary, and the drivers the keys name (a key names a
 * driver of its vehicle's account and mode) with their current vehicle and newest boundary. Read with
 * the vehicles' engine states locked, so nothing else assigns them from telemetry meanwhile.
 */
export async function driverSnapshot(trx: Db, deviceIds: number[], keys: Array<{ deviceId: number; identifier: string }>): Promise<DriverSnapshot> {
  const vehicles = new Map<number, VehicleDriverState>();
  const drivers = new Map<number, DriverState>();
  const byKey = new Map<string, number>();
  const refs = new Map<number, DriverRef>();
  if (deviceIds.length === 0) return { vehicles, drivers, byKey, refs };
  const { rows } = await sql<{ device_id: number; driver_id: number; since: Date; until: Date | null; name: string | null; identifier: string | null }>`
    SELECT v.id AS device_id, a.driver_id, a.since, a.until, dr.name, dr.identifier
    FROM unnest(${deviceIds}::int[]) AS v(id)
    CROSS JOIN LATERAL (
      SELECT driver_id, since, until FROM driver_assignments WHERE device_id = v.id ORDER BY since DESC LIMIT 1
    ) a
    LEFT JOIN drivers dr ON dr.id = a.driver_id
  `.execute(trx);
  for (const r of rows) {
    vehicles.set(r.device_id, { driverId: r.until === null ? r.driver_id : null, boundary: ms(r.until ?? r.since) });
    if (r.until === null && r.name !== null) refs.set(r.driver_id, { id: r.driver_id, name: r.name, identifier: r.identifier! });
  }
  if (keys.length === 0) return { vehicles, drivers, byKey, refs };
  const named = await sql<{ device_id: number; identifier: string; driver_id: number; name: string; driver_identifier: string; open_device: number | null; since: Date | null; until: Date | null }>`
    SELECT k.device_id, k.identifier, dr.id AS driver_id, dr.name, dr.identifier AS driver_identifier, a.device_id AS open_device, a.since, a.until
    FROM unnest(${keys.map((k) => k.deviceId)}::int[], ${keys.map((k) => k.identifier)}::text[]) AS k(device_id, identifier)
    JOIN devices d ON d.id = k.device_id
    JOIN drivers dr ON dr.account_id = d.account_id AND dr.mode = d.mode AND dr.identifier = k.identifier
    LEFT JOIN LATERAL (
      SELECT device_id, since, until FROM driver_assignments WHERE driver_id = dr.id ORDER BY since DESC LIMIT 1
    ) a ON true
  `.execute(trx);
  for (const r of named.rows) {
    byKey.set(keyOf(r.device_id, r.identifier), r.driver_id);
    drivers.set(r.driver_id, {
      id: r.driver_id,
      vehicleId: r.since !== null && r.until === null ? r.open_device : null,
      boundary: ms(r.until ?? r.since),
    });
    refs.set(r.driver_id, { id: r.driver_id, name: r.name, identifier: r.driver_identifier });
  }
  return { vehicles, drivers, byKey, refs };
}

/**
 * Writes the engine's changes, in order: ends the vehicle's assignment (and, for a driver who came from
 * another vehicle, that one) at the fix, and opens the new one from it. Idempotent: the closing updates
 * only touch open rows that began before the fix, and the insert is keyed by (vehicle, since). Returns
 * the changes that changed something, for their events.
 */
export async function saveDriverChanges(trx: Db, changes: DriverChange[]): Promise<DriverChange[]> {
  const applied: DriverChange[] = [];
  const took = new Set<DriverChange>();
  for (const c of changes) {
    const at = new Date(c.at).toISOString();
    if (c.reason === 'otherVehicle') {
      if (took.has(c)) applied.push(c);
      continue;
    }
    const ended = await sql<{ id: number }>`
      UPDATE driver_assignments SET until = ${at}::timestamptz WHERE device_id = ${c.vehicleId} AND until IS NULL AND since <= ${at}::timestamptz RETURNING id
    `.execute(trx);
    if (c.to === null) {
      if (ended.rows.length > 0) applied.push(c);
      continue;
    }
    if (c.tookFrom !== null) {
      const left = await sql<{ id: number }>`
        UPDATE driver_assignments SET until = ${at}::timestamptz WHERE driver_id = ${c.to} AND until IS NULL AND since <= ${at}::timestamptz RETURNING id
      `.execute(trx);
      if (left.rows.length > 0) {
        const other = changes.find((o) => o.reason === 'otherVehicle' && o.vehicleId === c.tookFrom && o.at === c.at && o.from === c.to);
        if (other) took.add(other);
      }
    }
    // Any conflict (the same row, or an open row another writer made meanwhile) leaves what is there.
    const opened = await sql<{ id: number }>`
      INSERT INTO driver_assignments (driver_id, device_id, since, source)
      SELECT ${c.to}, ${c.vehicleId}, ${at}::timestamptz, 'telemetry'
      WHERE EXISTS (SELECT 1 FROM drivers WHERE id = ${c.to})
      ON CONFLICT DO NOTHING
      RETURNING id
    `.execute(trx);
    if (opened.rows.length > 0) applied.push(c);
  }
  // An `otherVehicle` change is listed after the change that caused it.
  return applied.sort((a, b) => changes.indexOf(a) - changes.indexOf(b));
}

/** The newest key each vehicle reported that names no driver, so it can be registered. */
export async function recordUnknownIdentifiers(trx: Db, seen: Array<{ deviceId: number; identifier: string; at: number }>): Promise<void> {
  if (seen.length === 0) return;
  await sql`
    UPDATE devices d SET unknown_driver_identifier = u.identifier, unknown_driver_seen_at = u.at
    FROM unnest(${seen.map((s) => s.deviceId)}::int[], ${seen.map((s) => s.identifier)}::text[], ${seen.map((s) => new Date(s.at).toISOString())}::timestamptz[])
      AS u(device_id, identifier, at)
    WHERE d.id = u.device_id AND (d.unknown_driver_seen_at IS NULL OR d.unknown_driver_seen_at <= u.at)
  `.execute(trx);
}

export async function driverRefs(trx: Db, ids: number[]): Promise<Map<number, DriverRef>> {
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('drivers').select(['id', 'name', 'identifier']).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

// ---------------------------------------------------------------------------------------------
// Manual assignment (the API). The vehicles' engine states are locked first, as the engine locks
// them, so a manual change and the engine's evaluation of the same vehicle take turns.

interface LatestRow {
  id: number;
  device_id: number;
  driver_id: number;
  since: Date;
  until: Date | null;
}

async function latestOfVehicle(trx: Db, deviceId: number): Promise<LatestRow | undefined> {
  return trx.selectFrom('driver_assignments').select(['id', 'device_id', 'driver_id', 'since', 'until']).where('device_id', '=', deviceId).orderBy('since', 'desc').limit(1).executeTakeFirst();
}

async function latestOfDriver(trx: Db, driverId: number): Promise<LatestRow | undefined> {
  return trx.selectFrom('driver_assignments').select(['id', 'device_id', 'driver_id', 'since', 'until']).where('driver_id', '=', driverId).orderBy('since', 'desc').limit(1).executeTakeFirst();
}

/** Locks the engine states that exist of these vehicles, in id order (as lockEngineStates does). */
export async function lockVehicleStates(trx: Db, deviceIds: number[]): Promise<void> {
  const ids = [...new Set(deviceIds)].sort((a, b) => a - b);
  if (ids.length === 0) return;
  await sql`SELECT device_id FROM device_engine_states WHERE device_id = ANY(${ids}::int[]) ORDER BY device_id FOR UPDATE`.execute(trx);
}

async function vehiclePosition(trx: Db, deviceId: number): Promise<EventPosition | null> {
  const row = await trx.selectFrom('device_states').select(['latitude', 'longitude', 'speed_kmh', 'heading', 'fix_time']).where('device_id', '=', deviceId).executeTakeFirst();
  return row ? lastPosition(row) : null;
}

async function findDriver(trx: Db, scope: AccessScope, driverId: number): Promise<DriverRef> {
  const driver = await trx
    .selectFrom('drivers').select(['id', 'name', 'identifier'])
    .where('id', '=', driverId).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode)
    .executeTakeFirst();
  if (!driver) throw new DomainError('not_found', `Driver not found: ${driverId}`);
  return driver;
}

const boundaryOf = (row: LatestRow | undefined) => (row ? (row.until ?? row.since) : null);

/**
 * Assigns a driver to a vehicle the key can see, from `since` (default now): the vehicle's current
 * assignment and the driver's (on another vehicle) end then. `since` must come after both newest
 * boundaries, so history is never rewritten. Assigning a driver to the vehicle they already drive
 * changes nothing. Logs `driver.changed` for each vehicle whose driver changed.
 */
export async function assignDriver(db: Db, scope: AccessScope, driverId: number, imei: string, since?: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const driver = await findDriver(trx, scope, driverId);
    const vehicle = await trx
      .selectFrom('devices as d')
      .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
      .select(['d.id', 'd.imei']).where('d.imei', '=', imei).where('d.account_id', '=', scope.accountId).where('d.mode', '=', scope.mode)
      .executeTakeFirst();
    if (!vehicle) throw new DomainError('not_found', 'Vehicle not found or no access');
    const before = await latestOfDriver(trx, driverId);
    await lockVehicleStates(trx, [vehicle.id, ...(before && before.until === null ? [before.device_id] : [])]);
    const ofVehicle = await latestOfVehicle(trx, vehicle.id);
    const ofDriver = await latestOfDriver(trx, driverId);
    if (ofVehicle && ofVehicle.until === null && ofVehicle.driver_id === driverId) return;
    const at = since ?? new Date();
    if (at.getTime() > Date.now()) throw new DomainError('invalid', 'since must not be in the future');
    for (const [what, boundary] of [['vehicle', boundaryOf(ofVehicle)], ['driver', boundaryOf(ofDriver)]] as const) {
      if (boundary && at.getTime() <= boundary.getTime()) {
        throw new DomainError('conflict', `since must be after ${boundary.toISOString()}, the newest change of the ${what}'s assignments: history is not rewritten`);
      }
    }
    const events: NewEvent[] = [];
    const previous = ofVehicle && ofVehicle.until === null ? ofVehicle.driver_id : null;
    if (previous !== null) await trx.updateTable('driver_assignments').set({ until: at }).where('id', '=', ofVehicle!.id).execute();
    const fromVehicle = ofDriver && ofDriver.until === null ? ofDriver.device_id : null;
    if (fromVehicle !== null) {
      await trx.updateTable('driver_assignments').set({ until: at }).where('id', '=', ofDriver!.id).execute();
      events.push(driverChangedEvent({
        vehicleId: fromVehicle, at, driver: null, previousDriver: driver, source: 'manual', reason: 'otherVehicle', reportedIdentifier: null, position: null,
      }));
    }
    const opened = await sql<{ id: number }>`
      INSERT INTO driver_assignments (driver_id, device_id, since, source) VALUES (${driverId}, ${vehicle.id}, ${at.toISOString()}::timestamptz, 'manual')
      ON CONFLICT DO NOTHING RETURNING id
    `.execute(trx);
    if (opened.rows.length === 0) throw new DomainError('conflict', 'the assignment changed meanwhile; read the driver again and retry');
    const previousDriver = previous === null ? null : ((await driverRefs(trx, [previous])).get(previous) ?? null);
    events.push(driverChangedEvent({
      vehicleId: vehicle.id, at, driver, previousDriver, source: 'manual', reason: 'assigned', reportedIdentifier: null,
      position: await vehiclePosition(trx, vehicle.id),
    }));
    await appendEvents(trx, events);
  });
}

/** Ends a driver's current assignment now; false when the driver has none. Logs `driver.changed`. */
export async function unassignDriver(db: Db, scope: AccessScope, driverId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const driver = await findDriver(trx, scope, driverId);
    const before = await latestOfDriver(trx, driverId);
    if (!before || before.until !== null) return false;
    await lockVehicleStates(trx, [before.device_id]);
    const open = await latestOfDriver(trx, driverId);
    if (!open || open.until !== null) return false;
    // A fix from a tracker's clock ahead of ours may have opened it "in the future": it ends where it began.
    const at = new Date(Math.max(Date.now(), open.since.getTime()));
    await trx.updateTable('driver_assignments').set({ until: at }).where('id', '=', open.id).execute();
    await appendEvents(trx, [driverChangedEvent({
      vehicleId: open.device_id, at, driver: null, previousDriver: driver, source: 'manual', reason: 'unassigned', reportedIdentifier: null,
      position: await vehiclePosition(trx, open.device_id),
    })]);
    return true;
  });
}

/**
 * Deletes a driver of the scope's account and mode with their assignment history; trips keep their
 * figures with no driver. A vehicle they were driving logs `driver.changed` (reason driverDeleted).
 */
export async function deleteDriverWithHistory(db: Db, scope: AccessScope, driverId: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const driver = await findDriver(trx, scope, driverId).catch((error: unknown) => {
      if (error instanceof DomainError) return undefined;
      throw error;
    });
    if (!driver) return false;
    const latest = await latestOfDriver(trx, driverId);
    const open = latest && latest.until === null ? latest : undefined;
    if (open) await lockVehicleStates(trx, [open.device_id]);
    const deleted = await trx.deleteFrom('drivers').where('id', '=', driverId).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) return false;
    if (open) {
      await appendEvents(trx, [driverChangedEvent({
        vehicleId: open.device_id, at: new Date(Math.max(Date.now(), open.since.getTime())), driver: null, previousDriver: driver,
        source: 'manual', reason: 'driverDeleted', reportedIdentifier: null, position: await vehiclePosition(trx, open.device_id),
      })]);
    }
    return true;
  });
}
