import { describe, expect, it } from 'vitest';
import { compassDirection, initialBearing } from './compass-direction.ts';

describe('compassDirection', () => {
  it.each([
    [0, 'N'], [22.4, 'N'], [22.5, 'NE'], [45, 'NE'], [90, 'E'], [135, 'SE'], [180, 'S'],
    [225, 'SW'], [270, 'W'], [315, 'NW'], [337.4, 'NW'], [337.5, 'N'], [359.9, 'N'], [360, 'N'], [-45, 'NW'], [405, 'NE'],
  ] as const)('%s° is %s', (bearing, point) => {
    expect(compassDirection(bearing)).toBe(point);
  });
});

describe('initialBearing', () => {
  it.each([
    ['north', 0, 0, 1, 0, 0],
    ['east along the equator', 0, 0, 0, 1, 90],
    ['south', 1, 0, 0, 0, 180],
    ['west', 0, 1, 0, 0, 270],
  ] as const)('%s', (_case, fromLat, fromLng, toLat, toLng, expected) => {
    expect(initialBearing(fromLat, fromLng, toLat, toLng)).toBeCloseTo(expected, 6);
  });

  it('follows the great circle, not the rhumb line: Mexico City to Tokyo starts north-west', () => {
    const bearing = initialBearing(19.4326, -99.1332, 35.6762, 139.6503);
    expect(bearing).toBeGreaterThan(300);
    expect(bearing).toBeLessThan(320);
  });
});
