import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';
import { checkGeofenceShape, type GeofenceShape } from './geofence-shape.ts';
import { circlePolygon, geometryFromGeoJson, point } from './postgis.ts';
import { TravelStatus, type DeviceMode, type Geofence } from './schema.ts';

export type { GeofenceShape } from './geofence-shape.ts';

/**
 * Whose geofences: an account's in one mode. Test and live keys are separate, as for vehicles: a key
 * finds, changes and names (in travels and reports) only geofences of its own mode. An AccessScope is one.
 */
export interface GeofenceOwner {
  accountId: number;
  mode: DeviceMode;
}

export interface NewGeofence {
  accountId: number;
  /** Default live, as a key-less caller (the CLI, the demo) means unless told otherwise. */
  mode?: DeviceMode;
  name: string;
  shape: GeofenceShape;
}

// PostGIS gives a reason with the place in brackets, x (lng) first: "Self-intersection[-98.95 19.05]".
function readableReason(reason: string): string {
  const at = /^(.*)\[(\S+) (\S+)\]$/.exec(reason);
  return at ? `${at[1]} near lng ${at[2]}, lat ${at[3]}` : reason;
}

/**
 * Checks a polygon with PostGIS itself, so what we accept is exactly what the column accepts. It must
 * also span at most 180° of longitude: coordinates are read on a flat lng/lat plane, so a ring drawn
 * across the antimeridian would enclose the rest of the world instead of the few metres meant, and a
 * MultiPolygon split there would get a centroid, a radius and a bounding box (the engine's) as wide as
 * the world.
 */
async function checkGeometry(db: Db, geometry: RawBuilder<unknown>): Promise<void> {
  type Check = { type: string; valid: boolean; reason: string; lng_span: number };
  let row: Check | undefined;
  try {
    ({ rows: [row] } = await sql<Check>`
      SELECT GeometryType(g) AS type, ST_IsValid(g) AS valid, ST_IsValidReason(g) AS reason,
        ST_XMax(g) - ST_XMin(g) AS lng_span
      FROM (SELECT ${geometry} AS g) s
    `.execute(db));
  } catch (error) {
    throw new DomainError('invalid', `geometry is not valid GeoJSON: ${(error as Error).message}`);
  }
  if (!row || (row.type !== 'POLYGON' && row.type !== 'MULTIPOLYGON')) {
    throw new DomainError('invalid', `geometry must be a Polygon or MultiPolygon, got ${row?.type ?? 'nothing'}`);
  }
  if (!row.valid) throw new DomainError('invalid', `geometry is not valid: ${readableReason(row.reason)}`);
  if (row.lng_span > 180) {
    throw new DomainError(
      'invalid',
      `the polygon spans ${Math.round(row.lng_span * 10) / 10}° of longitude: one across the antimeridian (±180°) is not supported; make it two geofences, one each side`,
    );
  }
}

const nameTaken = (name: string, owner: GeofenceOwner) =>
  new DomainError('conflict', `a geofence named "${name}" already exists in account ${owner.accountId} (${owner.mode})`);

function checkedName(raw: string): string {
  const name = raw.trim();
  if (!name || name.length > 200) throw new DomainError('invalid', 'geofence name must be 1 to 200 characters');
  return name;
}

function checkedDwell(name: string, seconds: number | undefined): number | undefined {
  if (seconds === undefined) return undefined;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 86_400) throw new DomainError('invalid', `${name} must be a whole number of seconds from 0 to 86400`);
  return seconds;
}

/**
 * What the API shows, computed from a shape: the center (a circle's own center, a polygon's
 * centroid), the radius (a circle's own, or for a polygon the distance from the center to its farthest
 * vertex), and the vertex list (the outer ring of the largest part, without the closing repeat).
 */
