import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haversineMetres, type PolygonGeometry } from '../domain/geofences/fence-shape.ts';
import { GeofenceIndex } from '../domain/geofences/geofence-index.ts';
import { loadGeofenceShapes, loadGeofenceShapesById } from '../engine/geofence/load-geofence-shapes.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * The engine's membership index answers as PostGIS does, for every (point, geofence) pair whose point is
 * more than 1 cm from the geofence's boundary: polygons against `ST_Covers(geom, point)`, circles against
 * the sphere distance `ST_DWithin(center::geography, point::geography, radius, false)`. Random shapes and
 * points from a fixed seed; the PostGIS side is two set-wise joins, not a query per point.
 */

const SEED = 20_240_501;
const POLYGONS = 1_000;
const CIRCLES = 150;
const POINTS_PER_FENCE = 90;
const MARGIN_M = 0.01;
const METRES_PER_DEGREE = 111_320;
// Cities at several latitudes; each fence is placed within half a degree of one, so fences overlap.
const CLUSTERS: Array<[number, number]> = [[19.43, -99.13], [-33.45, -70.66], [0.35, 32.58], [51.5, -0.12], [64.14, -21.9], [-45.87, 170.5], [35.68, 139.69], [-1.29, 36.82]];

type Kind = 'convex' | 'star' | 'holes' | 'multi';
interface Fence {
  kind: 'polygon' | 'circle';
  lat: number;
  lng: number;
  radiusM: number;
  geometry?: PolygonGeometry;
  /** [minLng, minLat, maxLng, maxLat] of where its test points are drawn. */
  around: [number, number, number, number];
  edges: number[][][];
}

function fenceRadiusM(random: () => number): number {
  const size = random();
  if (size < 0.15) return 5 + random() * 10; // tiny, ~10 m
  if (size < 0.9) return 100 + random() * 1_900;
  return 30_000 + random() * 30_000; // huge, ~50 km
}

/** A ring star-shaped around (lng, lat): vertex i at an increasing angle and a radius in [minF, maxF] × r. */
function starRing(random: () => number, lat: number, lng: number, radiusM: number, vertices: number, minF: number, maxF: number, clockwise = false): number[][] {
  const ry = radiusM / METRES_PER_DEGREE;
  const rx = ry / Math.cos((lat * Math.PI) / 180);
  const ring = Array.from({ length: vertices }, (_, i) => {
    const a = (((i + random() * 0.8) * 2 * Math.PI) / vertices) * (clockwise ? -1 : 1);
    const f = minF + random() * (maxF - minF);
    return [lng + rx * f * Math.cos(a), lat + ry * f * Math.sin(a)];
  });
  return [...ring, ring[0]!];
}

function polygonFence(random: () => number, kind: Kind, lat: number, lng: number, radiusM: number): Fence {
  const n = () => 8 + Math.floor(random() * 40);
  let parts: number[][][][];
  if (kind === 'convex') parts = [[starRing(random, lat, lng, radiusM, 3 + Math.floor(random() * 45), 1, 1)]];
  else if (kind === 'star') parts = [[starRing(random, lat, lng, radiusM, n(), 0.2, 1)]];
  // With ≥ 8 vertices at ≥ 0.55 r, every edge stays beyond 0.42 r of the center: a hole within 0.35 r fits.
  else if (kind === 'holes') parts = [[starRing(random, lat, lng, radiusM, n(), 0.55, 1), starRing(random, lat, lng, radiusM, n(), 0.1, 0.35, true)]];
  else {
    const count = 2 + Math.floor(random() * 2);
    const step = (2.2 * radiusM) / METRES_PER_DEGREE / Math.cos((lat * Math.PI) / 180);
    parts = Array.from({ length: count }, (_, k) => {
      const x = lng + k * step;
      return random() < 0.5 ? [starRing(random, lat, x, radiusM, n(), 0.2, 1)] : [starRing(random, lat, x, radiusM, n(), 0.55, 1), starRing(random, lat, x, radiusM, n(), 0.1, 0.35)];
    });
  }
  const geometry: PolygonGeometry = parts.length === 1 ? { type: 'Polygon', coordinates: parts[0]! } : { type: 'MultiPolygon', coordinates: parts };
  const all = parts.flat(2);
  const xs = all.map((p) => p[0]!);
  const ys = all.map((p) => p[1]!);
  return { kind: 'polygon', lat, lng, radiusM, geometry, around: [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)], edges: parts.flat() };
}

function circleFence(lat: number, lng: number, radiusM: number): Fence {
  const dy = radiusM / METRES_PER_DEGREE;
  const dx = dy / Math.cos((lat * Math.PI) / 180);
  return { kind: 'circle', lat, lng, radiusM, around: [lng - dx, lat - dy, lng + dx, lat + dy], edges: [] };
}

