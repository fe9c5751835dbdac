import { sql, type RawBuilder } from 'kysely';

/** PostGIS expressions, in one place. Coordinates are WGS 84 (SRID 4326), longitude first as PostGIS expects. */

/** GeoJSON positions may carry an altitude; it is dropped, as a geofence is a 2-D area (and the column 2-D). */
export function geometryFromGeoJson(geometry: unknown): RawBuilder<unknown> {
  return sql`ST_SetSRID(ST_Force2D(ST_GeomFromGeoJSON(${JSON.stringify(geometry)})), 4326)`;
}

export function point(lat: number, lng: number): RawBuilder<unknown> {
  return sql`ST_SetSRID(ST_MakePoint(${lng}::float8, ${lat}::float8), 4326)`;
}

/** A circle as a 64-sided polygon; the buffer is computed on the geography so the radius is true metres. */
export function circlePolygon(lat: number, lng: number, radiusMeters: number): RawBuilder<unknown> {
  return sql`ST_Buffer(${point(lat, lng)}::geography, ${radiusMeters}::float8, 'quad_segs=16')::geometry`;
}
