import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import { DomainError, isUniqueViolation } from './domain-error.ts';
import { circlePolygon, geometryFromGeoJson, point } from './postgis.ts';
import type { Geofence } from './schema.ts';

export type GeofenceShape =
  | { kind: 'polygon'; geometry: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown } }
  | { kind: 'circle'; lat: number; lng: number; radiusMeters: number };

export interface NewGeofence {
  accountId: number;
  name: string;
  shape: GeofenceShape;
}

const MAX_CIRCLE_RADIUS_M = 500_000;

function validateShape(shape: GeofenceShape): void {
  if (shape.kind === 'circle') {
    const { lat, lng, radiusMeters } = shape;
    if (!(Math.abs(lat) <= 90) || !(Math.abs(lng) <= 180)) throw new DomainError('invalid', 'circle center is outside -90..90 / -180..180');
    if (!(radiusMeters > 0 && radiusMeters <= MAX_CIRCLE_RADIUS_M)) {
      throw new DomainError('invalid', `circle radius must be more than 0 and at most ${MAX_CIRCLE_RADIUS_M} m`);
    }
  }
}

/** Checks a geometry with PostGIS itself, so what we accept is exactly what the column accepts. */
async function checkGeometry(db: Db, geometry: RawBuilder<unknown>): Promise<void> {
  let row: { type: string; valid: boolean; reason: string } | undefined;
  try {
    ({ rows: [row] } = await sql<{ type: string; valid: boolean; reason: string }>`
      SELECT GeometryType(g) AS type, ST_IsValid(g) AS valid, ST_IsValidReason(g) AS reason FROM (SELECT ${geometry} AS g) s
    `.execute(db));
  } catch (error) {
    throw new DomainError('invalid', `geometry is not valid GeoJSON: ${(error as Error).message}`);
  }
  if (!row || (row.type !== 'POLYGON' && row.type !== 'MULTIPOLYGON')) {
    throw new DomainError('invalid', `geometry must be a Polygon or MultiPolygon, got ${row?.type ?? 'nothing'}`);
  }
  if (!row.valid) throw new DomainError('invalid', `geometry is not valid: ${row.reason}`);
}

/**
 * Stores a geofence with what the API shows precomputed: the center (a circle's own center, a polygon's
 * centroid), the radius (a circle's own, or for a polygon the distance from the center to its farthest
 * vertex), and the vertex list (the outer ring of the largest part, without the closing repeat).
 */
export async function insertGeofence(db: Db, geofence: NewGeofence): Promise<Geofence> {
  const name = geofence.name.trim();
  if (!name || name.length > 200) throw new DomainError('invalid', 'geofence name must be 1 to 200 characters');
  const { shape } = geofence;
  validateShape(shape);
  const geometry = shape.kind === 'circle' ? circlePolygon(shape.lat, shape.lng, shape.radiusMeters) : geometryFromGeoJson(shape.geometry);
  if (shape.kind === 'polygon') await checkGeometry(db, geometry);
  const center = shape.kind === 'circle' ? point(shape.lat, shape.lng) : sql`ST_Centroid(shape.geom)`;
  const radius =
    shape.kind === 'circle'
      ? sql`${shape.radiusMeters}::float8`
      : sql`(SELECT max(ST_Distance(center.c::geography, p.geom::geography)) FROM ST_DumpPoints(shape.geom) p)`;
  try {
    const { rows } = await sql<{ id: number }>`
      WITH shape AS (SELECT ${geometry} AS geom),
      ring AS (
        SELECT ST_ExteriorRing(part.geom) AS line
        FROM shape, ST_Dump(shape.geom) part
        ORDER BY ST_Area(part.geom) DESC
        LIMIT 1
      ),
      center AS (SELECT ${center} AS c FROM shape)
      INSERT INTO geofences (account_id, name, kind, geom, center_lat, center_lng, radius_m, vertex_count, vertices)
      SELECT ${geofence.accountId}, ${name}, ${shape.kind}, shape.geom, ST_Y(center.c), ST_X(center.c), ${radius},
        ST_NPoints(ring.line) - 1,
        (SELECT jsonb_agg(jsonb_build_object('lat', ST_Y(p.geom), 'lng', ST_X(p.geom)) ORDER BY p.path[1])
           FROM ST_DumpPoints(ring.line) p WHERE p.path[1] < ST_NPoints(ring.line))
      FROM shape, ring, center
      RETURNING id
    `.execute(db);
    return await db.selectFrom('geofences').selectAll().where('id', '=', rows[0]!.id).executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError('conflict', `a geofence named "${name}" already exists in account ${geofence.accountId}`);
    throw error;
  }
}

// Sorted here, not in SQL, so the order does not depend on the database's collation: case-insensitive,
// accents after their base letter, and numbers by value ("Zone 2" before "Zone 10").
const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** The account's geofences, alphabetically by name. */
export async function geofencesOfAccount(db: Db, accountId: number): Promise<Geofence[]> {
  const rows = await db.selectFrom('geofences').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  return rows.sort((a, b) => byName.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
}

export async function geofencesByName(db: Db, accountId: number, names: string[]) {
  if (names.length === 0) return [];
  return db.selectFrom('geofences').select(['id', 'name']).where('account_id', '=', accountId).where('name', 'in', names).execute();
}

export async function geofencesById(db: Db, accountId: number, ids: number[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('geofences').select(['id', 'name']).where('account_id', '=', accountId).where('id', 'in', ids).execute();
}

/** The centers of an account's geofences. */
export async function geofenceCenters(db: Db, accountId: number): Promise<Array<{ latitude: number; longitude: number }>> {
  const rows = await db.selectFrom('geofences').select(['center_lat', 'center_lng']).where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map((r) => ({ latitude: r.center_lat, longitude: r.center_lng }));
}
