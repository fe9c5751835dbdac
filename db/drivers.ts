import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { RATING_WINDOW_DAYS, type DrivingTotals } from '../domain/drivers/driver-rating.ts';
import { normalizeDriverIdentifier } from '../domain/drivers/driver-assignment.ts';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';
import type { DriverAssignmentSource } from './schema.ts';

/**
 * Drivers belong to an account and a mode (a key sees those of its own mode, whichever user it
 * belongs to). Their current vehicle and their assignment history are shown only for vehicles the
 * key's user can see.
 */

export interface DriverRecord {
  id: number;
  name: string;
  identifier: string;
  phone: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The vehicle assigned now, when the scope can see it. */
  vehicle: { imei: string; name: string; since: Date; source: DriverAssignmentSource } | null;
}

interface DriverRow {
  id: number;
  name: string;
  identifier: string;
  phone: string | null;
  created_at: Date;
  updated_at: Date;
  vehicle_imei: string | null;
  vehicle_name: string | null;
  since: Date | null;
  source: DriverAssignmentSource | null;
}

const record = (r: DriverRow): DriverRecord => ({
  id: r.id, name: r.name, identifier: r.identifier, phone: r.phone, createdAt: r.created_at, updatedAt: r.updated_at,
  vehicle: r.vehicle_imei !== null && r.vehicle_name !== null && r.since !== null && r.source !== null
    ? { imei: r.vehicle_imei, name: r.vehicle_name, since: r.since, source: r.source }
    : null,
});

/** The drivers of the scope with their current vehicle (if visible); `where` narrows them. */
function driverRows(db: Db, scope: AccessScope, where: RawBuilder<unknown>, tail: RawBuilder<unknown> = sql``) {
  return sql<DriverRow>`
    SELECT dr.id, dr.name, dr.identifier, dr.phone, dr.created_at, dr.updated_at, cur.imei AS vehicle_imei, cur.name AS vehicle_name, cur.since, cur.source
    FROM drivers dr
    LEFT JOIN LATERAL (
      SELECT v.imei, v.name, a.since, a.source
      FROM driver_assignments a
      JOIN devices v ON v.id = a.device_id
      JOIN user_devices ud ON ud.device_id = v.id AND ud.user_id = ${scope.userId}
      WHERE a.driver_id = dr.id AND a.until IS NULL
    ) cur ON true
    WHERE dr.account_id = ${scope.accountId} AND dr.mode = ${scope.mode} AND ${where}
    ${tail}
  `.execute(db);
}

export interface DriverPageQuery {
  /** The last (name, id) of the previous page; the page starts strictly after it. */
  after?: { name: string; id: number };
  /** Case-insensitive substring of the name or the identifier. */
  q?: string;
  limit: number;
}

/** A page by (name, id), `limit + 1` rows so the caller can tell whether more follow. */
export async function driverPage(db: Db, scope: AccessScope, page: DriverPageQuery): Promise<DriverRecord[]> {
  const conditions = [sql<SqlBool>`true`];
  if (page.after) conditions.push(sql<SqlBool>`(dr.name, dr.id) > (${page.after.name}, ${page.after.id})`);
  if (page.q !== undefined) conditions.push(sql<SqlBool>`(strpos(lower(dr.name), lower(${page.q})) > 0 OR strpos(lower(dr.identifier), lower(${page.q})) > 0)`);
  const { rows } = await driverRows(db, scope, sql.join(conditions, sql` AND `), sql`ORDER BY dr.name, dr.id LIMIT ${page.limit + 1}`);
  return rows.map(record);
}

export async function findDriver(db: Db, scope: AccessScope, id: number): Promise<DriverRecord | undefined> {
  const { rows } = await driverRows(db, scope, sql<SqlBool>`dr.id = ${id}`);
  return rows[0] ? record(rows[0]) : undefined;
}

export interface AssignmentRecord {
  vehicle: { imei: string; name: string };
  since: Date;
  until: Date | null;
  source: DriverAssignmentSource;
}

/** The driver's newest assignments on vehicles the scope can see, newest first. */
export async function assignmentHistory(db: Db, scope: AccessScope, driverId: number, limit: number): Promise<AssignmentRecord[]> {
  const rows = await db
    .selectFrom('driver_assignments as a')
    .innerJoin('devices as v', 'v.id', 'a.device_id')
    .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'v.id').on('ud.user_id', '=', scope.userId))
    .select(['v.imei', 'v.name', 'a.since', 'a.until', 'a.source'])
    .where('a.driver_id', '=', driverId)
    .orderBy('a.since', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ vehicle: { imei: r.imei, name: r.name }, since: r.since, until: r.until, source: r.source }));
}

