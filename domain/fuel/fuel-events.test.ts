import { describe, expect, it } from 'vitest';
import {
  DEFAULT_FUEL_RULES, detectFuelChanges, fuelLevelPercent, fuelState, type FuelChange, type FuelFix, type FuelState,
} from './fuel-events.ts';

const T0 = Date.UTC(2026, 0, 5, 8, 0, 0);
const rules = DEFAULT_FUEL_RULES;

/** A seeded generator (mulberry32), so the noise is the same every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Leg {
  /** Readings, one every `everyS` seconds. */
  n: number;
  everyS?: number;
  speedKmh: number;
  ignition?: boolean | null;
  /** The level at the leg's first and last reading (linear in between). */
  from: number;
  to?: number;
  /** Sensor noise, ± percentage points; sloshing adds rare jumps of ±noise × 4 while driving. */
  noise?: number;
  litres?: boolean;
}

/** Fixes for a sequence of legs, moving east while driving; `rnd` adds the noise. */
function track(legs: Leg[], rnd = random(7), start = T0): FuelFix[] {
  const out: FuelFix[] = [];
  let t = start;
  let lng = -99.1;
  for (const leg of legs) {
    for (let i = 0; i < leg.n; i++) {
      const every = leg.everyS ?? 30;
      t += every * 1000;
      if (leg.speedKmh > 0) lng += (leg.speedKmh / 3.6) * every / 111_000;
      const base = leg.from + ((leg.to ?? leg.from) - leg.from) * (leg.n === 1 ? 1 : i / (leg.n - 1));
      const noise = leg.noise ?? 0;
      let level = base + (rnd() * 2 - 1) * noise;
      if (leg.speedKmh > 0 && rnd() < 0.1) level += (rnd() * 2 - 1) * noise * 4;
      level = Math.max(0, Math.min(100, level));
      out.push({
        t, lat: 19.4, lng, speedKmh: leg.speedKmh, heading: 90, ignition: leg.ignition ?? leg.speedKmh > 0,
        fuelPercent: leg.litres ? null : level, fuelLitres: leg.litres ? level * 0.8 : null,
      });
    }
  }
  return out;
}

function run(fixes: FuelFix[], tank: number | null = null, prior: FuelState | null = null) {
  const changes: FuelChange[] = [];
  const state = detectFuelChanges(prior, rules, tank, fixes, changes);
  return { changes, state };
}

describe('fuel level of a fix', () => {
  it.each([
    [{ fuelPercent: 55, fuelLitres: null }, null, 55],
    [{ fuelPercent: 55, fuelLitres: 10 }, 80, 55],
    [{ fuelPercent: null, fuelLitres: 40 }, 80, 50],
    [{ fuelPercent: null, fuelLitres: 40 }, null, null],
    // Above 100: a raw sensor reading (an uncalibrated probe), not a percentage.
    [{ fuelPercent: 3125, fuelLitres: null }, null, null],
    [{ fuelPercent: -1, fuelLitres: null }, 80, null],
    [{ fuelPercent: null, fuelLitres: null }, 80, null],
  ] as const)('%o with a tank of %s L is %s %%', (fix, tank, expected) => {
    expect(fuelLevelPercent(fix, tank)).toBe(expected);
  });
});

