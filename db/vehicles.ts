import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';
import { addDevice } from './devices.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';
import { engineHoursSql, shownOdometerKmSql } from './vehicle-accumulators.ts';
import { groupsOfDevice } from './vehicle-groups.ts';
import { ACTIVE_STATUSES } from './travels.ts';
import { TravelStatus } from './schema.ts';

export const VEHICLE_STATUSES = ['moving', 'stopped', 'off', 'inactive'] as const;
export type VehicleStatus = (typeof VEHICLE_STATUSES)[number];

/**
 * A vehicle's status as SQL, for filtering: the same rule as `classifyDeviceStatus`, at the same `now`.
 * Inactive: no report, or the last one more than the threshold before `now` (at exactly the threshold it
 * is still fresh, as there). Speeds are compared as double precision, as JavaScript compares them.
 */
function statusSql(now: Date, thresholds: DeviceStatusThresholds): RawBuilder<VehicleStatus> {
  const freshSince = new Date(now.getTime() - thresholds.inactiveAfterMinutes * 60_000);
  return sql<VehicleStatus>`CASE
    WHEN s.last_report_at IS NULL OR s.last_report_at < ${freshSince} THEN 'inactive'
    WHEN coalesce(s.speed_kmh, 0) >= ${thresholds.movingSpeedKmh}::float8 THEN 'moving'
    WHEN s.ignition THEN 'stopped'
    ELSE 'off' END`;
}

function visibleVehicles(db: Db, scope: AccessScope) {
  return db
    .selectFrom('devices as d')
    .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
    .leftJoin('device_states as s', 's.device_id', 'd.id')
    .where('d.account_id', '=', scope.accountId)
    .where('d.mode', '=', scope.mode);
}

const RECORD_COLUMNS = ['d.id', 'd.imei', 'd.name', 's.last_report_at', 's.latitude', 's.longitude', 's.speed_kmh', 's.ignition'] as const;

export interface VehiclePageQuery {
  /** The last (name, IMEI) of the previous page; the page starts strictly after it. */
  after?: { name: string; imei: string };
  statuses?: readonly VehicleStatus[];
  /** Case-insensitive substring of the name or the plates. */
  q?: string;
  limit: number;
  now: Date;
  thresholds: DeviceStatusThresholds;
}

/**
 * A page of the vehicles the scope may see, by (name, IMEI), `limit + 1` rows so the caller can tell
 * whether more follow. Keyset: a page starts after the previous page's last key, whatever was added,
 * renamed or deleted meanwhile.
 */
export async function vehiclePage(db: Db, scope: AccessScope, page: VehiclePageQuery) {
  const status = statusSql(page.now, page.thresholds);
  let query = visibleVehicles(db, scope).select(RECORD_COLUMNS);
  if (page.after) query = query.where(sql<SqlBool>`(d.name, d.imei) > (${page.after.name}, ${page.after.imei})`);
  if (page.statuses) query = page.statuses.length > 0 ? query.where(status, 'in', [...page.statuses]) : query.where(sql<SqlBool>`false`);
  if (page.q !== undefined) {
    const q = page.q;
    query = query.where(sql<SqlBool>`(strpos(lower(d.name), lower(${q})) > 0 OR strpos(lower(d.plates), lower(${q})) > 0)`);
  }
  return query.orderBy('d.name').orderBy('d.imei').limit(page.limit + 1).execute();
}

export type VehicleRow = Awaited<ReturnType<typeof vehiclePage>>[number];

/** Every vehicle the scope may see with what the list shows and filters on, in the list's (name, IMEI) order. */
export async function visibleVehicleList(db: Db, scope: AccessScope) {
  return visibleVehicles(db, scope).select([...RECORD_COLUMNS, 'd.plates']).orderBy('d.name').orderBy('d.imei').execute();
}

export type VehicleListRow = Awaited<ReturnType<typeof visibleVehicleList>>[number];

/** One visible vehicle with what its detail shows: plates, protocol, speed limit, fuel tank, current driver, users. */
export async function visibleVehicle(db: Db, scope: AccessScope, imei: string) {
  const row = await visibleVehicles(db, scope)
    .leftJoin('driver_assignments as a', (join) => join.onRef('a.device_id', '=', 'd.id').on('a.until', 'is', null))
    .leftJoin('drivers as dr', 'dr.id', 'a.driver_id')
    .leftJoin('device_engine_states as e', 'e.device_id', 'd.id')
    .leftJoin('vehicle_baselines as b', 'b.device_id', 'd.id')
    .select([
      ...RECORD_COLUMNS, 'd.plates', 'd.protocol', 'd.speed_limit_kmh', 'd.fuel_tank_litres', 'd.unknown_driver_identifier', 'd.unknown_driver_seen_at',
      'dr.id as driver_id', 'dr.name as driver_name', 'dr.identifier as driver_identifier', 'a.since as driver_since', 's.address',
      shownOdometerKmSql.as('odometer_km'), engineHoursSql.as('engine_hours'),
    ])
    .where('d.imei', '=', imei)
    .executeTakeFirst();
  if (!row) return undefined;
  const users = await db.selectFrom('user_device_grants').select('user_id').where('device_id', '=', row.id).orderBy('user_id').execute();
  return { ...row, user_ids: users.map((u) => u.user_id), groups: await groupsOfDevice(db, row.id) };
}

export type VehicleDetailRow = NonNullable<Awaited<ReturnType<typeof visibleVehicle>>>;

