import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../runtime/seeded-random.ts';
import { EARTH_RADIUS_M, haversineMetres } from '../geofences/fence-shape.ts';
import { accumulate, accumulatorState, EMPTY_ACCUMULATOR_STATE, type AccumulatorFix, type AccumulatorRules } from './vehicle-accumulators.ts';

const RULES: AccumulatorRules = { movingSpeedKmh: 5, maxGapS: 3600 };
const T0 = Date.UTC(2026, 10, 2, 8, 0, 0);
const LAT0 = 19.4326;
const LNG0 = -99.1332;
const DEG = 180 / Math.PI;

/** The point `m` metres east and `n` north of (lat, lng), on the engine's sphere. */
const offset = (lat: number, lng: number, east: number, north: number) => ({
  lat: lat + (north / EARTH_RADIUS_M) * DEG,
  lng: lng + (east / (EARTH_RADIUS_M * Math.cos((lat * Math.PI) / 180))) * DEG,
});

/** Fixes every `every` s at (lat, lng), each scattered 10 to 20 m in a random direction, as a parked receiver's are. */
function parked(random: () => number, at: { lat: number; lng: number }, from: number, seconds: number, ignition: boolean | null, every = 10): AccumulatorFix[] {
  const fixes: AccumulatorFix[] = [];
  for (let s = 0; s < seconds; s += every) {
    const r = 10 + random() * 10;
    const a = random() * 2 * Math.PI;
    const p = offset(at.lat, at.lng, r * Math.cos(a), r * Math.sin(a));
    fixes.push({ t: from + s * 1000, valid: true, lat: p.lat, lng: p.lng, speedKmh: Math.floor(random() * 3), ignition });
  }
  return fixes;
}

/**
 * A drive along the corners at `kmh`: a fix every 10 s along each street, and one at each corner, as
 * trackers send one when the heading changes. The route's length and the fixes.
 */
function drive(corners: Array<{ lat: number; lng: number }>, from: number, kmh: number): { lengthM: number; fixes: AccumulatorFix[]; end: number } {
  const fixes: AccumulatorFix[] = [];
  const step = (kmh / 3.6) * 10;
  let lengthM = 0;
  let t = from;
  for (let i = 1; i < corners.length; i++) {
    const a = corners[i - 1]!;
    const b = corners[i]!;
    const legM = haversineMetres(a.lat, a.lng, b.lat, b.lng);
    for (let along = 0; along < legM; along += step) {
      const k = along / legM;
      fixes.push({ t, valid: true, lat: a.lat + (b.lat - a.lat) * k, lng: a.lng + (b.lng - a.lng) * k, speedKmh: kmh, ignition: true });
      t += (Math.min(step, legM - along) / step) * 10_000;
    }
    lengthM += legM;
  }
  const last = corners[corners.length - 1]!;
  fixes.push({ t, valid: true, lat: last.lat, lng: last.lng, speedKmh: 0, ignition: true });
  return { lengthM, fixes, end: t };
}

/** A 13.4 km route of five straight streets, with a right-angle turn at each corner. */
const CORNERS = [
  { lat: LAT0, lng: LNG0 },
  offset(LAT0, LNG0, 3000, 0),
  offset(LAT0, LNG0, 3000, 2500),
  offset(LAT0, LNG0, 500, 2500),
  offset(LAT0, LNG0, 500, 5000),
  offset(LAT0, LNG0, 3400, 5000),
];

const run = (fixes: AccumulatorFix[], prior = EMPTY_ACCUMULATOR_STATE) => accumulate(prior, RULES, fixes);

