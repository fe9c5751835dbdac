import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import type { DeviceMode } from './schema.ts';

/** A geofence as the engine's membership index reads it: a circle by center and radius, a polygon as GeoJSON. */
export interface GeofenceShapeRow {
  id: number;
  account_id: number;
  mode: DeviceMode;
  kind: string;
  center_lat: number;
  center_lng: number;
  radius_m: number;
  geojson: string | null;
}

// A circle's 64-gon is not read: circles are tested by center and radius. 15 decimals keep what matters of
// every stored double (1e-15° is a nanometre); the default of 9 would round vertices to 0.1 mm.
async function shapeRows(db: Db, where: RawBuilder<unknown>): Promise<GeofenceShapeRow[]> {
  const { rows } = await sql<GeofenceShapeRow>`
    SELECT id, account_id, mode, kind, center_lat, center_lng, radius_m,
      CASE WHEN kind = 'circle' THEN NULL ELSE ST_AsGeoJSON(geom, 15) END AS geojson
    FROM geofences ${where} ORDER BY id
  `.execute(db);
  return rows;
}

/** The shapes of the geofences of one mode: one account's, or every account's. */
export function geofenceShapeRows(db: Db, mode: DeviceMode, accountId?: number): Promise<GeofenceShapeRow[]> {
  return shapeRows(db, accountId === undefined ? sql`WHERE mode = ${mode}` : sql`WHERE account_id = ${accountId} AND mode = ${mode}`);
}

/** The shapes of the given geofences, in one query; a geofence that no longer exists is absent. */
export function geofenceShapeRowsById(db: Db, ids: number[]): Promise<GeofenceShapeRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return shapeRows(db, sql`WHERE id = ANY(${ids}::int[])`);
}
