import { sql } from 'kysely';
import type { EventPosition } from '../domain/events/event-payloads.ts';
import { lastPosition } from '../domain/events/event-payloads.ts';
import type { MaintenanceKind, Threshold } from '../domain/maintenance/maintenance-schedule.ts';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import { engineHoursSql, shownOdometerKmSql } from './vehicle-accumulators.ts';

/**
 * A vehicle's maintenance items and their services (docs/api/maintenance.md). The readings items are
 * compared with are those GET /vehicles/{id}/accumulators reports, by the same SQL: the odometer the
 * vehicle shows (the tracker's own, else the server's) and the server's engine hours.
 */

/** Joins the reading's tables for `devices d`. */
const readingJoins = sql`
  LEFT JOIN device_states s ON s.device_id = d.id
  LEFT JOIN device_engine_states e ON e.device_id = d.id
  LEFT JOIN vehicle_baselines b ON b.device_id = d.id`;

/** What the scope may see of devices `d`. */
const visible = (scope: AccessScope) => sql`
  d.account_id = ${scope.accountId} AND d.mode = ${scope.mode}
  AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.device_id = d.id AND ud.user_id = ${scope.userId})`;

export interface VehicleReading {
  deviceId: number;
  imei: string;
  name: string;
  /** As GET /vehicles/{id}/accumulators reports `odometerKm` (unrounded); null before there is one. */
  odometerKm: number | null;
  engineHours: number | null;
}

export interface MaintenanceItem {
  id: number;
  deviceId: number;
  imei: string;
  vehicleName: string;
  name: string;
  kind: MaintenanceKind;
  interval: number;
  tolerance: number;
  nextDue: Threshold;
  dueLogged: string | null;
  overdueLogged: string | null;
  odometerKm: number | null;
  engineHours: number | null;
  createdAt: Date;
  updatedAt: Date;
  lastService: { performedOn: string; odometerKm: number | null; engineHours: number | null } | null;
}

interface ItemRow {
  id: number; device_id: number; imei: string; vehicle_name: string; name: string; kind: MaintenanceKind; interval: number; tolerance: number;
  next_due: number | null; next_due_date: string | null; due_logged: string | null; overdue_logged: string | null;
  odometer_km: number | null; engine_hours: number | null; created_at: Date; updated_at: Date;
  last_performed_on: string | null; last_odometer_km: number | null; last_engine_hours: number | null;
  latitude: number | null; longitude: number | null; speed_kmh: number | null; heading: number | null; fix_time: Date | null;
}

const itemColumns = sql`
  m.id, m.device_id, d.imei, d.name AS vehicle_name, m.name, m.kind, m.interval, m.tolerance, m.next_due, m.next_due_date::text AS next_due_date,
  m.due_logged, m.overdue_logged, ${shownOdometerKmSql} AS odometer_km, ${engineHoursSql} AS engine_hours, m.created_at, m.updated_at,
  ls.performed_on::text AS last_performed_on, ls.odometer_km AS last_odometer_km, ls.engine_hours AS last_engine_hours,
  s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time`;

const itemFrom = sql`
  FROM maintenance_items m
  JOIN devices d ON d.id = m.device_id
  ${readingJoins}
  LEFT JOIN LATERAL (
    SELECT x.performed_on, x.odometer_km, x.engine_hours FROM maintenance_services x WHERE x.item_id = m.id ORDER BY x.id DESC LIMIT 1
  ) ls ON true`;

function item(r: ItemRow): MaintenanceItem {
  return {
    id: r.id, deviceId: r.device_id, imei: r.imei, vehicleName: r.vehicle_name, name: r.name, kind: r.kind, interval: r.interval, tolerance: r.tolerance,
    nextDue: r.kind === 'calendar' ? r.next_due_date! : r.next_due!, dueLogged: r.due_logged, overdueLogged: r.overdue_logged,
    odometerKm: r.odometer_km, engineHours: r.engine_hours, createdAt: r.created_at, updatedAt: r.updated_at,
    lastService: r.last_performed_on === null ? null : { performedOn: r.last_performed_on, odometerKm: r.last_odometer_km, engineHours: r.last_engine_hours },
  };
}

/** A visible vehicle, by IMEI, with its readings; undefined when the scope does not see it. */
export async function visibleVehicleReading(db: Db, scope: AccessScope, imei: string): Promise<VehicleReading | undefined> {
  const { rows } = await sql<{ id: number; imei: string; name: string; odometer_km: number | null; engine_hours: number | null }>`
    SELECT d.id, d.imei, d.name, ${shownOdometerKmSql} AS odometer_km, ${engineHoursSql} AS engine_hours
    FROM devices d ${readingJoins}
    WHERE d.imei = ${imei} AND ${visible(scope)}
  `.execute(db);
  const r = rows[0];
  return r && { deviceId: r.id, imei: r.imei, name: r.name, odometerKm: r.odometer_km, engineHours: r.engine_hours };
}

