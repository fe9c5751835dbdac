import { describe, expect, it } from 'vitest';
import { describeNearPlace, distancePhrase, placeName, type Place } from './place-phrase.ts';

const coyoacan: Place = { name: 'Coyoacán', latitude: 19.35, longitude: -99.16, region: 'Ciudad de México', district: 'Coyoacán', country: 'MX' };
// One degree of latitude on the sphere of EARTH_RADIUS_M.
const M_PER_DEGREE = 111_195.08;

describe('placeName', () => {
  it.each([
    ['a district named as the place is said once', coyoacan, 'Coyoacán, Ciudad de México, MX'],
    ['a district of its own is said', { ...coyoacan, name: 'Springfield', district: 'Sangamon County', region: 'Illinois', country: 'US' }, 'Springfield, Sangamon County, Illinois, US'],
    ['a region named as the place is said once', { ...coyoacan, name: 'Mexico City', district: '', region: 'Mexico City' }, 'Mexico City, MX'],
    ['no region or district', { ...coyoacan, name: 'Vaduz', district: '', region: '', country: 'LI' }, 'Vaduz, LI'],
  ] as const)('%s', (_case, place, expected) => {
    expect(placeName(place)).toBe(expected);
  });
});

describe('distancePhrase', () => {
  it.each([
    [3, '10 m'], [350, '350 m'], [354, '350 m'], [994, '990 m'], [995, '1.0 km'], [2_149, '2.1 km'], [99_949, '99.9 km'], [99_950, '100 km'], [123_456, '123 km'],
  ] as const)('%s m is "%s"', (metres, phrase) => {
    expect(distancePhrase(metres)).toBe(phrase);
  });
});

describe('describeNearPlace', () => {
  it('names the place alone within 500 m of it', () => {
    expect(describeNearPlace(19.35 + 490 / M_PER_DEGREE, -99.16, coyoacan)).toBe('Coyoacán, Ciudad de México, MX');
  });

  it('gives metres from the place beyond 500 m, under 1 km', () => {
    expect(describeNearPlace(19.35 - 610 / M_PER_DEGREE, -99.16, coyoacan)).toBe('610 m S of Coyoacán, Ciudad de México, MX');
    expect(describeNearPlace(19.35, -99.16 - 700 / M_PER_DEGREE / Math.cos((19.35 * Math.PI) / 180), coyoacan)).toBe('700 m W of Coyoacán, Ciudad de México, MX');
  });

  it('gives kilometres and direction from 1 km', () => {
    const d = 1_500 / M_PER_DEGREE / Math.SQRT2;
    const east = d / Math.cos((19.35 * Math.PI) / 180);
    expect(describeNearPlace(19.35 + d, -99.16 + east, coyoacan)).toBe('1.5 km NE of Coyoacán, Ciudad de México, MX');
    expect(describeNearPlace(19.35 - 1_100 / M_PER_DEGREE, -99.16, coyoacan)).toBe('1.1 km S of Coyoacán, Ciudad de México, MX');
  });

  it('gives nothing beyond 50 km of the nearest place', () => {
    expect(describeNearPlace(19.35, -99.16 + 0.4, coyoacan)).toMatch(/^4\d\.\d km E of Coyoacán/);
    expect(describeNearPlace(19.35 + 50_100 / M_PER_DEGREE, -99.16, coyoacan)).toBeNull();
  });
});
