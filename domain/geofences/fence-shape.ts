/**
 * A geofence's exact shape as the membership index takes it. Coordinates are GeoJSON order,
 * [longitude, latitude] in degrees; polygons are tested in that plane, as PostGIS geometry does.
 */
export type FenceShape =
  | { id: number; kind: 'polygon'; geometry: PolygonGeometry }
  | { id: number; kind: 'circle'; lat: number; lng: number; radiusM: number };

export type Ring = ReadonlyArray<readonly [number, number] | readonly number[]>;
export type PolygonGeometry =
  | { type: 'Polygon'; coordinates: ReadonlyArray<Ring> }
  | { type: 'MultiPolygon'; coordinates: ReadonlyArray<ReadonlyArray<Ring>> };

/**
 * PostGIS's sphere for geography distances with `use_spheroid = false`: the WGS 84 mean radius (2a + b) / 3.
 * Circles use it so "inside" means the same here as `ST_DWithin(center::geography, pt::geography, r, false)`.
 */
export const EARTH_RADIUS_M = 6_371_008.771_415;

const RAD = Math.PI / 180;

/** Great-circle (haversine) distance in metres on the sphere of EARTH_RADIUS_M. */
export function haversineMetres(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const sLat = Math.sin(((lat2 - lat1) * RAD) / 2);
  const sLng = Math.sin(((lng2 - lng1) * RAD) / 2);
  const h = sLat * sLat + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * sLng * sLng;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The polygon parts of a geometry, each a list of rings (outer first), as a MultiPolygon's coordinates. */
export function polygonParts(geometry: PolygonGeometry): ReadonlyArray<ReadonlyArray<Ring>> {
  if (geometry.type === 'Polygon') return [geometry.coordinates];
  if (geometry.type === 'MultiPolygon') return geometry.coordinates;
  throw new TypeError(`a polygon geofence needs a Polygon or MultiPolygon, got ${(geometry as { type: unknown }).type}`);
}

/** The shape of a geofence row: a circle by its exact center and radius, a polygon by its GeoJSON. */
export function fenceShapeFromRow(row: {
  id: number;
  kind: string;
  center_lat: number;
  center_lng: number;
  radius_m: number;
  geojson: string | null;
}): FenceShape {
  if (row.kind === 'circle') return { id: row.id, kind: 'circle', lat: row.center_lat, lng: row.center_lng, radiusM: row.radius_m };
  if (row.geojson === null) throw new TypeError(`geofence ${row.id}: a polygon without geometry`);
  return { id: row.id, kind: 'polygon', geometry: JSON.parse(row.geojson) as PolygonGeometry };
}
