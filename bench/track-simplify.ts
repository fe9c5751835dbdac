import { performance } from 'node:perf_hooks';
import { simplifyTrackInChunks, simplifyTrackInSlices, TrackTooIntricateError } from '../api/positions/track-simplifier.ts';

const M_PER_DEG = 111_320;

/** Seeded shapes a map track can take: a drive, a tracker's periodic jitter, a vehicle circling a yard. */
const SHAPES: Record<string, (n: number) => { lats: number[]; lngs: number[] }> = {
  'random drive': (n) => {
    let s = 2026;
    const random = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    const lats: number[] = [];
    const lngs: number[] = [];
    let [lat, lng, heading] = [19.4, -99.1, 0];
    for (let i = 0; i < n; i++) {
      lats.push(lat);
      lngs.push(lng);
      heading += (random() - 0.5) * 0.6;
      lat += (Math.cos(heading) * 20) / M_PER_DEG;
      lng += (Math.sin(heading) * 20) / (M_PER_DEG * Math.cos((lat * Math.PI) / 180));
    }
    return { lats, lngs };
  },
  'periodic jitter': (n) => ({
    lats: Array.from({ length: n }, (_, i) => 10 + (i * 5) / M_PER_DEG),
    lngs: Array.from({ length: n }, (_, i) => 20 + ((i % 3) - 1) * 2e-5),
  }),
  'circling a yard': (n) => ({
    lats: Array.from({ length: n }, (_, i) => 19.4 + (0.002 * (1 - i / n)) * Math.sin(i * 0.3)),
    lngs: Array.from({ length: n }, (_, i) => -99.1 + (0.002 * (1 - i / n)) * Math.cos(i * 0.3)),
  }),
};

const CASES: Array<[shape: string, points: number, toleranceM: number]> = [
  ['random drive', 1_000_000, 10],
  ['periodic jitter', 60_000, 1],
  ['circling a yard', 100_000, 0.5],
];

/**
 * How map-track simplification shares the event loop: each shape simplified as GET
 * /vehicles/{id}/positions?format=geojson&simplify= does it (in 10 ms slices, the whole track, or run
 * by run when the whole would cost quadratic time), while a 1 ms timer measures the longest the event
 * loop was held. Prints the time to simplify and the longest hold.
 */
export default async function trackSimplifyBench(args: string[]): Promise<void> {
  const rows: Array<Record<string, string | number>> = [];
  for (const [shape, points, toleranceM] of CASES) {
    const { lats, lngs } = SHAPES[shape]!(points);
    let longest = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    const started = performance.now();
    let how = 'whole track';
    const kept = await simplifyTrackInSlices(lats, lngs, toleranceM, { sliceMs: 10, maxTests: Math.max(50_000_000, 40 * points) }).catch((error: unknown) => {
      if (!(error instanceof TrackTooIntricateError)) throw error;
      how = 'run by run';
      return simplifyTrackInChunks(lats, lngs, toleranceM, { chunk: 2_000, sliceMs: 10 });
    });
    const ms = performance.now() - started;
    clearInterval(probe);
    rows.push({ shape, points, 'tolerance m': toleranceM, how, kept: kept.length, 'ms to simplify': Math.round(ms), 'longest event-loop hold ms': Math.round(longest) });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ rows }, null, 2)}\n`);
  else console.table(rows);
}
