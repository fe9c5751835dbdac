import { sql } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';
import { visibleDeviceByName } from './devices.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';

const FOREIGN_KEY_VIOLATION = '23503';
import { appendEvents } from './event-log.ts';
import { geofencesByName } from './geofences.ts';
import { travelCancelledEvent } from '../domain/events/event-payloads.ts';
import { TravelStatus, type Travel, type TravelStatusCode, type TravelWaypoint } from './schema.ts';

/** The name waypoint 1 always carries: the vehicle's position when the travel starts. */
export const STARTING_WAYPOINT_NAME = 'Current position';

export const ACTIVE_STATUSES: TravelStatusCode[] = [TravelStatus.Scheduled, TravelStatus.InProgress];

export interface NewTravel {
  vehicleName: string;
  startTime: Date;
  waypoints: Array<{ geofenceName: string; expectedArrival: Date }>;
}

export interface TravelRecord {
  travel: Travel;
  vehicleName: string;
  waypoints: TravelWaypoint[];
}

function visibleTravels(db: Db, scope: AccessScope) {
  return db
    .selectFrom('travels as t')
    .innerJoin('devices as d', 'd.id', 't.device_id')
    .innerJoin('user_devices as ud', (join) => join.onRef('ud.device_id', '=', 'd.id').on('ud.user_id', '=', scope.userId))
    .where('t.account_id', '=', scope.accountId)
    .where('d.mode', '=', scope.mode);
}

async function waypointsOf(db: Db, travelIds: number[]): Promise<Map<number, TravelWaypoint[]>> {
  const byTravel = new Map<number, TravelWaypoint[]>();
  if (travelIds.length === 0) return byTravel;
  const rows = await db.selectFrom('travel_waypoints').selectAll().where('travel_id', 'in', travelIds).orderBy('travel_id').orderBy('seq').execute();
  for (const row of rows) {
    const list = byTravel.get(row.travel_id) ?? [];
    list.push(row);
    byTravel.set(row.travel_id, list);
  }
  return byTravel;
}

/**
 * Creates a Scheduled travel with waypoint 1 at the vehicle's position and one waypoint per destination.
 * The one-active-travel rule is a unique index, so of two concurrent requests exactly one succeeds.
 */
export async function createTravel(db: Db, scope: AccessScope, input: NewTravel): Promise<TravelRecord> {
  try {
    const id = await inTransaction(db, async (trx) => {
      const vehicle = await visibleDeviceByName(trx, scope, input.vehicleName);
      if (!vehicle) throw new DomainError('invalid', 'Vehicle not found');
      const names = [...new Set(input.waypoints.map((w) => w.geofenceName))];
      // The vehicle's mode is the scope's: a travel names geofences of its own mode only.
      const geofences = await geofencesByName(trx, scope, names);
      const idByName = new Map(geofences.map((g) => [g.name, g.id]));
      if (names.some((name) => !idByName.has(name))) throw new DomainError('invalid', 'Geofence not found');
      const active = await trx
        .selectFrom('travels')
        .select('id')
        .where('device_id', '=', vehicle.id)
        .where('status', 'in', ACTIVE_STATUSES)
        .executeTakeFirst();
      if (active) throw new DomainError('invalid', 'Active travel exists');
      const travel = await trx
        .insertInto('travels')
        .values({ account_id: scope.accountId, device_id: vehicle.id, created_by_user_id: scope.userId, start_time: input.startTime })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('travel_waypoints')
        .values([
          { travel_id: travel.id, seq: 1, geofence_id: null, geofence_name: STARTING_WAYPOINT_NAME, expected_arrival: input.startTime },
          ...input.waypoints.map((w, i) => ({
            travel_id: travel.id,
            seq: i + 2,
            geofence_id: idByName.get(w.geofenceName)!,
            geofence_name: w.geofenceName,
            expected_arrival: w.expectedArrival,
          })),
        ])
        .execute();
      return travel.id;
    });
    const created = await visibleTravel(db, scope, id);
    if (!created) throw new Error(`travel ${id} vanished after creation`);
    return created;
  } catch (error) {
    if (isUniqueViolation(error, 'travels_one_active_idx')) throw new DomainError('invalid', 'Active travel exists');
    // A geofence deleted between the name lookup and the waypoint insert: as if it had never been there.
    if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw new DomainError('invalid', 'Geofence not found');
    throw error;
  }
}

export async function visibleTravel(db: Db, scope: AccessScope, id: number): Promise<TravelRecord | undefined> {
  const row = await visibleTravels(db, scope).selectAll('t').select('d.name as vehicle_name').where('t.id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  const { vehicle_name, ...travel } = row;
  const waypoints = await waypointsOf(db, [travel.id]);
  return { travel, vehicleName: vehicle_name, waypoints: waypoints.get(travel.id) ?? [] };
}

/** Scheduled and In progress travels the scope may see, earliest start first. */
export async function activeTravels(db: Db, scope: AccessScope): Promise<TravelRecord[]> {
  const rows = await visibleTravels(db, scope)
    .selectAll('t')
    .select('d.name as vehicle_name')
    .where('t.status', 'in', ACTIVE_STATUSES)
    .orderBy('t.start_time')
    .orderBy('t.id')
    .execute();
  const waypoints = await waypointsOf(db, rows.map((r) => r.id));
  return rows.map(({ vehicle_name, ...travel }) => ({ travel, vehicleName: vehicle_name, waypoints: waypoints.get(travel.id) ?? [] }));
}

const STATUS_NAMES: Record<TravelStatusCode, string> = { 0: 'Scheduled', 1: 'In progress', 2: 'Completed', 3: 'Cancelled' };

export function travelStatusName(status: TravelStatusCode): string {
  return STATUS_NAMES[status];
}

/** Cancels a Scheduled or In progress travel and every waypoint still pending, and logs `travel.cancelled` with it. */
export async function cancelTravel(db: Db, scope: AccessScope, id: number): Promise<Travel> {
  return inTransaction(db, async (trx) => {
    const visible = await visibleTravels(trx, scope).select(['t.id', 't.status']).where('t.id', '=', id).executeTakeFirst();
    if (!visible) throw new DomainError('not_found', 'Travel not found');
    // The row lock orders this against the engine moving the same travel forward.
    const locked = await trx.selectFrom('travels').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    if (!ACTIVE_STATUSES.includes(locked.status)) {
      throw new DomainError('invalid', `Travel ${id} cannot be cancelled: its status is ${travelStatusName(locked.status)}`);
    }
    const cancelled = await trx
      .updateTable('travels')
      .set({ status: TravelStatus.Cancelled, cancelled_at: sql`now()` })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx.updateTable('travel_waypoints').set({ status: 'cancelled' }).where('travel_id', '=', id).where('status', '=', 'pending').execute();
    // Last: appending holds the log's lock until the commit (see appendEvents).
    await appendEvents(trx, [travelCancelledEvent({ id, deviceId: cancelled.device_id }, cancelled.cancelled_at ?? new Date())]);
    return cancelled;
  });
}