describe('fuel refills and drops', () => {
  it('a vehicle that never reports a level has no state and costs nothing', () => {
    const fixes = track([{ n: 20, speedKmh: 50, from: 0 }]).map((f) => ({ ...f, fuelPercent: null }));
    expect(run(fixes)).toEqual({ changes: [], state: null });
  });

  it('sensor noise while parked and sloshing while driving fire nothing (20 seeds)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const fixes = track([
        { n: 60, speedKmh: 60, from: 70, to: 66, noise: 3 },
        { n: 120, speedKmh: 0, ignition: false, from: 66, noise: 3 },
        { n: 60, speedKmh: 60, from: 66, to: 62, noise: 3 },
        { n: 5, speedKmh: 0, ignition: true, from: 62, noise: 3 },
        { n: 60, speedKmh: 60, from: 62, to: 58, noise: 3 },
      ], random(seed));
      expect(run(fixes).changes, `seed ${seed}`).toEqual([]);
    }
  });

  it('a drop while parked (ignition off) fires once, placed where the vehicle stood', () => {
    const fixes = track([
      { n: 20, speedKmh: 60, from: 72, to: 70, noise: 1 },
      { n: 20, speedKmh: 0, ignition: false, from: 70, noise: 1 },
      { n: 10, speedKmh: 0, ignition: false, from: 70, to: 45, noise: 1 },
      { n: 40, speedKmh: 0, ignition: false, from: 45, noise: 1 },
      { n: 20, speedKmh: 60, from: 45, to: 43, noise: 1 },
    ], random(3));
    const { changes } = run(fixes, 80);
    expect(changes).toHaveLength(1);
    const [drop] = changes;
    expect(drop!.kind).toBe('drop');
    expect(drop!.fromPercent).toBeCloseTo(70, -0.5);
    expect(drop!.toPercent).toBeCloseTo(45, -0.5);
    expect(drop!.amountPercent).toBeGreaterThan(22);
    expect(drop!.amountPercent).toBeLessThan(28);
    expect(drop!.amountLitres).toBeCloseTo((drop!.amountPercent * 80) / 100, 1);
    expect(drop!.at.speedKmh).toBe(0);
    const parked = fixes.filter((f) => f.speedKmh === 0);
    expect(drop!.at.t).toBeGreaterThanOrEqual(parked[0]!.t);
    expect(drop!.at.t).toBeLessThanOrEqual(parked[parked.length - 1]!.t);
  });

  it('a refill fires once with the whole amount, not the part seen while the pump ran', () => {
    const fixes = track([
      { n: 30, speedKmh: 50, from: 25, to: 22, noise: 1 },
      { n: 4, speedKmh: 0, ignition: false, from: 22, noise: 1 },
      { n: 8, speedKmh: 0, ignition: false, from: 22, to: 90, noise: 1 },
      { n: 6, speedKmh: 0, ignition: false, from: 90, noise: 1 },
      { n: 30, speedKmh: 50, from: 90, to: 87, noise: 1 },
    ], random(5));
    const { changes } = run(fixes);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ kind: 'refill', amountLitres: null });
    expect(changes[0]!.amountPercent).toBeGreaterThan(65);
    expect(changes[0]!.amountPercent).toBeLessThan(70);
  });

  it('a refill at a stop with one reading shows in the drive after it', () => {
    // A tracker that reports at ignition off and on only: one reading at the pump.
    const fixes = track([
      { n: 20, speedKmh: 50, from: 30, to: 28 },
      { n: 1, everyS: 30, speedKmh: 0, ignition: false, from: 28 },
      { n: 1, everyS: 600, speedKmh: 0, ignition: true, from: 85 },
      { n: 20, speedKmh: 50, from: 85, to: 83 },
    ]);
    const { changes } = run(fixes);
    expect(changes).toHaveLength(1);
    expect(changes[0]!.kind).toBe('refill');
    expect(changes[0]!.fromPercent).toBeCloseTo(28, 0);
    expect(changes[0]!.toPercent).toBeGreaterThan(84);
    // Placed at the stop, not where the drive confirmed it.
    expect(changes[0]!.at.speedKmh).toBe(0);
  });

  it('a drop while driving is consumption, not theft', () => {
    const fixes = track([
      { n: 200, speedKmh: 80, from: 90, to: 40, noise: 2 },
      { n: 30, speedKmh: 0, ignition: false, from: 40, noise: 1 },
      { n: 200, speedKmh: 80, from: 40, to: 5, noise: 2 },
    ], random(9));
    expect(run(fixes).changes).toEqual([]);
  });

  it('stop-and-go traffic with the engine on adds its consumption to no stop', () => {
    const legs: Leg[] = [];
    let level = 60;
    for (let i = 0; i < 30; i++) {
      legs.push({ n: 3, speedKmh: 20, from: level, to: level - 0.4 });
      legs.push({ n: 4, speedKmh: 0, ignition: true, from: level - 0.4 });
      level -= 0.5;
    }
    expect(run(track(legs)).changes).toEqual([]);
  });

  it('litres over the tank capacity: a drop measured in both', () => {
    const fixes = track([
      { n: 10, speedKmh: 40, from: 50, litres: true },
      { n: 20, speedKmh: 0, ignition: false, from: 50, litres: true },
      { n: 20, speedKmh: 0, ignition: false, from: 30, litres: true },
    ]);
    // Litres are level × 0.8 of an 80 L tank: the level in percent is level × 1.0.
    const { changes } = run(fixes, 80);
    expect(changes).toEqual([expect.objectContaining({ kind: 'drop', fromPercent: 50, toPercent: 30, amountPercent: 20, amountLitres: 16 })]);
    expect(run(fixes, null)).toEqual({ changes: [], state: null });
  });

  it('split into batches anywhere, with the state stored as JSON between them, it decides the same', () => {
    const fixes = track([
      { n: 20, speedKmh: 60, from: 72, to: 70, noise: 1 },
      { n: 30, speedKmh: 0, ignition: false, from: 70, to: 40, noise: 1 },
      { n: 20, speedKmh: 0, ignition: false, from: 40, noise: 1 },
      { n: 10, speedKmh: 60, from: 40, noise: 1 },
      { n: 8, speedKmh: 0, ignition: false, from: 40, to: 95, noise: 1 },
      { n: 20, speedKmh: 60, from: 95, to: 92, noise: 1 },
    ], random(21));
    const whole = run(fixes);
    expect(whole.changes.map((c) => c.kind)).toEqual(['drop', 'refill']);
    for (const size of [1, 3, 7, 25]) {
      const changes: FuelChange[] = [];
      let state: FuelState | null = null;
      for (let i = 0; i < fixes.length; i += size) {
        const next = detectFuelChanges(state, rules, null, fixes.slice(i, i + size), changes);
        state = fuelState(JSON.parse(JSON.stringify(next)) as Record<string, unknown> | null);
      }
      expect(changes).toEqual(whole.changes);
    }
  });

  it('a slow siphon while parked fires once, and a replayed batch decides nothing more (20 seeds)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const fixes = track([
        { n: 20, speedKmh: 60, from: 70, noise: 2 },
        { n: 30, speedKmh: 0, ignition: false, from: 70, to: 40, noise: 2 },
        { n: 20, speedKmh: 0, ignition: false, from: 40, noise: 2 },
      ], random(seed));
      const first = run(fixes);
      expect(first.changes.map((c) => c.kind), `seed ${seed}`).toEqual(['drop']);
      expect(first.changes[0]!.amountPercent).toBeGreaterThan(27);
      expect(run(fixes, null, first.state).changes).toEqual([]);
    }
  });

  it('after a long silence the level is compared only if the vehicle is still parked where it was', () => {
    const before = track([
      { n: 10, speedKmh: 50, from: 60 },
      { n: 10, speedKmh: 0, ignition: false, from: 60 },
    ]);
    const last = before[before.length - 1]!;
    const later = (lng: number) => track([{ n: 10, speedKmh: 0, ignition: false, from: 35 }], random(1), last.t + 6 * 3600_000)
      .map((f) => ({ ...f, lng }));
    // Three hours unseen, back where it stood: siphoned while the tracker was off.
    expect(run([...before, ...later(last.lng)]).changes).toEqual([expect.objectContaining({ kind: 'drop', fromPercent: 60, toPercent: 35 })]);
    // Seen again 20 km away: it drove unseen, so the fall may be consumption.
    expect(run([...before, ...later(last.lng + 0.2)]).changes).toEqual([]);
  });
});
