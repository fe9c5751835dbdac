import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { DeviceMode } from './schema.ts';

export interface ActivityFilter {
  deviceIds: number[];
  accountId: number;
  /** The key's mode: only its geofences are reported (crossings recorded before geofences had a mode may name the other's). */
  mode: DeviceMode;
  /** Empty means every geofence of the account in the mode. */
  geofenceIds: number[];
  from: Date;
  to: Date;
}

function crossingsInRange(db: Db, f: ActivityFilter) {
  let query = db
    .selectFrom('geofence_events as e')
    .innerJoin('devices as d', 'd.id', 'e.device_id')
    .innerJoin('geofences as g', 'g.id', 'e.geofence_id')
    .where('e.device_id', 'in', f.deviceIds.length > 0 ? f.deviceIds : [-1])
    .where('g.account_id', '=', f.accountId)
    .where('g.mode', '=', f.mode)
    .where('e.fix_time', '>=', f.from)
    .where('e.fix_time', '<=', f.to);
  if (f.geofenceIds.length > 0) query = query.where('e.geofence_id', 'in', f.geofenceIds);
  return query;
}

/** Per vehicle and geofence, how often and when it crossed; at most `limit` rows. */
export async function crossingSummary(db: Db, f: ActivityFilter, limit: number) {
  return crossingsInRange(db, f)
    .select([
      'd.imei',
      'd.name as deviceName',
      'g.id as geofenceId',
      'g.name as geofenceName',
      sql<number>`count(*)::int`.as('timesCrossed'),
      sql<Date>`min(e.fix_time)`.as('firstCross'),
      sql<Date>`max(e.fix_time)`.as('lastCross'),
    ])
    .groupBy(['d.id', 'd.imei', 'd.name', 'g.id', 'g.name'])
    .orderBy('d.name')
    .orderBy('g.name')
    .orderBy('g.id')
    .limit(limit)
    .execute();
}

/** Each enter and exit in the range, in time order; at most `limit`. */
export async function crossingEvents(db: Db, f: ActivityFilter, limit: number) {
  return crossingsInRange(db, f)
    .select(['d.imei', 'd.name as deviceName', 'g.name as geofenceName', 'e.type', 'e.fix_time'])
    .orderBy('e.fix_time')
    .orderBy('d.name')
    .orderBy('g.name')
    .orderBy('e.id')
    .limit(limit)
    .execute();
}

/** Visits that overlap the range, including those that began before it or have not ended; at most `limit`. */
export async function visitsOverlapping(db: Db, f: ActivityFilter, limit: number) {
  let query = db
    .selectFrom('geofence_visits as v')
    .innerJoin('devices as d', 'd.id', 'v.device_id')
    .innerJoin('geofences as g', 'g.id', 'v.geofence_id')
    .where('v.device_id', 'in', f.deviceIds.length > 0 ? f.deviceIds : [-1])
    .where('g.account_id', '=', f.accountId)
    .where('g.mode', '=', f.mode)
    .where('v.entry_time', '<=', f.to)
    .where((eb) => eb.or([eb('v.exit_time', 'is', null), eb('v.exit_time', '>=', f.from)]));
  if (f.geofenceIds.length > 0) query = query.where('v.geofence_id', 'in', f.geofenceIds);
  return query
    .select(['d.imei', 'd.name as deviceName', 'g.name as geofenceName', 'v.entry_time', 'v.exit_time'])
    .orderBy('v.entry_time')
    .orderBy('d.name')
    .orderBy('g.name')
    .limit(limit)
    .execute();
}
