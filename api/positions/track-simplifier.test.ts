import { lineString, point, pointToLineDistance } from '@turf/turf';
import { describe, expect, it } from 'vitest';
import { simplifyTrack, simplifyTrackInChunks, simplifyTrackInSlices, TrackTooIntricateError } from './track-simplifier.ts';

const M_PER_DEG_LAT = (6_371_008.8 * Math.PI) / 180;
const mPerDegLng = (lat: number) => M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);

/** A seeded random walk of `n` fixes, a fix every ~`stepM` metres with heading drift, from (lat, lng). */
function randomWalk(n: number, seed: number, lat = 19.4, lng = -99.1, stepM = 20) {
  let s = seed >>> 0;
  const random = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const lats = new Float64Array(n);
  const lngs = new Float64Array(n);
  let heading = random() * 2 * Math.PI;
  for (let i = 0; i < n; i++) {
    lats[i] = lat;
    lngs[i] = lng;
    heading += (random() - 0.5) * 0.6;
    lat += (Math.cos(heading) * stepM) / M_PER_DEG_LAT;
    lng += (Math.sin(heading) * stepM) / mPerDegLng(lat);
  }
  return { lats, lngs };
}

describe('simplifyTrack', () => {
  it('keeps every point of a track of two or fewer', () => {
    expect([...simplifyTrack([], [], 10)]).toEqual([]);
    expect([...simplifyTrack([1], [2], 10)]).toEqual([0]);
    expect([...simplifyTrack([1, 1.1], [2, 2.1], 1e6)]).toEqual([0, 1]);
  });

  it('reduces a straight drive with GPS jitter below the tolerance to its two ends', () => {
    const n = 200;
    const lats = Array.from({ length: n }, (_, i) => 19 + (i * 10) / M_PER_DEG_LAT);
    // Up to ±3 m east and west of the meridian driven along.
    const lngs = Array.from({ length: n }, (_, i) => -99 + (((i * 5) % 7) - 3) / mPerDegLng(19));
    expect([...simplifyTrack(lats, lngs, 7)]).toEqual([0, n - 1]);
    expect(simplifyTrack(lats, lngs, 2).length).toBeGreaterThan(n / 2);
  });

  it('measures in metres, not degrees: at 60° N a fix 10 m east of a northbound segment is kept at 9 m and dropped at 11 m', () => {
    const lats = [60, 60 + 500 / M_PER_DEG_LAT, 60 + 1000 / M_PER_DEG_LAT];
    const lngs = [10, 10 + 10 / mPerDegLng(60 + 500 / M_PER_DEG_LAT), 10];
    expect([...simplifyTrack(lats, lngs, 9)]).toEqual([0, 1, 2]);
    expect([...simplifyTrack(lats, lngs, 11)]).toEqual([0, 2]);
  });

  it('keeps the turning point of an out-and-back drive, which lies on the line through its ends', () => {
    const lats = [19, 19 + 500 / M_PER_DEG_LAT, 19 + 1000 / M_PER_DEG_LAT, 19 + 500 / M_PER_DEG_LAT, 19 + 1 / M_PER_DEG_LAT];
    const lngs = [-99, -99, -99, -99, -99];
    expect([...simplifyTrack(lats, lngs, 20)]).toEqual([0, 2, 4]);
  });

  it('wraps longitudes across the antimeridian instead of measuring the long way round', () => {
    // East along the equator from 179.99° to -179.99° (2.2 km), one fix 5 m north of the way.
    const lats = [0, 5 / M_PER_DEG_LAT, 0];
    const lngs = [179.99, 180, -179.99];
    expect([...simplifyTrack(lats, lngs, 10)]).toEqual([0, 2]);
    expect([...simplifyTrack(lats, lngs, 4)]).toEqual([0, 1, 2]);
  });

  it('leaves out only fixes within the tolerance of the simplified track, measured independently by turf (geodesic)', () => {
    for (const [seed, tolerance] of [[1, 5], [2, 25], [3, 100]] as const) {
      const { lats, lngs } = randomWalk(5_000, seed);
      const kept = simplifyTrack(lats, lngs, tolerance);
      expect(kept[0]).toBe(0);
      expect(kept[kept.length - 1]).toBe(lats.length - 1);
      expect(kept.length).toBeLessThan(lats.length / 2);
      let worst = 0;
      for (let k = 1; k < kept.length; k++) {
        const a = kept[k - 1]!;
        const b = kept[k]!;
        const segment = lineString([[lngs[a]!, lats[a]!], [lngs[b]!, lats[b]!]]);
        for (let i = a + 1; i < b; i++) worst = Math.max(worst, pointToLineDistance(point([lngs[i]!, lats[i]!]), segment, { units: 'meters' }));
      }
      expect(worst).toBeLessThanOrEqual(tolerance * 1.005);
      // And the tolerance is used: some fix left out lies beyond half of it.
      expect(worst).toBeGreaterThan(tolerance / 2);
    }
  });

  it('keeps fewer points as the tolerance grows', () => {
    const { lats, lngs } = randomWalk(2_000, 7);
    const counts = [1, 10, 100, 1000].map((t) => simplifyTrack(lats, lngs, t).length);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(counts[0]).toBeGreaterThan(counts[3]!);
  });

  it('refuses arrays of different lengths and a negative tolerance', () => {
    expect(() => simplifyTrack([1, 2], [1], 5)).toThrow(/differ in length/);
    expect(() => simplifyTrack([1, 2, 3], [1, 2, 3], -1)).toThrow(/0 or more/);
  });
});

