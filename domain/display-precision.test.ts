import { describe, expect, it } from 'vitest';
import { metresToKm, roundCoordinate, roundHeading, roundKm, roundMetres, roundMinutes, roundSpeedKmh, roundTo, roundVolts } from './display-precision.ts';

describe('display precision', () => {
  it.each([
    // What PostGIS hands back for a vertex given as 19.3687, and its longitude's twin.
    [19.368699999999997, 19.3687],
    [-99.16310000000001, -99.1631],
    [19.43260004, 19.4326],
    [19.43260005, 19.4326001],
    [-19.43260005, -19.4326001], // half away from zero on both sides
    [0.00000004, 0],
    [-0.00000004, 0],
    [180, 180],
    [-90, -90],
  ])('a coordinate %s reads %s (7 decimals)', (raw, shown) => {
    expect(roundCoordinate(raw)).toBe(shown);
    expect(JSON.stringify(roundCoordinate(raw))).toBe(JSON.stringify(shown));
  });

  it('never answers -0, which would print as 0 but compare apart', () => {
    expect(Object.is(roundCoordinate(-0.00000004), 0)).toBe(true);
    expect(Object.is(roundTo(-0.04, 1), 0)).toBe(true);
  });

  it.each([
    ['km to the metre', roundKm, 12345.67849, 12345.678],
    ['km from metres', metresToKm, 12_345.6, 12.346],
    ['metres to 10 cm', roundMetres, 766.4499999, 766.4],
    ['km/h to 0.1', roundSpeedKmh, 42.57, 42.6],
    ['a heading to 0.1°', roundHeading, 359.96, 360],
    ['volts to 10 mV', roundVolts, 12.625000001, 12.63],
    ['minutes to 0.1', roundMinutes, 12.54, 12.5],
  ] as const)('%s', (_, round, raw, shown) => {
    expect(round(raw)).toBe(shown);
  });

  it('leaves values with fewer decimals as they are, and null as null', () => {
    for (const whole of [0, 42, 90, 2240, 12_345_678]) {
      for (const round of [roundCoordinate, roundKm, roundMetres, roundSpeedKmh, roundHeading, roundVolts, roundMinutes]) expect(round(whole)).toBe(whole);
    }
    expect(roundCoordinate(19.4326)).toBe(19.4326);
    expect(roundSpeedKmh(42.5)).toBe(42.5);
    expect(roundVolts(null)).toBeNull();
    expect(roundCoordinate(null)).toBeNull();
  });

  it('answers every coordinate as the double of a 7-decimal number, printed with at most 7 decimals', () => {
    for (let i = 0; i < 10_000; i++) {
      const shown = roundCoordinate(((i * 0.123456789123) % 180) - 90);
      expect(Number(shown.toFixed(7))).toBe(shown);
      // JSON writes numbers under 1e-6 in exponent form (7e-7), exactly the same value.
      if (Math.abs(shown) >= 1e-6) expect(JSON.stringify(shown)).toMatch(/^-?\d+(\.\d{1,7})?$/);
    }
  });
});
