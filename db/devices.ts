import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';
import { shownOdometerKmSql } from './vehicle-accumulators.ts';
import type { Device, DeviceMode } from './schema.ts';

export interface NewDevice {
  accountId: number;
  imei: string;
  name: string;
  plates?: string;
  protocol?: string | null;
  mode: DeviceMode;
  /** Users who may see the device; every user of the account when omitted. */
  userIds?: number[];
  /** The vehicle's own speed limit; none: its account's. */
  speedLimitKmh?: number | null;
  /** The fuel tank's capacity in litres; none: unknown. */
  fuelTankLitres?: number | null;
}

const IMEI = /^[0-9A-Za-z._-]{1,32}$/;

/** Registers a device and grants it to its users, in one transaction. */
export async function addDevice(db: Db, device: NewDevice): Promise<{ device: Device; userIds: number[] }> {
  if (!IMEI.test(device.imei)) {
    throw new DomainError('invalid', `IMEI must be 1 to 32 letters, digits, dots, dashes or underscores, got "${device.imei}"`);
  }
  if (!device.name.trim()) throw new DomainError('invalid', 'device name must not be empty');
  return inTransaction(db, async (trx) => {
    const accountUsers = await trx.selectFrom('users').select('id').where('account_id', '=', device.accountId).execute();
    const accountUserIds = new Set(accountUsers.map((u) => u.id));
    const userIds = device.userIds ?? [...accountUserIds];
    const foreign = userIds.filter((id) => !accountUserIds.has(id));
    if (foreign.length > 0) {
      throw new DomainError('invalid', `user ${foreign.join(', ')} does not belong to account ${device.accountId}`);
    }
    let created: Device;
    try {
      created = await trx
        .insertInto('devices')
        .values({
          account_id: device.accountId,
          imei: device.imei,
          name: device.name.trim(),
          plates: device.plates ?? '',
          protocol: device.protocol ?? null,
          mode: device.mode,
          speed_limit_kmh: device.speedLimitKmh ?? null,
          fuel_tank_litres: device.fuelTankLitres ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    } catch (error) {
      if (isUniqueViolation(error, 'devices_imei_key')) throw new DomainError('conflict', `a device with IMEI ${device.imei} already exists`);
      if (isUniqueViolation(error)) {
        throw new DomainError('conflict', `a ${device.mode} device named "${device.name}" already exists in account ${device.accountId}`);
      }
      throw error;
    }
    if (userIds.length > 0) {
      await trx.insertInto('user_device_grants').values(userIds.map((user_id) => ({ user_id, device_id: created.id }))).execute();
    }
    return { device: created, userIds };
  });
}

function visibleDevices(db: Db, scope: AccessScope) {
  return db
    .selectFrom('devices as d')
    .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
    .where('d.account_id', '=', scope.accountId)
    .where('d.mode', '=', scope.mode);
}

function withState(db: Db, scope: AccessScope) {
  return visibleDevices(db, scope)
    .leftJoin('device_states as s', 's.device_id', 'd.id')
    .leftJoin('device_engine_states as e', 'e.device_id', 'd.id')
    .leftJoin('vehicle_baselines as b', 'b.device_id', 'd.id')
    .select([
      'd.id', 'd.imei', 'd.name', 'd.plates',
      's.fix_time', 's.last_report_at', 's.valid', 's.latitude', 's.longitude', 's.speed_kmh', 's.heading',
      's.satellites', 's.ignition', shownOdometerKmSql.as('odometer_km'), 's.power_voltage', 's.backup_voltage', 's.signal_strength',
      's.connection_type', 's.address',
    ]);
}

export type DeviceWithState = Awaited<ReturnType<ReturnType<typeof withState>['executeTakeFirstOrThrow']>>;

/** Every device the scope may see, with its latest state, by name. */
export async function visibleDeviceStates(db: Db, scope: AccessScope): Promise<DeviceWithState[]> {
  return withState(db, scope).orderBy('d.name').orderBy('d.imei').execute();
}

export async function visibleDeviceState(db: Db, scope: AccessScope, imei: string): Promise<DeviceWithState | undefined> {
  return withState(db, scope).where('d.imei', '=', imei).executeTakeFirst();
}

/** Visible devices by IMEI; the result omits IMEIs that are unknown or not visible. */
export async function visibleDevicesByImei(db: Db, scope: AccessScope, imeis?: string[]) {
  let query = visibleDevices(db, scope).select(['d.id', 'd.imei', 'd.name']);
  if (imeis) query = query.where('d.imei', 'in', imeis.length > 0 ? imeis : ['']);
  return query.orderBy('d.name').execute();
}

export async function visibleDeviceByName(db: Db, scope: AccessScope, name: string) {
  return visibleDevices(db, scope).select(['d.id', 'd.imei', 'd.name']).where('d.name', '=', name).executeTakeFirst();
}

/** Sets (or, with null, removes: the account's applies) a vehicle's own speed limit, by IMEI. */
export async function setDeviceSpeedLimit(db: Db, imei: string, speedLimitKmh: number | null): Promise<Device | undefined> {
  return db.updateTable('devices').set({ speed_limit_kmh: speedLimitKmh }).where('imei', '=', imei).returningAll().executeTakeFirst();
}

/** The device a tracker identifies as, by IMEI (or its protocol's device id); any account, any mode. */
export async function findDeviceByImei(db: Db, imei: string): Promise<{ id: number; imei: string } | undefined> {
  return db.selectFrom('devices').select(['id', 'imei']).where('imei', '=', imei).executeTakeFirst();
}

/** Which of these IMEIs are registered. */
export async function registeredImeis(db: Db, imeis: string[]): Promise<Set<string>> {
  if (imeis.length === 0) return new Set();
  const rows = await db.selectFrom('devices').select('imei').where('imei', 'in', imeis).execute();
  return new Set(rows.map((r) => r.imei));
}

/** The IMEIs of an account's devices of one mode. */
export async function accountImeis(db: Db, accountId: number, mode: DeviceMode): Promise<string[]> {
  const rows = await db.selectFrom('devices').select('imei').where('account_id', '=', accountId).where('mode', '=', mode).orderBy('id').execute();
  return rows.map((r) => r.imei);
}