/** A spiral winding inwards: every split lands at an end of its segment, Douglas–Peucker's worst case. */
function spiral(n: number) {
  const lats = new Float64Array(n);
  const lngs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const r = 0.5 * (1 - i / n);
    lats[i] = r * Math.sin(i * 0.3);
    lngs[i] = r * Math.cos(i * 0.3);
  }
  return { lats, lngs };
}

describe('simplifyTrackInSlices', () => {
  it('keeps exactly what the one-go simplification keeps', async () => {
    for (const [seed, tolerance] of [[4, 5], [5, 50]] as const) {
      const { lats, lngs } = randomWalk(20_000, seed);
      expect([...(await simplifyTrackInSlices(lats, lngs, tolerance, { sliceMs: 0 }))]).toEqual([...simplifyTrack(lats, lngs, tolerance)]);
    }
  });

  it('lets the event loop run between its slices, so other requests are answered while a long track is simplified', async () => {
    const { lats, lngs } = spiral(30_000);
    const order: string[] = [];
    const timer = new Promise<void>((resolve) => setTimeout(() => resolve(void order.push('timer')), 0));
    const done = simplifyTrackInSlices(lats, lngs, 0.01, { sliceMs: 1 }).then(() => void order.push('simplified'));
    await Promise.all([timer, done]);
    expect(order).toEqual(['timer', 'simplified']);
  });

  it('refuses a track that would take more distance tests than allowed', async () => {
    const { lats, lngs } = spiral(30_000);
    await expect(simplifyTrackInSlices(lats, lngs, 0.01, { maxTests: 1_000_000 })).rejects.toThrow(TrackTooIntricateError);
  });
});

describe('simplifyTrackInChunks', () => {
  it('keeps every left-out point within the tolerance, the runs\' meeting points kept, at a bounded cost', async () => {
    const { lats, lngs } = randomWalk(10_000, 9);
    const kept = await simplifyTrackInChunks(lats, lngs, 25, { chunk: 1_000 });
    const whole = simplifyTrack(lats, lngs, 25);
    for (let meet = 0; meet < lats.length; meet += 999) expect(kept).toContain(meet);
    expect(kept[kept.length - 1]).toBe(lats.length - 1);
    expect(kept.length).toBeGreaterThanOrEqual(whole.length);
    expect(kept.length).toBeLessThan(whole.length + 2 * Math.ceil(lats.length / 999));
    // Each run's own simplification: what the whole simplification of that run keeps.
    const run = simplifyTrack(lats.slice(999, 1999), lngs.slice(999, 1999), 25);
    expect([...kept].filter((i) => i >= 999 && i <= 1998).map((i) => i - 999)).toEqual([...run]);
  });
});
