import type { Logger } from '../../runtime/logger.ts';
import type { GeocoderSettings, ReverseGeocoder } from './reverse-geocoder.ts';
import { createOfflineGeocoder } from './offline-geocoder.ts';

/** Geocoding off: no point has an address. */
const noGeocoder: ReverseGeocoder = { reverse: async () => null };

/**
 * The reverse geocoder GEOCODER names. The online providers answer from the offline one whenever
 * they fail, so every provider but `off` loads the GeoNames places (at first use).
 */
export function createGeocoder(settings: GeocoderSettings, log: Logger): ReverseGeocoder {
  const geocoderLog = log.child({ component: 'geocoder', provider: settings.provider });
  switch (settings.provider) {
    case 'off':
      return noGeocoder;
    case 'offline':
      return createOfflineGeocoder(geocoderLog);
    case 'nominatim':
    case 'photon':
    case 'pelias':
      throw new Error(`GEOCODER=${settings.provider} is not available yet in this build; use offline`);
  }
}