export interface NewVehicle {
  imei: string;
  name: string;
  plates?: string;
  protocol?: string | null;
  speedLimitKmh?: number | null;
  fuelTankLitres?: number | null;
  /** Other users of the account who may see it; the scope's own user always may. */
  userIds?: number[];
}

/**
 * Registers a tracker in the scope's account and mode, through the same function as `fleet device add`
 * (so the rows are the same: the device, its grants, and its empty state row by trigger).
 */
export async function registerVehicle(db: Db, scope: AccessScope, vehicle: NewVehicle): Promise<VehicleDetailRow> {
  await addDevice(db, {
    accountId: scope.accountId,
    imei: vehicle.imei,
    name: vehicle.name,
    plates: vehicle.plates,
    protocol: vehicle.protocol ?? null,
    mode: scope.mode,
    speedLimitKmh: vehicle.speedLimitKmh ?? null,
    fuelTankLitres: vehicle.fuelTankLitres ?? null,
    userIds: [...new Set([scope.userId, ...(vehicle.userIds ?? [])])],
  });
  return (await visibleVehicle(db, scope, vehicle.imei))!;
}

export interface VehicleChanges {
  name?: string;
  plates?: string;
  protocol?: string | null;
  speedLimitKmh?: number | null;
  fuelTankLitres?: number | null;
  /** Replaces who may see it; the scope's own user is always kept. */
  userIds?: number[];
}

async function visibleDeviceId(db: Db, scope: AccessScope, imei: string): Promise<number | undefined> {
  return (await visibleVehicles(db, scope).select('d.id').where('d.imei', '=', imei).executeTakeFirst())?.id;
}

/** Changes the fields given; undefined when the scope cannot see the vehicle. */
export async function updateVehicle(db: Db, scope: AccessScope, imei: string, changes: VehicleChanges): Promise<VehicleDetailRow | undefined> {
  return inTransaction(db, async (trx) => {
    const id = await visibleDeviceId(trx, scope, imei);
    if (id === undefined) return undefined;
    const set = {
      ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
      ...(changes.plates !== undefined ? { plates: changes.plates } : {}),
      ...(changes.protocol !== undefined ? { protocol: changes.protocol } : {}),
      ...(changes.speedLimitKmh !== undefined ? { speed_limit_kmh: changes.speedLimitKmh } : {}),
      ...(changes.fuelTankLitres !== undefined ? { fuel_tank_litres: changes.fuelTankLitres } : {}),
    };
    if (Object.keys(set).length > 0) {
      try {
        await trx.updateTable('devices').set(set).where('id', '=', id).execute();
      } catch (error) {
        if (isUniqueViolation(error)) throw new DomainError('conflict', `a ${scope.mode} vehicle named "${changes.name!.trim()}" already exists in this account`);
        throw error;
      }
    }
    if (changes.userIds !== undefined) await replaceGrants(trx, scope, id, [...new Set([scope.userId, ...changes.userIds])]);
    return visibleVehicle(trx, scope, imei);
  });
}

async function replaceGrants(trx: Db, scope: AccessScope, deviceId: number, userIds: number[]): Promise<void> {
  const members = await trx.selectFrom('users').select('id').where('account_id', '=', scope.accountId).where('id', 'in', userIds).execute();
  const known = new Set(members.map((m) => m.id));
  const foreign = userIds.filter((u) => !known.has(u));
  if (foreign.length > 0) throw new DomainError('invalid', `user ${foreign.join(', ')} does not belong to this account`);
  await trx.deleteFrom('user_device_grants').where('device_id', '=', deviceId).where('user_id', 'not in', userIds).execute();
  await trx
    .insertInto('user_device_grants')
    .values(userIds.map((user_id) => ({ user_id, device_id: deviceId })))
    .onConflict((oc) => oc.columns(['user_id', 'device_id']).doNothing())
    .execute();
}

const STATUS_NAME: Record<number, string> = { [TravelStatus.Scheduled]: 'Scheduled', [TravelStatus.InProgress]: 'In progress' };

/**
 * Deletes a vehicle and everything recorded for it; refused while it has a Scheduled or In progress
 * travel. False when the scope cannot see it. The event log keeps its events.
 *
 * The device row is locked first, so a travel created meanwhile is either seen here or fails on the
 * missing vehicle. Every table but `positions` follows by ON DELETE CASCADE; positions have no foreign
 * key (ingest speed, migration 0002), so they are deleted after the device: the cascade into
 * `device_states` waits for an ingest batch writing this device, which then has committed and is seen,
 * and a later batch fails on the missing device and rolls back with its positions.
 */
export async function deleteVehicle(db: Db, scope: AccessScope, imei: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const id = await visibleDeviceId(trx, scope, imei);
    if (id === undefined) return false;
    await trx.selectFrom('devices').select('id').where('id', '=', id).forUpdate().execute();
    const active = await trx.selectFrom('travels').select(['id', 'status']).where('device_id', '=', id).where('status', 'in', ACTIVE_STATUSES).orderBy('id').execute();
    if (active.length > 0) {
      const list = active.map((t) => `${t.id} (${STATUS_NAME[t.status]})`).join(', ');
      throw new DomainError('conflict', `vehicle ${imei} has active travel ${list}; cancel it first`);
    }
    await trx.deleteFrom('devices').where('id', '=', id).execute();
    await trx.deleteFrom('positions').where('device_id', '=', id).execute();
    return true;
  });
}