async function shapeColumns(db: Db, shape: GeofenceShape): Promise<RawBuilder<unknown>> {
  checkGeofenceShape(shape);
  const geometry = shape.kind === 'circle' ? circlePolygon(shape.lat, shape.lng, shape.radiusMeters) : geometryFromGeoJson(shape.geometry);
  if (shape.kind === 'polygon') await checkGeometry(db, geometry);
  const center = shape.kind === 'circle' ? point(shape.lat, shape.lng) : sql`ST_Centroid(shape.geom)`;
  const radius =
    shape.kind === 'circle'
      ? sql`${shape.radiusMeters}::float8`
      : sql`(SELECT max(ST_Distance(center.c::geography, p.geom::geography)) FROM ST_DumpPoints(shape.geom) p)`;
  return sql`
    WITH shape AS (SELECT ${geometry} AS geom),
    ring AS (
      SELECT ST_ExteriorRing(part.geom) AS line
      FROM shape, ST_Dump(shape.geom) part
      ORDER BY ST_Area(part.geom) DESC
      LIMIT 1
    ),
    center AS (SELECT ${center} AS c FROM shape)
    SELECT ${shape.kind}::text AS kind, shape.geom, ST_Y(center.c) AS center_lat, ST_X(center.c) AS center_lng, ${radius} AS radius_m,
      ST_NPoints(ring.line) - 1 AS vertex_count,
      (SELECT jsonb_agg(jsonb_build_object('lat', ST_Y(p.geom), 'lng', ST_X(p.geom)) ORDER BY p.path[1])
         FROM ST_DumpPoints(ring.line) p WHERE p.path[1] < ST_NPoints(ring.line)) AS vertices
    FROM shape, ring, center`;
}

export interface NewGeofenceOptions {
  enterDwellSeconds?: number;
  exitDwellSeconds?: number;
}

/** Stores a geofence with what the API shows precomputed (see shapeColumns). */
export async function insertGeofence(db: Db, geofence: NewGeofence & NewGeofenceOptions): Promise<Geofence> {
  const owner: GeofenceOwner = { accountId: geofence.accountId, mode: geofence.mode ?? 'live' };
  const name = checkedName(geofence.name);
  const enter = checkedDwell('enterDwellSeconds', geofence.enterDwellSeconds) ?? 0;
  const exit = checkedDwell('exitDwellSeconds', geofence.exitDwellSeconds) ?? 0;
  const columns = await shapeColumns(db, geofence.shape);
  try {
    const { rows } = await sql<{ id: number }>`
      INSERT INTO geofences (account_id, mode, name, kind, geom, center_lat, center_lng, radius_m, vertex_count, vertices, enter_dwell_s, exit_dwell_s)
      SELECT ${owner.accountId}, ${owner.mode}, ${name}, c.kind, c.geom, c.center_lat, c.center_lng, c.radius_m, c.vertex_count, c.vertices, ${enter}, ${exit}
      FROM (${columns}) c
      RETURNING id
    `.execute(db);
    return await db.selectFrom('geofences').selectAll().where('id', '=', rows[0]!.id).executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name, owner);
    throw error;
  }
}

/** The owner's geofences; another account's or another mode's are not there. */
function ownedGeofences(db: Db, owner: GeofenceOwner) {
  return db.selectFrom('geofences').where('account_id', '=', owner.accountId).where('mode', '=', owner.mode);
}

export async function findGeofence(db: Db, owner: GeofenceOwner, id: number): Promise<Geofence | undefined> {
  return ownedGeofences(db, owner).selectAll().where('id', '=', id).executeTakeFirst();
}