/**
 * What each driver's trips that started in the last RATING_WINDOW_DAYS add up to, in one aggregate
 * query over the trips the engine wrote (a driver without any gets zeros).
 */
export async function drivingTotals(db: Db, driverIds: number[], now = new Date()): Promise<Map<number, DrivingTotals>> {
  const totals = new Map<number, DrivingTotals>(driverIds.map((id) => [id, { distanceM: 0, overspeedS: 0, harshEvents: 0, idleS: 0 }]));
  if (driverIds.length === 0) return totals;
  const from = new Date(now.getTime() - RATING_WINDOW_DAYS * 86_400_000);
  const { rows } = await sql<{ driver_id: number; distance_m: number; overspeed_s: number; harsh_events: number; idle_s: number }>`
    SELECT driver_id, sum(distance_m)::float8 AS distance_m, sum(overspeed_s)::float8 AS overspeed_s, sum(harsh_events)::float8 AS harsh_events, sum(idle_s)::float8 AS idle_s
    FROM trips
    WHERE driver_id = ANY(${driverIds}::int[]) AND start_time >= ${from.toISOString()}::timestamptz AND start_time <= ${now.toISOString()}::timestamptz
    GROUP BY driver_id
  `.execute(db);
  for (const r of rows) totals.set(r.driver_id, { distanceM: r.distance_m, overspeedS: r.overspeed_s, harshEvents: r.harsh_events, idleS: r.idle_s });
  return totals;
}

export interface DriverFields {
  name?: string;
  identifier?: string;
  phone?: string | null;
}

function checkedName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 200) throw new DomainError('invalid', 'name must be 1 to 200 characters');
  return name;
}

function checkedIdentifier(raw: string): string {
  const identifier = normalizeDriverIdentifier(raw);
  if (identifier === null) throw new DomainError('invalid', 'identifier must be 1 to 64 characters without control characters (the key as the tracker reads it: iButton hex, RFID or card number)');
  return identifier;
}

function checkedPhone(raw: string | null): string | null {
  if (raw === null) return null;
  const phone = raw.trim();
  if (phone.length === 0) return null;
  if (phone.length > 40 || !/^[+0-9 ()./-]+$/.test(phone)) throw new DomainError('invalid', 'phone must be up to 40 characters of digits, spaces and + ( ) . / -');
  return phone;
}

const duplicate = (identifier: string) => new DomainError('conflict', `a driver with identifier ${identifier} already exists`);

/**
 * Registers a driver. A vehicle that reported this key unrecognised no longer lists it: the next fix
 * with it assigns the driver.
 */
export async function insertDriver(db: Db, scope: AccessScope, fields: Required<Pick<DriverFields, 'name' | 'identifier'>> & DriverFields): Promise<number> {
  const values = { name: checkedName(fields.name), identifier: checkedIdentifier(fields.identifier), phone: checkedPhone(fields.phone ?? null) };
  return db.transaction().execute(async (trx) => {
    let id: number;
    try {
      ({ id } = await trx
        .insertInto('drivers')
        .values({ account_id: scope.accountId, mode: scope.mode, ...values })
        .returning('id')
        .executeTakeFirstOrThrow());
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate(values.identifier);
      throw error;
    }
    await forgetUnknownKey(trx, scope, values.identifier);
    return id;
  });
}

/** Changes what is given; false when there is no such driver. */
export async function updateDriver(db: Db, scope: AccessScope, id: number, fields: DriverFields): Promise<boolean> {
  const name = fields.name === undefined ? undefined : checkedName(fields.name);
  const identifier = fields.identifier === undefined ? undefined : checkedIdentifier(fields.identifier);
  const phone = fields.phone === undefined ? undefined : checkedPhone(fields.phone);
  if (name === undefined && identifier === undefined && phone === undefined) {
    // Nothing to change: the answer only says whether the driver exists.
    return (await db.selectFrom('drivers').select('id').where('id', '=', id).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).executeTakeFirst()) !== undefined;
  }
  return db.transaction().execute(async (trx) => {
    try {
      const updated = await trx
        .updateTable('drivers')
        .set({ ...(name === undefined ? {} : { name }), ...(identifier === undefined ? {} : { identifier }), ...(phone === undefined ? {} : { phone }), updated_at: new Date() })
        .where('id', '=', id).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return false;
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicate(identifier!);
      throw error;
    }
    if (identifier !== undefined) await forgetUnknownKey(trx, scope, identifier);
    return true;
  });
}

async function forgetUnknownKey(trx: Db, scope: AccessScope, identifier: string): Promise<void> {
  await trx
    .updateTable('devices')
    .set({ unknown_driver_identifier: null, unknown_driver_seen_at: null })
    .where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('unknown_driver_identifier', '=', identifier)
    .execute();
}
