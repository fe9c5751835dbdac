import type { VehicleTotals } from '../../db/trip-report.ts';
import type { MaintenanceItem } from '../../db/maintenance.ts';
import { csvFile, type CsvCell } from '../../domain/csv-field.ts';
import { tripKpis } from '../../domain/trips/trip-kpis.ts';
import {
  currentReading, DEFAULT_DUE_SOON, MAINTENANCE_UNITS, maintenanceStatus, remaining, type MaintenanceStatus,
} from '../../domain/maintenance/maintenance-schedule.ts';
import { formatDuration } from '../../domain/time/format-duration.ts';
import { formatLocal } from '../../domain/time/zoned-time.ts';

/**
 * The scheduled report's tables, each one CSV file with the columns, names and units of the API's
 * report it summarises (docs/api/reports.md, docs/api/maintenance.md): per-vehicle trip KPIs as the
 * trips report's `summary`, geofence visits as the geofence report's `visits`, maintenance items as
 * the maintenance report lists them.
 */

export interface ReportVehicle {
  id: number;
  imei: string;
  name: string;
}

/** As GET /reports/trips's `summary` of each vehicle. */
export const TRIP_COLUMNS = ['deviceId', 'deviceName', 'tripCount', 'distanceKm', 'drivingS', 'idleS', 'overspeedS', 'maxSpeedKmh', 'utilisation'] as const;

/** As GET /reports/geofences's `visits`. */
export const VISIT_COLUMNS = ['deviceId', 'deviceName', 'geofenceName', 'entryTime', 'exitTime', 'duration'] as const;

/** As GET /reports/maintenance's items, flattened: the vehicle's IMEI and name, the last service's date. */
export const MAINTENANCE_COLUMNS = [
  'id', 'vehicleId', 'vehicleName', 'name', 'kind', 'unit', 'interval', 'tolerance', 'nextDue', 'current', 'remaining', 'status', 'lastServiceOn',
] as const;

/** Every vehicle of the report, zeros for one that did not move; in the vehicles' order. */
export function tripsCsv(vehicles: readonly ReportVehicle[], totals: ReadonlyMap<number, VehicleTotals>, rangeS: number): string {
  return csvFile(TRIP_COLUMNS, vehicles.map((v) => {
    const own = totals.get(v.id);
    const k = tripKpis(own ? [own] : [], rangeS);
    return [v.imei, v.name, k.tripCount, k.distanceKm, k.drivingS, k.idleS, k.overspeedS, k.maxSpeedKmh, k.utilisation];
  }));
}

export interface VisitRow {
  imei: string;
  deviceName: string;
  geofenceName: string;
  entry_time: Date;
  exit_time: Date | null;
}

/** Visits with their true entry and exit times; one still open has no exit and its duration up to `now`. */
export function visitsCsv(visits: readonly VisitRow[], timeZone: string, now: Date): string {
  return csvFile(VISIT_COLUMNS, visits.map((r) => [
    r.imei, r.deviceName, r.geofenceName, formatLocal(r.entry_time, timeZone), r.exit_time ? formatLocal(r.exit_time, timeZone) : null,
    formatDuration((r.exit_time ?? now).getTime() - r.entry_time.getTime()),
  ]));
}

/** What needs attention, as the maintenance report lists by default: due soon, due, overdue (its default windows). */
export const ATTENTION: readonly MaintenanceStatus[] = ['overdue', 'due', 'dueSoon'];

export interface MaintenanceLine {
  item: MaintenanceItem;
  status: MaintenanceStatus;
  current: number | string | null;
  remaining: number | null;
}

/** Items that need attention, most urgent first: overdue, due, due soon; within each, by what remains as a share of the interval. */
export function maintenanceNeedingAttention(items: readonly MaintenanceItem[], now: Date): MaintenanceLine[] {
  const rank = (s: MaintenanceStatus) => ATTENTION.indexOf(s);
  return items
    .map((item) => {
      const current = currentReading(item.kind, item, now);
      return { item, current, remaining: remaining(item, current), status: maintenanceStatus(item, current, DEFAULT_DUE_SOON) };
    })
    .filter((l) => ATTENTION.includes(l.status))
    .sort((a, b) => rank(a.status) - rank(b.status) || (a.remaining ?? Infinity) / a.item.interval - (b.remaining ?? Infinity) / b.item.interval || a.item.id - b.item.id);
}

export function maintenanceCsv(lines: readonly MaintenanceLine[]): string {
  return csvFile(MAINTENANCE_COLUMNS, lines.map(({ item: m, status, current, remaining: left }): CsvCell[] => [
    m.id, m.imei, m.vehicleName, m.name, m.kind, MAINTENANCE_UNITS[m.kind], m.interval, m.tolerance, m.nextDue, current, left, status,
    m.lastService?.performedOn ?? null,
  ]));
}