/** Changes what is given; a new shape replaces the old one whole. Undefined when the owner has no such geofence. */
export async function updateGeofence(
  db: Db,
  owner: GeofenceOwner,
  id: number,
  changes: { name?: string; shape?: GeofenceShape } & NewGeofenceOptions,
): Promise<Geofence | undefined> {
  const name = changes.name === undefined ? undefined : checkedName(changes.name);
  const enter = checkedDwell('enterDwellSeconds', changes.enterDwellSeconds);
  const exit = checkedDwell('exitDwellSeconds', changes.exitDwellSeconds);
  const columns = changes.shape ? await shapeColumns(db, changes.shape) : undefined;
  try {
    const { rows } = await sql<{ id: number }>`
      UPDATE geofences g SET
        name = coalesce(${name ?? null}::text, g.name),
        enter_dwell_s = coalesce(${enter ?? null}::int, g.enter_dwell_s),
        exit_dwell_s = coalesce(${exit ?? null}::int, g.exit_dwell_s),
        ${columns
          ? sql`kind = c.kind, geom = c.geom, center_lat = c.center_lat, center_lng = c.center_lng, radius_m = c.radius_m, vertex_count = c.vertex_count, vertices = c.vertices,`
          : sql``}
        updated_at = now()
      ${columns ? sql`FROM (${columns}) c` : sql``}
      WHERE g.id = ${id} AND g.account_id = ${owner.accountId} AND g.mode = ${owner.mode}
      RETURNING g.id
    `.execute(db);
    if (rows.length === 0) return undefined;
    return await db.selectFrom('geofences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name!, owner);
    throw error;
  }
}

/**
 * Deletes a geofence with its crossings and visits. Refused while a Scheduled or In progress travel
 * still has a pending waypoint there: that waypoint could never be reached.
 */
export async function deleteGeofence(db: Db, owner: GeofenceOwner, id: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const geofence = await ownedGeofences(trx, owner).select('id').where('id', '=', id).forUpdate().executeTakeFirst();
    if (!geofence) return false;
    // Travels name geofences of their own mode; one written before geofences had a mode may not, and
    // its id is not for the other mode's keys to see.
    const { rows } = await sql<{ travel_id: number; own: boolean }>`
      SELECT DISTINCT w.travel_id, d.mode = ${owner.mode} AS own
      FROM travel_waypoints w JOIN travels t ON t.id = w.travel_id JOIN devices d ON d.id = t.device_id
      WHERE w.geofence_id = ${id} AND w.status = 'pending' AND t.status IN (${TravelStatus.Scheduled}, ${TravelStatus.InProgress})
      ORDER BY w.travel_id LIMIT 5
    `.execute(trx);
    if (rows.length > 0) {
      const own = rows.filter((r) => r.own).map((r) => r.travel_id);
      const travels = own.length > 0 ? `active travel ${own.join(', ')}` : 'an active travel';
      throw new DomainError('conflict', `geofence ${id} is a pending waypoint of ${travels}; cancel the travel first`);
    }
    await trx.deleteFrom('geofences').where('id', '=', id).execute();
    return true;
  });
}

// Sorted here, not in SQL, so the order does not depend on the database's collation: case-insensitive,
// accents after their base letter, and numbers by value ("Zone 2" before "Zone 10").
const byName = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** The owner's geofences, alphabetically by name. */
export async function geofencesOf(db: Db, owner: GeofenceOwner): Promise<Geofence[]> {
  const rows = await ownedGeofences(db, owner).selectAll().orderBy('id').execute();
  return rows.sort((a, b) => byName.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
}

export async function geofencesByName(db: Db, owner: GeofenceOwner, names: string[]) {
  if (names.length === 0) return [];
  return ownedGeofences(db, owner).select(['id', 'name']).where('name', 'in', names).execute();
}

export async function geofencesById(db: Db, owner: GeofenceOwner, ids: number[]) {
  if (ids.length === 0) return [];
  return ownedGeofences(db, owner).select(['id', 'name']).where('id', 'in', ids).execute();
}

/** The centers of an account's geofences of one mode (default live: the simulator drives live vehicles). */
export async function geofenceCenters(db: Db, accountId: number, mode: DeviceMode = 'live'): Promise<Array<{ latitude: number; longitude: number }>> {
  const rows = await ownedGeofences(db, { accountId, mode }).select(['center_lat', 'center_lng']).orderBy('id').execute();
  return rows.map((r) => ({ latitude: r.center_lat, longitude: r.center_lng }));
}
