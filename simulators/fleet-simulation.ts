import { Drive, type Point } from './drive.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import type { TrackerDialect } from './tracker-dialect.ts';
import { VirtualTracker } from './virtual-tracker.ts';

export interface SimulationOptions {
  imeis: string[];
  dialect: TrackerDialect;
  server: { host: string; port: number };
  intervalMs: number;
  /** Fixes per upload (default 1). */
  recordsPerUpload?: number;
  seed: number;
  /** Places vehicles drive between (geofence centers); around `center` when empty. */
  stops: Point[];
  center: Point;
}

/** Stops scattered within ~10 km of a center, for an account without geofences. */
function scatteredStops(random: () => number, center: Point, count = 12): Point[] {
  return Array.from({ length: count }, () => ({
    latitude: center.latitude + (random() - 0.5) * 0.18,
    longitude: center.longitude + (random() - 0.5) * 0.18,
  }));
}

/** A fleet of virtual trackers, each with its own seeded drive, so a run can be replayed. */
export function startFleetSimulation(options: SimulationOptions): VirtualTracker[] {
  const random = seededRandom(options.seed);
  const stops = options.stops.length >= 2 ? options.stops : scatteredStops(random, options.center);
  return options.imeis.map((imei, i) => {
    const driveRandom = seededRandom(options.seed * 100_003 + i);
    const start = stops[Math.floor(driveRandom() * stops.length)]!;
    const tracker = new VirtualTracker(imei, options.dialect, new Drive(stops, driveRandom, start), options.server, options.intervalMs, options.recordsPerUpload);
    // Spread connections and reports over the interval instead of all at once.
    const period = options.intervalMs * (options.recordsPerUpload ?? 1);
    setTimeout(() => tracker.start(), (i * period) / Math.max(1, options.imeis.length)).unref();
    return tracker;
  });
}