function makeFences(random: () => number): Fence[] {
  const fences: Fence[] = [];
  const kinds: Kind[] = ['convex', 'star', 'holes', 'multi'];
  for (let i = 0; i < POLYGONS + CIRCLES; i++) {
    const [cLat, cLng] = CLUSTERS[i % CLUSTERS.length]!;
    const lat = cLat + (random() - 0.5);
    const lng = cLng + (random() - 0.5);
    const radiusM = fenceRadiusM(random);
    fences.push(i < POLYGONS ? polygonFence(random, kinds[i % kinds.length]!, lat, lng, radiusM) : circleFence(lat, lng, radiusM));
  }
  return fences;
}

/** Points around each fence: most anywhere in its box grown by a quarter, some a little off one of its edges. */
function makePoints(random: () => number, fences: Fence[]): { xs: number[]; ys: number[] } {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const f of fences) {
    const [x0, y0, x1, y1] = f.around;
    const [gx, gy] = [(x1 - x0) / 4, (y1 - y0) / 4];
    for (let k = 0; k < POINTS_PER_FENCE; k++) {
      if (k % 5 === 0 && f.edges.length > 0) {
        // Off an edge by 2 cm to 2 m, to either side: where an approximate test would slip.
        const ring = f.edges[Math.floor(random() * f.edges.length)]!;
        const e = Math.floor(random() * (ring.length - 1));
        const [a, b] = [ring[e]!, ring[e + 1]!];
        const t = random();
        const [ex, ey] = [b[0]! - a[0]!, b[1]! - a[1]!];
        const length = Math.hypot(ex, ey);
        const off = ((random() < 0.5 ? -1 : 1) * (0.02 + random() * 2)) / METRES_PER_DEGREE;
        xs.push(a[0]! + t * ex - (ey / length) * off);
        ys.push(a[1]! + t * ey + (ex / length) * off);
      } else {
        xs.push(x0 - gx + random() * (x1 - x0 + 2 * gx));
        ys.push(y0 - gy + random() * (y1 - y0 + 2 * gy));
      }
    }
  }
  return { xs, ys };
}

let t: TestDatabase;
let accountId: number;
let fences: Fence[];
let points: { xs: number[]; ys: number[] };
const kindOf = new Map<number, 'polygon' | 'circle'>();
const circleOf = new Map<number, Fence>();

beforeAll(async () => {
  t = await openTestDatabase();
  const random = seededRandom(SEED);
  fences = makeFences(random);
  points = makePoints(random, fences);
  const { rows: accounts } = await sql<{ id: number }>`INSERT INTO accounts (name) VALUES ('Geofence equivalence') RETURNING id`.execute(t.db);
  accountId = accounts[0]!.id;
  const rows = fences.map((f, i) => ({ i, kind: f.kind, geojson: f.geometry ? JSON.stringify(f.geometry) : null, lat: f.lat, lng: f.lng, r: f.radiusM }));
  // Circles are stored as the API stores them: a 64-gon in geom, the exact center and radius beside it.
  const { rows: inserted } = await sql<{ id: number; i: number }>`
    INSERT INTO geofences (account_id, name, kind, geom, center_lat, center_lng, radius_m, vertex_count, vertices)
    SELECT ${accountId}, 'fence ' || x.i, x.kind,
      CASE WHEN x.kind = 'circle'
        THEN ST_Buffer(ST_SetSRID(ST_MakePoint(x.lng, x.lat), 4326)::geography, x.r, 'quad_segs=16')::geometry
        ELSE ST_SetSRID(ST_GeomFromGeoJSON(x.geojson), 4326) END,
      x.lat, x.lng, x.r, 0, '[]'
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(i int, kind text, geojson text, lat float8, lng float8, r float8)
    RETURNING id, substr(name, 7)::int AS i
  `.execute(t.db);
  for (const row of inserted) {
    const fence = fences[row.i]!;
    kindOf.set(row.id, fence.kind);
    if (fence.kind === 'circle') circleOf.set(row.id, fence);
  }
  await sql`CREATE TABLE equivalence_points (id integer PRIMARY KEY, geom geometry(Point, 4326) NOT NULL)`.execute(t.db);
  await sql`
    INSERT INTO equivalence_points
    SELECT i - 1, ST_SetSRID(ST_MakePoint(x, y), 4326) FROM unnest(${points.xs}::float8[], ${points.ys}::float8[]) WITH ORDINALITY AS u(x, y, i)
  `.execute(t.db);
  await sql`CREATE INDEX equivalence_points_geom_idx ON equivalence_points USING gist (geom)`.execute(t.db);
  await sql`ANALYZE equivalence_points`.execute(t.db);
  await sql`ANALYZE geofences`.execute(t.db);
}, 180_000);

afterAll(async () => {
  await t?.destroy();
});

const pairKey = (point: number, fence: number) => point * 1_000_000 + fence;

