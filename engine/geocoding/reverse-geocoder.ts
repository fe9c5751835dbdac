/**
 * Reverse geocoding behind one small interface: the engine asks for the address of a point and
 * never learns which provider answered it (GEOCODER chooses; see docs/geocoding.md).
 */
export interface ReverseGeocoder {
  /** The address of a point, or null when there is none to give (at sea with no place near, geocoding off). Never throws for a provider's failure. */
  reverse(latitude: number, longitude: number): Promise<string | null>;
  /**
   * Loads what the first lookup would (the offline places: about a second of parsing that holds the
   * event loop), so a process can pay it at start rather than while it serves. Never throws.
   */
  ready?(): Promise<void>;
  close?(): Promise<void>;
}

export interface GeocoderSettings {
  provider: 'offline' | 'nominatim' | 'photon' | 'pelias' | 'off';
  url?: string; // GEOCODER_URL, required for the online providers
  key?: string; // GEOCODER_KEY: Pelias takes it as the api_key query parameter; Nominatim and Photon as an Authorization: Bearer header (docs/geocoding.md)
  timeoutMs: number; // GEOCODER_TIMEOUT_MS, default 3000
  requestsPerSecond: number; // GEOCODER_RATE_PER_S, default 1
  cacheSize: number; // GEOCODER_CACHE_SIZE, default 10000 entries
}