export interface NewMaintenanceItem {
  deviceId: number;
  name: string;
  kind: MaintenanceKind;
  interval: number;
  tolerance: number;
  nextDue: Threshold;
}

const dueColumns = (kind: MaintenanceKind, nextDue: Threshold) =>
  kind === 'calendar' ? { next_due: null, next_due_date: String(nextDue) } : { next_due: Number(nextDue), next_due_date: null };

export async function insertMaintenanceItem(db: Db, item: NewMaintenanceItem): Promise<number> {
  const row = await db
    .insertInto('maintenance_items')
    .values({ device_id: item.deviceId, name: item.name, kind: item.kind, interval: item.interval, tolerance: item.tolerance, ...dueColumns(item.kind, item.nextDue) })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** One visible item, with its vehicle's readings; `lock` holds it for the caller's transaction. */
export async function findMaintenanceItem(db: Db, scope: AccessScope, id: number, lock = false): Promise<MaintenanceItem | undefined> {
  const { rows } = await sql<ItemRow>`
    SELECT ${itemColumns} ${itemFrom}
    WHERE m.id = ${id} AND ${visible(scope)}
    ${lock ? sql`FOR UPDATE OF m` : sql``}
  `.execute(db);
  return rows[0] && item(rows[0]);
}

export interface MaintenancePageQuery {
  /** Only this vehicle's (an IMEI). */
  imei?: string;
  afterId?: number;
  /** Rows asked for: `limit + 1` are read, to tell whether there are more. */
  limit: number;
}

/** Visible items by id. */
export async function maintenancePage(db: Db, scope: AccessScope, page: MaintenancePageQuery): Promise<MaintenanceItem[]> {
  const { rows } = await sql<ItemRow>`
    SELECT ${itemColumns} ${itemFrom}
    WHERE ${visible(scope)}
      ${page.imei === undefined ? sql`` : sql`AND d.imei = ${page.imei}`}
      ${page.afterId === undefined ? sql`` : sql`AND m.id > ${page.afterId}`}
    ORDER BY m.id
    LIMIT ${page.limit + 1}
  `.execute(db);
  return rows.map(item);
}

/** Every visible item, for the fleet report. */
export async function visibleMaintenanceItems(db: Db, scope: AccessScope): Promise<MaintenanceItem[]> {
  const { rows } = await sql<ItemRow>`SELECT ${itemColumns} ${itemFrom} WHERE ${visible(scope)} ORDER BY d.name, d.imei, m.id`.execute(db);
  return rows.map(item);
}

export interface MaintenanceItemChange {
  name?: string;
  interval?: number;
  tolerance?: number;
  nextDue?: Threshold;
}

/** Changes an item already found (and locked) in the caller's transaction. */
export async function updateMaintenanceItem(db: Db, found: MaintenanceItem, change: MaintenanceItemChange): Promise<void> {
  await db
    .updateTable('maintenance_items')
    .set({
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.interval !== undefined ? { interval: change.interval } : {}),
      ...(change.tolerance !== undefined ? { tolerance: change.tolerance } : {}),
      ...(change.nextDue !== undefined ? dueColumns(found.kind, change.nextDue) : {}),
      updated_at: new Date(),
    })
    .where('id', '=', found.id)
    .execute();
}

/** Deletes a visible item with its services; whether there was one. */
export async function deleteMaintenanceItem(db: Db, scope: AccessScope, id: number): Promise<boolean> {
  const { rows } = await sql<{ id: number }>`
    DELETE FROM maintenance_items m USING devices d
    WHERE m.id = ${id} AND d.id = m.device_id AND ${visible(scope)}
    RETURNING m.id
  `.execute(db);
  return rows.length > 0;
}

export interface MaintenanceService {
  id: number;
  itemId: number;
  performedOn: string;
  odometerKm: number | null;
  engineHours: number | null;
  note: string | null;
  cost: number | null;
  nextDue: Threshold;
  createdAt: Date;
}

export type NewMaintenanceService = Omit<MaintenanceService, 'id' | 'createdAt'>;

/** Records a service of an item found (and locked) in the caller's transaction, and moves its threshold. */
export async function recordMaintenanceService(db: Db, found: MaintenanceItem, service: NewMaintenanceService): Promise<MaintenanceService> {
  const due = dueColumns(found.kind, service.nextDue);
  const row = await db
    .insertInto('maintenance_services')
    .values({
      item_id: found.id, performed_on: service.performedOn, odometer_km: service.odometerKm, engine_hours: service.engineHours,
      note: service.note, cost: service.cost, ...due,
    })
    .returning(['id', 'created_at'])
    .executeTakeFirstOrThrow();
  await db.updateTable('maintenance_items').set({ ...due, updated_at: new Date() }).where('id', '=', found.id).execute();
  return { ...service, id: row.id, createdAt: row.created_at };
}

