import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bbox as turfBbox, booleanPointInPolygon, polygon as turfPolygon } from '@turf/turf';
import pg from 'pg';
import RBush from 'rbush';
import { EMBEDDED_SOCKET_PORT, startEmbeddedPostgres, type EmbeddedPostgres } from '../db/embedded-postgres.ts';
import type { FenceShape } from '../domain/geofences/fence-shape.ts';
import { GeofenceIndex } from '../domain/geofences/geofence-index.ts';
import { seededRandom } from '../runtime/seeded-random.ts';

const SEED = 42;
const FENCES = 10_000;
const POINTS = 1_000_000;
const ENGINE_RUNS = 5;
const RBUSH_RUNS = 3;
const LINEAR_SAMPLE = 5_000;
const POSTGIS_SAMPLE = 2_000;
// A 100 km × 100 km city around Mexico City's center.
const [CITY_LAT, CITY_LNG] = [19.43, -99.13];
const METRES_PER_DEGREE = 111_320;
const HALF_LAT = 50_000 / METRES_PER_DEGREE;
const HALF_LNG = HALF_LAT / Math.cos((CITY_LAT * Math.PI) / 180);

interface Row {
  method: string;
  points: number;
  pointsPerSec: number;
  meanPerSec: string;
  perCpuSec: number | string;
  engineSpeedup: string;
  note: string;
}

/** Star-shaped polygons of 8–64 vertices and 100 m–2 km radius, centers uniform over the city. */
function makeFences(random: () => number): number[][][] {
  return Array.from({ length: FENCES }, () => {
    const lat = CITY_LAT + (random() * 2 - 1) * HALF_LAT;
    const lng = CITY_LNG + (random() * 2 - 1) * HALF_LNG;
    const ry = (100 + random() * 1_900) / METRES_PER_DEGREE;
    const rx = ry / Math.cos((lat * Math.PI) / 180);
    const n = 8 + Math.floor(random() * 57);
    const ring = Array.from({ length: n }, (_, i) => {
      const a = ((i + random() * 0.8) * 2 * Math.PI) / n;
      const f = 0.3 + random() * 0.7;
      return [lng + rx * f * Math.cos(a), lat + ry * f * Math.sin(a)];
    });
    return [...ring, ring[0]!];
  });
}

function stats(rates: number[]): { best: number; mean: string } {
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  const sd = Math.sqrt(rates.reduce((a, b) => a + (b - mean) ** 2, 0) / rates.length);
  return { best: Math.max(...rates), mean: `${Math.round(mean).toLocaleString('en')} ± ${Math.round(sd).toLocaleString('en')}` };
}

/**
 * Runs `work` over `count` points `runs` times: wall-clock rates, the rate per second of this process's
 * CPU time in the best run (the machine is shared; that one does not count time spent waiting for a core),
 * and the hits of the last run.
 */
function timed(runs: number, count: number, work: () => number): { rates: number[]; perCpuSec: number; hits: number } {
  const rates: number[] = [];
  let perCpuSec = 0;
  let hits = 0;
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    hits = work();
    const { user, system } = process.cpuUsage(cpu);
    rates.push(count / ((performance.now() - start) / 1000));
    perCpuSec = Math.max(perCpuSec, count / ((user + system) / 1e6));
  }
  return { rates, perCpuSec, hits };
}

/** Even-odd ray casting over one closed ring in a flat array: the same test the engine inlines. */
function inRing(coords: Float64Array, x: number, y: number): boolean {
  let odd = false;
  for (let i = 2, xj = coords[0]!, yj = coords[1]!; i < coords.length; i += 2) {
    const xi = coords[i]!;
    const yi = coords[i + 1]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) odd = !odd;
    xj = xi;
    yj = yi;
  }
  return odd;
}

interface Database {
  pool: pg.Pool;
  description: string;
  close(): Promise<void>;
}

