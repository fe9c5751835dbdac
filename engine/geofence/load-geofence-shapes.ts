import type { Db } from '../../db/database.ts';
import { geofenceShapeRows, geofenceShapeRowsById } from '../../db/geofence-shapes.ts';
import type { DeviceMode } from '../../db/schema.ts';
import { fenceShapeFromRow, type FenceShape } from '../../domain/geofences/fence-shape.ts';
import { GeofenceIndex } from '../../domain/geofences/geofence-index.ts';

/**
 * Reads the geofences of one mode, of one account (or of every account), and builds one membership index
 * per account: a vehicle is evaluated against its own mode's only, so test and live geofences are never
 * in one index. Circles are indexed by their exact center and radius, not by the 64-gon stored for them
 * in `geom`. An account without geofences gets an empty index when asked for by id, and no entry otherwise.
 */
export async function loadGeofenceShapes(db: Db, mode: DeviceMode, accountId?: number): Promise<Map<number, GeofenceIndex>> {
  const rows = await geofenceShapeRows(db, mode, accountId);
  const indexes = new Map<number, GeofenceIndex>();
  if (accountId !== undefined) indexes.set(accountId, new GeofenceIndex());
  for (const row of rows) {
    let index = indexes.get(row.account_id);
    if (!index) indexes.set(row.account_id, (index = new GeofenceIndex()));
    index.set(fenceShapeFromRow(row));
  }
  return indexes;
}

export interface OwnedFenceShape {
  accountId: number;
  mode: DeviceMode;
  shape: FenceShape;
}

/** The shapes, accounts and modes of the given geofences, in one query; a geofence that no longer exists is absent. */
export async function loadGeofenceShapesById(db: Db, ids: number[]): Promise<Map<number, OwnedFenceShape>> {
  const found = new Map<number, OwnedFenceShape>();
  for (const row of await geofenceShapeRowsById(db, ids)) found.set(row.id, { accountId: row.account_id, mode: row.mode, shape: fenceShapeFromRow(row) });
  return found;
}