/** Pairs the engine and PostGIS disagree on farther than the margin from the boundary; the count of all disagreements. */
async function compare(index: GeofenceIndex, postgis: Set<number>, only?: Set<number>) {
  const engine = new Set<number>();
  const out = new Int32Array(256);
  for (let p = 0; p < points.xs.length; p++) {
    const count = index.query(points.ys[p]!, points.xs[p]!, out);
    expect(count).toBeLessThanOrEqual(out.length);
    for (let k = 0; k < count; k++) engine.add(pairKey(p, out[k]!));
  }
  const expected = only ? new Set([...postgis].filter((key) => only.has(key % 1_000_000))) : postgis;
  const disagree: Array<{ p: number; g: number; engine: boolean }> = [];
  for (const key of engine) if (!expected.has(key)) disagree.push({ p: Math.floor(key / 1_000_000), g: key % 1_000_000, engine: true });
  for (const key of expected) if (!engine.has(key)) disagree.push({ p: Math.floor(key / 1_000_000), g: key % 1_000_000, engine: false });

  // A disagreement is allowed only within 1 cm of the boundary, measured on the spheroid (polygons) or
  // on PostGIS's sphere (circles).
  const polygonPairs = disagree.filter((d) => kindOf.get(d.g) === 'polygon');
  const { rows: distances } = polygonPairs.length === 0 ? { rows: [] } : await sql<{ p: number; g: number; d: number }>`
    SELECT u.p, u.g, ST_Distance(ST_Boundary(g.geom)::geography, p.geom::geography) AS d
    FROM unnest(${polygonPairs.map((d) => d.p)}::int[], ${polygonPairs.map((d) => d.g)}::int[]) AS u(p, g)
    JOIN geofences g ON g.id = u.g JOIN equivalence_points p ON p.id = u.p
  `.execute(t.db);
  const far = [
    ...distances.filter((r) => r.d > MARGIN_M).map((r) => ({ ...r, kind: 'polygon' })),
    ...disagree
      .filter((d) => kindOf.get(d.g) === 'circle')
      .map((d) => {
        const c = circleOf.get(d.g)!;
        return { p: d.p, g: d.g, d: Math.abs(haversineMetres(c.lat, c.lng, points.ys[d.p]!, points.xs[d.p]!) - c.radiusM), kind: 'circle' };
      })
      .filter((r) => r.d > MARGIN_M),
  ];
  return { far, disagreements: disagree.length, expected: expected.size };
}

describe('geofence index ≡ PostGIS', () => {
  it(`agrees on ${POLYGONS} polygons and ${CIRCLES} circles × ${(POLYGONS + CIRCLES) * POINTS_PER_FENCE} points, beyond 1 cm of every boundary`, async () => {
    const index: GeofenceIndex = (await loadGeofenceShapes(t.db, 'live', accountId)).get(accountId)!;
    expect(index.size).toBe(POLYGONS + CIRCLES);

    // Both joins use the GiST indexes; circles are pre-filtered by their stored 64-gon's box, grown by ~5 km.
    const { rows: covered } = await sql<{ p: number; g: number }>`
      SELECT p.id AS p, g.id AS g FROM geofences g JOIN equivalence_points p ON ST_Covers(g.geom, p.geom)
      WHERE g.account_id = ${accountId} AND g.kind = 'polygon'
      UNION ALL
      SELECT p.id, g.id FROM geofences g JOIN equivalence_points p ON p.geom && ST_Expand(g.geom, 0.05)
        AND ST_DWithin(ST_SetSRID(ST_MakePoint(g.center_lng, g.center_lat), 4326)::geography, p.geom::geography, g.radius_m, false)
      WHERE g.account_id = ${accountId} AND g.kind = 'circle'
    `.execute(t.db);
    const postgis = new Set(covered.map((r) => pairKey(r.p, r.g)));

    const all = await compare(index, postgis);
    // Sizes from 10 m to 50 km: the index searched its tree.
    expect(index.structure).toBe('tree');
    expect(all.far.slice(0, 10)).toEqual([]);

    // Not a vacuous pass: plenty of inside pairs of both kinds, and few pairs near enough to be excused.
    const insideCircles = covered.filter((r) => kindOf.get(r.g) === 'circle').length;
    expect(covered.length - insideCircles).toBeGreaterThan(20_000);
    expect(insideCircles).toBeGreaterThan(3_000);
    expect(all.disagreements).toBeLessThan(20);

    // One city's city-scale geofences alone (similar sizes over a bounded area, as most fleets have): the
    // index answers from its cell grid, and must agree as well.
    const [cityLat, cityLng] = CLUSTERS[0]!;
    const { rows: cityScale } = await sql<{ id: number }>`
      SELECT id FROM geofences WHERE account_id = ${accountId} AND radius_m BETWEEN 50 AND 3000
        AND abs(center_lat - ${cityLat}) < 1 AND abs(center_lng - ${cityLng}) < 1`.execute(t.db);
    const city = new GeofenceIndex([...(await loadGeofenceShapesById(t.db, cityScale.map((r) => r.id))).values()].map((g) => g.shape));
    const cityOut = new Int32Array(8);
    city.query(0, 0, cityOut);
    expect(city.structure).toBe('grid');
    const gridded = await compare(city, postgis, new Set(cityScale.map((r) => r.id)));
    expect(gridded.far.slice(0, 10)).toEqual([]);
    expect(gridded.expected).toBeGreaterThan(2_000);
    expect(gridded.disagreements).toBeLessThan(20);
  }, 120_000);
});