/** PostgreSQL at DATABASE_URL, or an embedded PGlite + PostGIS started for the run. */
async function openPostgis(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    return { pool, description: `PostgreSQL at DATABASE_URL`, close: () => pool.end() };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-geofence-'));
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres(dataDir);
  const pool = new pg.Pool({ host: embedded.socketDir, port: EMBEDDED_SOCKET_PORT, user: 'postgres', database: 'postgres', max: 1 });
  return {
    pool,
    description: 'embedded PGlite + PostGIS (DATABASE_URL unset)',
    async close() {
      await pool.end();
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One `ST_Contains` query per point on one pooled connection (prepared, GiST-indexed): rate and hits. */
async function postgisPerPoint(rings: number[][][], xs: Float64Array, ys: Float64Array): Promise<{ rate: number; hits: number; description: string }> {
  const database = await openPostgis();
  const client = await database.pool.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS postgis');
    // A temporary table: nothing is left behind in the database the URL names.
    await client.query('CREATE TEMP TABLE bench_geofences (id integer PRIMARY KEY, geom geometry(Polygon, 4326) NOT NULL)');
    for (let from = 0; from < rings.length; from += 1_000) {
      const chunk = rings.slice(from, from + 1_000).map((ring, k) => ({ id: from + k, geojson: JSON.stringify({ type: 'Polygon', coordinates: [ring] }) }));
      await client.query(
        `INSERT INTO bench_geofences SELECT x.id, ST_SetSRID(ST_GeomFromGeoJSON(x.geojson), 4326)
         FROM jsonb_to_recordset($1::jsonb) AS x(id int, geojson text)`,
        [JSON.stringify(chunk)],
      );
    }
    await client.query('CREATE INDEX ON bench_geofences USING gist (geom)');
    await client.query('ANALYZE bench_geofences');
    const query = { name: 'bench-geofence-contains', text: 'SELECT id FROM bench_geofences WHERE ST_Contains(geom, ST_SetSRID(ST_MakePoint($1, $2), 4326))' };
    for (let i = 0; i < 100; i++) await client.query({ ...query, values: [xs[i], ys[i]] }); // warm-up
    let hits = 0;
    const start = performance.now();
    for (let i = 0; i < POSTGIS_SAMPLE; i++) hits += (await client.query({ ...query, values: [xs[i], ys[i]] })).rowCount ?? 0;
    return { rate: POSTGIS_SAMPLE / ((performance.now() - start) / 1000), hits, description: database.description };
  } finally {
    client.release();
    await database.close();
  }
}

/**
 * Geofence membership on one core: 10,000 polygons (8–64 vertices, 100 m–2 km) over a 100 km city and
 * 1,000,000 uniform points. The engine's index against an rbush R-tree with the same ray casting, a linear
 * scan with a box pre-check and turf, and one PostGIS query per point. The slow baselines run a sample of
 * the points (the same first points) and their rates are per point; the hit counts over that sample must
 * agree with the engine's, or the row says so.
 */
export default async function geofenceBench(args: string[]): Promise<void> {
  const random = seededRandom(SEED);
  const rings = makeFences(random);
  const xs = new Float64Array(POINTS);
  const ys = new Float64Array(POINTS);
  for (let i = 0; i < POINTS; i++) {
    xs[i] = CITY_LNG + (random() * 2 - 1) * HALF_LNG;
    ys[i] = CITY_LAT + (random() * 2 - 1) * HALF_LAT;
  }
  const rows: Row[] = [];

  const buildStart = performance.now();
  const shapes: FenceShape[] = rings.map((ring, id) => ({ id, kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } }));
  const index = new GeofenceIndex(shapes);
  const out = new Int32Array(64);
  index.query(CITY_LAT, CITY_LNG, out); // builds the search structure
  const buildMs = performance.now() - buildStart;
  const engineOver = (count: number) => () => {
    let hits = 0;
    for (let i = 0; i < count; i++) hits += index.query(ys[i]!, xs[i]!, out);
    return hits;
  };
  const engine = timed(ENGINE_RUNS, POINTS, engineOver(POINTS));
  const engineStats = stats(engine.rates);
  const engineHits = (count: number) => engineOver(count)();
  rows.push({ method: 'engine: cell grid (R-tree when unsuited) + raster + banded ray casting', points: POINTS, pointsPerSec: Math.round(engineStats.best), meanPerSec: engineStats.mean, perCpuSec: Math.round(engine.perCpuSec), engineSpeedup: '1', note: `${ENGINE_RUNS} runs, ${engine.hits.toLocaleString("en")} hits; ${index.structure}, built in ${buildMs.toFixed(0)} ms` });
  const ratio = (rate: number) => `${(engineStats.best / rate).toFixed(1)}×`;

  const tree = new RBush<{ minX: number; minY: number; maxX: number; maxY: number; coords: Float64Array }>();
  tree.load(rings.map((ring) => {
    const [minX, minY, maxX, maxY] = turfBbox(turfPolygon([ring]));
    return { minX, minY, maxX, maxY, coords: Float64Array.from(ring.flat()) };
  }));
  const rbush = timed(RBUSH_RUNS, POINTS, () => {
    let hits = 0;
    const box = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
    for (let i = 0; i < POINTS; i++) {
      box.minX = box.maxX = xs[i]!;
      box.minY = box.maxY = ys[i]!;
      for (const item of tree.search(box)) if (inRing(item.coords, xs[i]!, ys[i]!)) hits++;
    }
    return hits;
  });
  const rbushStats = stats(rbush.rates);
  rows.push({ method: 'rbush (dynamic) + same ray casting', points: POINTS, pointsPerSec: Math.round(rbushStats.best), meanPerSec: rbushStats.mean, perCpuSec: Math.round(rbush.perCpuSec), engineSpeedup: ratio(rbushStats.best), note: `${RBUSH_RUNS} runs${rbush.hits === engine.hits ? '' : `; HITS DIFFER: ${rbush.hits}`}` });

  const features = rings.map((ring) => {
    const feature = turfPolygon([ring]);
    return { box: turfBbox(feature), feature };
  });
  const linear = timed(1, LINEAR_SAMPLE, () => {
    let hits = 0;
    for (let i = 0; i < LINEAR_SAMPLE; i++) {
      const point = [xs[i]!, ys[i]!];
      for (const { box, feature } of features) {
        if (point[0]! < box[0] || point[1]! < box[1] || point[0]! > box[2] || point[1]! > box[3]) continue;
        if (booleanPointInPolygon(point, feature)) hits++;
      }
    }
    return hits;
  });
  const linearHitsAgree = linear.hits === engineHits(LINEAR_SAMPLE);
  rows.push({ method: 'linear scan: box check + @turf/boolean-point-in-polygon', points: LINEAR_SAMPLE, pointsPerSec: Math.round(linear.rates[0]!), meanPerSec: '', perCpuSec: Math.round(linear.perCpuSec), engineSpeedup: ratio(linear.rates[0]!), note: `sample of ${LINEAR_SAMPLE.toLocaleString('en')} points, rate extrapolated${linearHitsAgree ? '' : '; HITS DIFFER'}` });

  if (!args.includes('--no-postgis')) {
    const postgis = await postgisPerPoint(rings, xs, ys);
    const agree = postgis.hits === engineHits(POSTGIS_SAMPLE);
    rows.push({ method: 'PostGIS: one ST_Contains query per point', points: POSTGIS_SAMPLE, pointsPerSec: Math.round(postgis.rate), meanPerSec: '', perCpuSec: '', engineSpeedup: ratio(postgis.rate), note: `sample of ${POSTGIS_SAMPLE.toLocaleString('en')} points, rate extrapolated; ${postgis.description}${agree ? '' : '; HITS DIFFER'}` });
  }

  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ fences: FENCES, points: POINTS, seed: SEED, loadAverage: loadavg()[0], rows }, null, 2)}\n`);
  else {
    process.stdout.write(`Geofence membership on one core: ${FENCES.toLocaleString('en')} polygons (8–64 vertices, 100 m–2 km) over a 100 km city, ${POINTS.toLocaleString('en')} uniform points, seed ${SEED}\n`);
    process.stdout.write(`pointsPerSec: best run, wall clock; perCpuSec: per second of this process's CPU time; engineSpeedup: engine pointsPerSec ÷ this row's; load average at the end ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores\n`);
    console.table(rows);
  }
}
