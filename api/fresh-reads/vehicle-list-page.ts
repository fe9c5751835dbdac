import type { VehicleListRow, VehicleStatus } from '../../db/vehicles.ts';
import { classifyDeviceStatus, type DeviceStatusThresholds } from '../../domain/device-status.ts';
import { positionKey, type VehicleList } from './latest-state-reads.ts';

export interface VehicleListQuery {
  after?: { name: string; imei: string };
  statuses?: readonly VehicleStatus[];
  q?: string;
  limit: number;
  thresholds: DeviceStatusThresholds;
}

const ASCII = /^[\x20-\x7e]*$/;

/**
 * A page of GET /vehicles cut from the scope's latest list, as `vehiclePage` would read it from the
 * database at the list's read time: `limit + 1` rows in (name, IMEI) order. Undefined when only the
 * database can answer the same: a cursor whose vehicle is no longer in the list at that place (renamed
 * or deleted since: where it would stand is the database's collation to say), or a `q` beyond ASCII
 * (whose lower case JavaScript and PostgreSQL may spell differently).
 */
export function vehicleListPage(list: VehicleList, query: VehicleListQuery): VehicleListRow[] | undefined {
  let start = 0;
  if (query.after) {
    const at = list.positions.get(positionKey(query.after.name, query.after.imei));
    if (at === undefined) return undefined;
    start = at + 1;
  }
  if (query.q !== undefined && !ASCII.test(query.q)) return undefined;
  const needle = query.q?.toLowerCase();
  const wanted = query.statuses ? new Set<string>(query.statuses) : undefined;
  const page: VehicleListRow[] = [];
  for (let i = start; i < list.rows.length && page.length <= query.limit; i++) {
    const row = list.rows[i]!;
    if (needle !== undefined && !row.name.toLowerCase().includes(needle) && !row.plates.toLowerCase().includes(needle)) continue;
    if (wanted) {
      const status = classifyDeviceStatus({ lastReportAt: row.last_report_at, speedKmh: row.speed_kmh, ignition: row.ignition }, list.readAt, query.thresholds);
      if (!wanted.has(status.toLowerCase())) continue;
    }
    page.push(row);
  }
  return page;
}
