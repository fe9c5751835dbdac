import type { Logger } from '../../runtime/logger.ts';
import type { GeocoderSettings, ReverseGeocoder } from './reverse-geocoder.ts';
import { createOfflineGeocoder } from './offline-geocoder.ts';
import { createOnlineGeocoder } from './online-geocoder.ts';
import { ONLINE_PROVIDERS } from './online-providers.ts';

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
    case 'pelias': {
      // cli/config.ts refuses an online provider without GEOCODER_URL; this guards other callers.
      if (!settings.url) throw new Error(`GEOCODER=${settings.provider} needs GEOCODER_URL, the provider's base URL`);
      return createOnlineGeocoder({
        provider: ONLINE_PROVIDERS[settings.provider],
        url: settings.url,
        ...(settings.key ? { key: settings.key } : {}),
        timeoutMs: settings.timeoutMs,
        requestsPerSecond: settings.requestsPerSecond,
        cacheSize: settings.cacheSize,
        fallback: createOfflineGeocoder(geocoderLog),
        log: geocoderLog,
      });
    }
  }
}