describe('the server odometer', () => {
  it('measures a drive of known length within 1 %, parked before and after', () => {
    const random = seededRandom(7);
    const before = parked(random, CORNERS[0]!, T0, 600, false);
    const route = drive(CORNERS, T0 + 600_000, 50);
    const after = parked(random, CORNERS[CORNERS.length - 1]!, route.end + 10_000, 1200, false);
    const state = run([...before, ...route.fixes, ...after]);
    expect(route.lengthM).toBeCloseTo(13_400, -1);
    expect(Math.abs(state.odometerM - route.lengthM) / route.lengthM).toBeLessThan(0.01);
  });

  it('adds under 50 m in an hour parked while the fixes scatter 10 to 20 m', () => {
    for (const seed of [1, 2, 3]) {
      const state = run(parked(seededRandom(seed), CORNERS[0]!, T0, 3600, false));
      expect(state.odometerM).toBeLessThan(50);
    }
  });

  it('counts a vehicle creeping away below the moving speed once it is past the jitter radius, the whole way', () => {
    // 4 km/h for 5 minutes due north: 333 m, every fix still by speed.
    const fixes: AccumulatorFix[] = [];
    for (let s = 0; s <= 300; s += 10) {
      const p = offset(LAT0, LNG0, 0, (4 / 3.6) * s);
      fixes.push({ t: T0 + s * 1000, valid: true, lat: p.lat, lng: p.lng, speedKmh: 4, ignition: true });
    }
    const state = run(fixes);
    // Up to the last fix past the anchor that a following fix confirmed.
    expect(state.odometerM).toBeGreaterThan(280);
    expect(state.odometerM).toBeLessThanOrEqual(334);
  });

  it('ignores a stray fix far from a parked vehicle that the next fix contradicts', () => {
    const stray = offset(LAT0, LNG0, 400, 0);
    const fixes: AccumulatorFix[] = [
      { t: T0, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: false },
      { t: T0 + 60_000, valid: true, lat: stray.lat, lng: stray.lng, speedKmh: 0, ignition: false },
      { t: T0 + 120_000, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: false },
    ];
    expect(run(fixes).odometerM).toBe(0);
  });

  it('counts nothing for a jump no vehicle could make, while moving', () => {
    const jump = offset(LAT0, LNG0, 50_000, 0);
    const next = offset(LAT0, LNG0, 139, 0);
    const fixes: AccumulatorFix[] = [
      { t: T0, valid: true, lat: LAT0, lng: LNG0, speedKmh: 50, ignition: true },
      { t: T0 + 10_000, valid: true, lat: jump.lat, lng: jump.lng, speedKmh: 50, ignition: true },
      { t: T0 + 20_000, valid: true, lat: next.lat, lng: next.lng, speedKmh: 50, ignition: true },
    ];
    expect(run(fixes).odometerM).toBe(0);
  });

  it('skips invalid fixes: their place is not trusted', () => {
    const far = offset(LAT0, LNG0, 200, 0);
    const fixes: AccumulatorFix[] = [
      { t: T0, valid: true, lat: LAT0, lng: LNG0, speedKmh: 30, ignition: true },
      { t: T0 + 10_000, valid: false, lat: far.lat, lng: far.lng, speedKmh: 30, ignition: true },
      { t: T0 + 20_000, valid: true, lat: LAT0, lng: LNG0, speedKmh: 30, ignition: true },
    ];
    expect(run(fixes).odometerM).toBe(0);
  });

  it('after a gap, counts the straight line when it is plausible, and nothing when it is not', () => {
    const moved = offset(LAT0, LNG0, 20_000, 0);
    const gapped = (after: number): AccumulatorFix[] => [
      { t: T0, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: false },
      { t: T0 + after, valid: true, lat: moved.lat, lng: moved.lng, speedKmh: 0, ignition: false },
    ];
    expect(run(gapped(2 * 3600_000)).odometerM).toBeCloseTo(20_000, 0);
    // 20 km in 4 minutes would be 300 km/h: a bad fix, not a journey.
    expect(run(gapped(240_000)).odometerM).toBe(0);
  });
});

describe('engine hours', () => {
  it('count the time between fixes while the ignition is on, not across a gap', () => {
    const random = seededRandom(11);
    const idling = parked(random, CORNERS[0]!, T0, 1800, true);
    const off = parked(random, CORNERS[0]!, T0 + 1_800_000, 1800, false);
    // Ignition on again after two hours of silence: that silence counts nothing.
    const later = parked(random, CORNERS[0]!, T0 + 3_600_000 + 7200_000, 600, true);
    const state = run([...idling, ...off, ...later]);
    expect(state.engineS).toBe(1800 + 590);
  });

  it('keep the last ignition through fixes that report none, and count invalid fixes too', () => {
    const fixes: AccumulatorFix[] = [
      { t: T0, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: true },
      { t: T0 + 60_000, valid: false, lat: 0, lng: 0, speedKmh: null, ignition: null },
      { t: T0 + 120_000, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: false },
      { t: T0 + 180_000, valid: true, lat: LAT0, lng: LNG0, speedKmh: 0, ignition: null },
    ];
    expect(run(fixes).engineS).toBe(120);
  });
});

describe('replays and resends', () => {
  const random = seededRandom(5);
  const fixes = [...parked(random, CORNERS[0]!, T0, 300, true), ...drive(CORNERS, T0 + 300_000, 40).fixes];

  it('decide the same in one run or in batches of any size', () => {
    const whole = run(fixes);
    for (const size of [1, 7, 50]) {
      let state = EMPTY_ACCUMULATOR_STATE;
      for (let i = 0; i < fixes.length; i += size) state = run(fixes.slice(i, i + size), state);
      expect(state.odometerM).toBeCloseTo(whole.odometerM, 6);
      expect(state.engineS).toBe(whole.engineS);
    }
  });

  it('add nothing for fixes sent again, whole or in part', () => {
    const once = run(fixes);
    const again = run(fixes, once);
    expect(again).toEqual(once);
    const tail = run(fixes.slice(-20), once);
    expect(tail).toEqual(once);
  });

  it('survive being stored as JSON', () => {
    const half = run(fixes.slice(0, 100));
    const stored = accumulatorState(JSON.parse(JSON.stringify(half)) as Record<string, unknown>);
    expect(run(fixes.slice(100), stored)).toEqual(run(fixes));
  });

  it('report the odometer after each fix, for the trips', () => {
    const at = new Float64Array(fixes.length);
    const state = accumulate(EMPTY_ACCUMULATOR_STATE, RULES, fixes, at);
    expect(at[fixes.length - 1]).toBe(state.odometerM);
    for (let i = 1; i < at.length; i++) expect(at[i]!).toBeGreaterThanOrEqual(at[i - 1]!);
  });
});
