import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import { fenceShapeFromRow, type FenceShape } from './fence-shape.ts';
import { GeofenceIndex } from './geofence-index.ts';

interface ShapeRow {
  id: number;
  account_id: number;
  kind: string;
  center_lat: number;
  center_lng: number;
  radius_m: number;
  geojson: string | null;
}

// A circle's 64-gon is not read: circles are tested by center and radius. 15 decimals keep what matters of
// every stored double (1e-15° is a nanometre); the default of 9 would round vertices to 0.1 mm.
function shapeRows(db: Db, where: RawBuilder<unknown>) {
  return sql<ShapeRow>`
    SELECT id, account_id, kind, center_lat, center_lng, radius_m,
      CASE WHEN kind = 'circle' THEN NULL ELSE ST_AsGeoJSON(geom, 15) END AS geojson
    FROM geofences ${where} ORDER BY id
  `.execute(db);
}

/**
 * Reads the geofences of one account (or of every account) and builds one membership index per account.
 * Circles are indexed by their exact center and radius, not by the 64-gon stored for them in `geom`.
 * An account without geofences gets an empty index when asked for by id, and no entry otherwise.
 */
export async function loadGeofenceShapes(db: Db, accountId?: number): Promise<Map<number, GeofenceIndex>> {
  const { rows } = await shapeRows(db, accountId === undefined ? sql`` : sql`WHERE account_id = ${accountId}`);
  const indexes = new Map<number, GeofenceIndex>();
  if (accountId !== undefined) indexes.set(accountId, new GeofenceIndex());
  for (const row of rows) {
    let index = indexes.get(row.account_id);
    if (!index) indexes.set(row.account_id, (index = new GeofenceIndex()));
    index.set(fenceShapeFromRow(row));
  }
  return indexes;
}

/** The shapes and accounts of the given geofences, in one query; a geofence that no longer exists is absent. */
export async function loadGeofenceShapesById(db: Db, ids: number[]): Promise<Map<number, { accountId: number; shape: FenceShape }>> {
  const found = new Map<number, { accountId: number; shape: FenceShape }>();
  if (ids.length === 0) return found;
  const { rows } = await shapeRows(db, sql`WHERE id = ANY(${ids}::int[])`);
  for (const row of rows) found.set(row.id, { accountId: row.account_id, shape: fenceShapeFromRow(row) });
  return found;
}