/** An item's services, newest first. */
export async function maintenanceServices(db: Db, itemId: number, limit: number): Promise<MaintenanceService[]> {
  const { rows } = await sql<{
    id: number; item_id: number; performed_on: string; odometer_km: number | null; engine_hours: number | null; note: string | null; cost: number | null;
    next_due: number | null; next_due_date: string | null; created_at: Date;
  }>`
    SELECT id, item_id, performed_on::text AS performed_on, odometer_km, engine_hours, note, cost, next_due, next_due_date::text AS next_due_date, created_at
    FROM maintenance_services WHERE item_id = ${itemId} ORDER BY performed_on DESC, id DESC LIMIT ${limit}
  `.execute(db);
  return rows.map((r) => ({
    id: r.id, itemId: r.item_id, performedOn: r.performed_on, odometerKm: r.odometer_km, engineHours: r.engine_hours, note: r.note, cost: r.cost,
    nextDue: r.next_due_date ?? r.next_due!, createdAt: r.created_at,
  }));
}

// ---------------------------------------------------------------------------------------------
// The engine's check

export interface CheckedItem extends MaintenanceItem {
  /** The vehicle's last known position, for the event. */
  position: EventPosition | null;
}

/**
 * Items that may have an alert to log: not yet logged overdue for their current threshold, and with
 * the vehicle within a unit of it or past it (the day before, for calendar items). That is a superset
 * of those due (domain/maintenance/maintenance-schedule.ts decides exactly, on the rounded reading);
 * it keeps the rows read each check to the few near their thresholds.
 */
export async function maintenanceToCheck(db: Db, today: string): Promise<CheckedItem[]> {
  const { rows } = await sql<ItemRow>`
    SELECT m.id, m.device_id, d.imei, d.name AS vehicle_name, m.name, m.kind, m.interval, m.tolerance, m.next_due, m.next_due_date::text AS next_due_date,
      m.due_logged, m.overdue_logged, r.odometer_km, r.engine_hours, m.created_at, m.updated_at,
      NULL AS last_performed_on, NULL AS last_odometer_km, NULL AS last_engine_hours,
      s.latitude, s.longitude, s.speed_kmh, s.heading, s.fix_time
    FROM maintenance_items m
    JOIN devices d ON d.id = m.device_id
    ${readingJoins}
    CROSS JOIN LATERAL (SELECT ${shownOdometerKmSql} AS odometer_km, ${engineHoursSql} AS engine_hours) r
    WHERE m.overdue_logged IS DISTINCT FROM coalesce(m.next_due_date::text, m.next_due::text)
      AND CASE m.kind
        WHEN 'calendar' THEN m.next_due_date <= ${today}::date + 1
        WHEN 'odometer' THEN r.odometer_km >= m.next_due - 1
        ELSE r.engine_hours >= m.next_due - 1 END
    ORDER BY m.id
  `.execute(db);
  return rows.map((r) => ({ ...item(r), position: lastPosition(r) }));
}

/**
 * Records that items' alerts were logged for their thresholds, for those not yet recorded and still
 * at that threshold (a service may have moved it meanwhile); answers the ids this call recorded. The
 * items are locked in id order first, so two engine processes checking at once never deadlock: the
 * second waits for the first's commit, then finds them recorded.
 */
export async function markMaintenanceAlerts(db: Db, alert: 'due' | 'overdue', items: Array<{ id: number; nextDue: Threshold; key: string }>): Promise<Set<number>> {
  if (items.length === 0) return new Set();
  const ids = items.map((i) => i.id);
  await sql`SELECT id FROM maintenance_items WHERE id = ANY(${ids}::int[]) ORDER BY id FOR UPDATE`.execute(db);
  const column = alert === 'due' ? sql`due_logged` : sql`overdue_logged`;
  const { rows } = await sql<{ id: number }>`
    UPDATE maintenance_items m SET ${column} = u.key
    FROM unnest(${ids}::int[], ${items.map((i) => i.key)}::text[],
      ${items.map((i) => (typeof i.nextDue === 'number' ? i.nextDue : null))}::float8[],
      ${items.map((i) => (typeof i.nextDue === 'string' ? i.nextDue : null))}::date[]) AS u(id, key, next_due, next_due_date)
    WHERE m.id = u.id AND m.${column} IS DISTINCT FROM u.key
      AND m.next_due IS NOT DISTINCT FROM u.next_due AND m.next_due_date IS NOT DISTINCT FROM u.next_due_date
    RETURNING m.id
  `.execute(db);
  return new Set(rows.map((r) => r.id));
}
