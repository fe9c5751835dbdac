import { nominatimAddress, peliasAddress, photonAddress } from '../../domain/geocoding/provider-answers.ts';

export type OnlineProviderName = 'nominatim' | 'photon' | 'pelias';

/** How to ask one online provider for the address of a point, and how to read its answer. */
export interface OnlineProvider {
  name: OnlineProviderName;
  request(baseUrl: string, latitude: number, longitude: number, key: string | undefined): { url: URL; headers: Record<string, string> };
  /** The address in the parsed JSON body, null for "nothing here"; throws ProviderAnswerError for a body of another shape. */
  address(body: unknown): string | null;
}

/** `GEOCODER_URL` plus a path, keeping any path prefix the URL has (a provider behind a proxy at /geo/). */
function endpoint(baseUrl: string, path: string, query: Record<string, string>): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

// Neither Nominatim nor Photon defines a key; a server of either behind an authenticating proxy
// takes GEOCODER_KEY as a bearer token.
const bearer = (key: string | undefined): Record<string, string> => (key ? { Authorization: `Bearer ${key}` } : {});

export const ONLINE_PROVIDERS: Record<OnlineProviderName, OnlineProvider> = {
  nominatim: {
    name: 'nominatim',
    request: (baseUrl, latitude, longitude, key) => ({
      url: endpoint(baseUrl, '/reverse', { format: 'jsonv2', lat: String(latitude), lon: String(longitude) }),
      headers: bearer(key),
    }),
    address: nominatimAddress,
  },
  photon: {
    name: 'photon',
    request: (baseUrl, latitude, longitude, key) => ({
      url: endpoint(baseUrl, '/reverse', { lat: String(latitude), lon: String(longitude) }),
      headers: bearer(key),
    }),
    address: photonAddress,
  },
  pelias: {
    name: 'pelias',
    request: (baseUrl, latitude, longitude, key) => ({
      url: endpoint(baseUrl, '/v1/reverse', {
        'point.lat': String(latitude),
        'point.lon': String(longitude),
        size: '1',
        ...(key ? { api_key: key } : {}),
      }),
      headers: {},
    }),
    address: peliasAddress,
  },
};
