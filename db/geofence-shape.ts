import { DomainError } from '../domain/domain-error.ts';

export type GeofenceShape =
  | { kind: 'polygon'; geometry: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown } }
  | { kind: 'circle'; lat: number; lng: number; radiusMeters: number };

/** The largest circle accepted (API and CLI alike): larger is almost always a unit mistake (km for m). */
export const MAX_CIRCLE_RADIUS_M = 100_000;

const invalid = (message: string) => new DomainError('invalid', message);

function checkPosition(position: unknown, path: string): void {
  if (!Array.isArray(position) || position.length < 2 || position.length > 3 || !position.every((n) => typeof n === 'number' && Number.isFinite(n))) {
    throw invalid(`${path} must be a position [lng, lat] (numbers, an altitude may follow), got ${JSON.stringify(position)?.slice(0, 80)}`);
  }
  const [lng, lat] = position as number[];
  if (Math.abs(lng!) > 180) throw invalid(`${path} has longitude ${lng}, outside -180..180 (GeoJSON positions are [lng, lat])`);
  if (Math.abs(lat!) > 90) throw invalid(`${path} has latitude ${lat}, outside -90..90 (GeoJSON positions are [lng, lat])`);
}

function checkRing(ring: unknown, path: string): void {
  if (!Array.isArray(ring)) throw invalid(`${path} must be a ring: an array of [lng, lat] positions`);
  ring.forEach((position, i) => checkPosition(position, `${path}.${i}`));
  const positions = ring as number[][];
  if (positions.length < 4) throw invalid(`${path} has ${positions.length} positions; a ring needs at least 4 (3 distinct, then the first again)`);
  const [first, last] = [positions[0]!, positions[positions.length - 1]!];
  if (first[0] !== last[0] || first[1] !== last[1]) throw invalid(`${path} is not closed: its last position must repeat its first (GeoJSON rings are closed)`);
}

function checkPolygon(rings: unknown, path: string): void {
  if (!Array.isArray(rings) || rings.length === 0) throw invalid(`${path} must be a polygon: an array of rings, the outline first`);
  rings.forEach((ring, i) => checkRing(ring, `${path}.${i}`));
}

/**
 * Refuses what a geofence cannot be, before any SQL: a circle's center out of range or its radius not in
 * (0, 100 km]; GeoJSON whose structure is not a Polygon or MultiPolygon of closed rings of in-range
 * [lng, lat] numbers. Checked here because PostGIS reads a malformed position (a string, say) as 0
 * rather than refusing it. Whether the rings cross is PostGIS's to say (see insertGeofence).
 */
export function checkGeofenceShape(shape: GeofenceShape): void {
  if (shape.kind === 'circle') {
    const { lat, lng, radiusMeters } = shape;
    if (!(Math.abs(lat) <= 90)) throw invalid(`center.lat must be between -90 and 90, got ${lat}`);
    if (!(Math.abs(lng) <= 180)) throw invalid(`center.lng must be between -180 and 180, got ${lng}`);
    if (!(radiusMeters > 0 && radiusMeters <= MAX_CIRCLE_RADIUS_M)) {
      throw invalid(`radiusMeters must be more than 0 and at most ${MAX_CIRCLE_RADIUS_M} (100 km), got ${radiusMeters}`);
    }
    return;
  }
  const { type, coordinates } = shape.geometry;
  if (type === 'Polygon') return checkPolygon(coordinates, 'geometry.coordinates');
  if (type !== 'MultiPolygon') throw invalid(`geometry.type must be Polygon or MultiPolygon, got ${String(type)}`);
  if (!Array.isArray(coordinates) || coordinates.length === 0) throw invalid('geometry.coordinates must be a MultiPolygon: an array of at least one polygon');
  coordinates.forEach((polygon, i) => checkPolygon(polygon, `geometry.coordinates.${i}`));
}
