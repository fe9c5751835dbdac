import type { AccessScope } from '../../db/access-scope.ts';
import type { Db } from '../../db/database.ts';
import { visibleDeviceStates } from '../../db/devices.ts';
import { visibleVehicleList, type VehicleListRow } from '../../db/vehicles.ts';
import type { DeviceStatusThresholds } from '../../domain/device-status.ts';
import { deviceStatusView } from '../views/device-status-view.ts';
import { FreshCache } from './fresh-cache.ts';

/** The fleet-wide reads are re-read at most this often per caller's scope … */
export const REFRESH_MS = 400;
/**
 * … and never answered from a read older than this: 200 ms short of the promised second, for the
 * answer's own time to the client on a busy server (measured: 4 ms past a second at 1,000 ms).
 */
export const MAX_AGE_MS = 800;

export interface StatusListBody {
  /** The whole answer of GET /devices/status, encoded once for every request it serves. */
  json: Uint8Array;
  readAt: Date;
}

export interface VehicleList {
  /** Every vehicle of the scope, in the database's (name, IMEI) order. */
  rows: VehicleListRow[];
  /** Where each (name, IMEI) stands in `rows`, to continue a cursor without comparing strings as the database's collation does. */
  positions: Map<string, number>;
  readAt: Date;
  /** Answers already encoded from this read, by query: pollers asking the same page share one encoding. */
  answers: Map<string, Uint8Array>;
}

/** Encoded answers kept per read at most (a read lives half a second; distinct queries past this are encoded each time). */
export const MAX_ANSWERS_PER_READ = 1_000;

export const positionKey = (name: string, imei: string) => `${name}\u0000${imei}`;

const scopeKey = (scope: AccessScope) => `${scope.accountId}:${scope.userId}:${scope.mode}`;

/**
 * The latest state of each caller's fleet, for the two fleet-wide reads (GET /devices/status and GET
 * /vehicles), shared by every request of this API process: one database read per scope per 400 ms
 * however many clients poll, and never an answer from a read older than a second. The freshness is
 * by age rather than by invalidation, so it holds in every process and for every kind of change
 * (positions, renames, visibility, deletions) with nothing to publish: each process reads the
 * database, the source of truth, at its own pace.
 */
export class LatestStateReads {
  private readonly statuses = new FreshCache<string, StatusListBody>({ refreshMs: REFRESH_MS, maxAgeMs: MAX_AGE_MS, maxEntries: 10_000 });
  private readonly vehicles = new FreshCache<string, VehicleList>({ refreshMs: REFRESH_MS, maxAgeMs: MAX_AGE_MS, maxEntries: 10_000 });
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly db: Db,
    private readonly thresholds: DeviceStatusThresholds,
  ) {}

  /**
   * Forgets every read: called after a write through this process's API, so its own writes (a vehicle
   * added, renamed, deleted, users changed) show at once to the next request here. Other processes
   * see them within a second, as they see ingest's.
   */
  clear(): void {
    this.statuses.clear();
    this.vehicles.clear();
  }

  statusList(scope: AccessScope): Promise<StatusListBody> {
    return this.statuses.get(scopeKey(scope), async () => {
      const readAt = new Date();
      const rows = await visibleDeviceStates(this.db, scope);
      const data = rows.map((row) => deviceStatusView(row, readAt, this.thresholds));
      // The envelope's timestamp is when the data was read: what a client may compare with lastReportUtc.
      const body = { success: true, data, error: null, timestamp: readAt.toISOString() };
      return { json: this.encoder.encode(JSON.stringify(body)), readAt };
    });
  }

  vehicleList(scope: AccessScope): Promise<VehicleList> {
    return this.vehicles.get(scopeKey(scope), async () => {
      const readAt = new Date();
      const rows = await visibleVehicleList(this.db, scope);
      const positions = new Map<string, number>();
      rows.forEach((row, i) => positions.set(positionKey(row.name, row.imei), i));
      return { rows, positions, readAt, answers: new Map() };
    });
  }
}
