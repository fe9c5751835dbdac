import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, silentLogger, type Logger } from '../../runtime/logger.ts';
import { createGeocoder } from './create-geocoder.ts';
import { sharedPlaceGazetteer } from './place-gazetteer.ts';
import type { GeocoderSettings, ReverseGeocoder } from './reverse-geocoder.ts';

interface Received {
  url: URL;
  headers: IncomingMessage['headers'];
  at: number;
}

/** A provider on a loopback port: `answer` writes each response; every request is recorded. */
async function startProvider(answer: (request: IncomingMessage, response: ServerResponse) => void) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    received.push({ url: new URL(request.url!, 'http://localhost'), headers: request.headers, at: performance.now() });
    answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  cleanups.push(close);
  return { url, received };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => (_request: IncomingMessage, response: ServerResponse) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(typeof body === 'string' ? body : JSON.stringify(body));
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function geocoder(settings: Partial<GeocoderSettings> & Pick<GeocoderSettings, 'provider' | 'url'>, log: Logger = silentLogger): ReverseGeocoder {
  const created = createGeocoder({ timeoutMs: 3000, requestsPerSecond: 1000, cacheSize: 100, ...settings }, log);
  cleanups.push(async () => created.close?.());
  return created;
}

function logLines(): { log: Logger; lines: Array<{ level: string; msg: string; err?: string }> } {
  const lines: Array<{ level: string; msg: string; err?: string }> = [];
  return { log: createLogger('info', (line) => lines.push(JSON.parse(line))), lines };
}

// The documented answers, as each provider's reference shows them.
const NOMINATIM_ZOCALO = {
  place_id: 296434133,
  licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
  osm_type: 'way',
  osm_id: 25709178,
  lat: '19.4326009',
  lon: '-99.1332077',
  category: 'highway',
  type: 'pedestrian',
  place_rank: 26,
  importance: 0.1,
  addresstype: 'road',
  name: 'Plaza de la Constitución',
  display_name: 'Plaza de la Constitución, Centro, Cuauhtémoc, Ciudad de México, 06000, México',
  address: { road: 'Plaza de la Constitución', neighbourhood: 'Centro', borough: 'Cuauhtémoc', city: 'Ciudad de México', postcode: '06000', country: 'México', country_code: 'mx' },
  boundingbox: ['19.4318', '19.4334', '-99.1340', '-99.1324'],
};
const PHOTON_ZOCALO = {
  type: 'FeatureCollection',
  features: [
    {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [-99.1312, 19.4329] },
      properties: { osm_type: 'W', osm_id: 1, osm_key: 'building', osm_value: 'yes', type: 'house', name: 'Palacio Nacional', street: 'Plaza de la Constitución', housenumber: '1', postcode: '06000', city: 'Ciudad de México', state: 'Ciudad de México', country: 'México', countrycode: 'MX' },
    },
  ],
};
const PELIAS_ZOCALO = {
  geocoding: { version: '0.2', attribution: 'https://geocode.earth/guidelines', query: { 'point.lat': 19.4326, 'point.lon': -99.1332, size: 1 } },
  type: 'FeatureCollection',
  features: [
    {
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [-99.1332, 19.4326] },
      properties: { id: 'way/25709178', gid: 'openstreetmap:venue:way/25709178', layer: 'venue', source: 'openstreetmap', name: 'Zócalo', country_a: 'MEX', distance: 0.01, label: 'Zócalo, Mexico City, CDMX, Mexico' },
    },
  ],
  bbox: [-99.1332, 19.4326, -99.1332, 19.4326],
};
// What the offline geocoder answers for the point above.
const OFFLINE_ZOCALO = '740 m NW of Mexico City, MX';
const offline = createGeocoder({ provider: 'offline', timeoutMs: 3000, requestsPerSecond: 1, cacheSize: 10 }, silentLogger);

beforeAll(async () => {
  // The fallback's places, loaded before any timing matters.
  await sharedPlaceGazetteer();
});

describe('online providers against their documented answers', () => {
  it('Nominatim: /reverse?format=jsonv2, display_name, a User-Agent naming fleetcore, the key as a bearer token', async () => {
    const provider = await startProvider(json(NOMINATIM_ZOCALO));
    const answer = await geocoder({ provider: 'nominatim', url: provider.url, key: 'k-123' }).reverse(19.4326, -99.1332);
    expect(answer).toBe('Plaza de la Constitución, Centro, Cuauhtémoc, Ciudad de México, 06000, México');
    const [request] = provider.received;
    expect(request!.url.pathname).toBe('/reverse');
    expect(Object.fromEntries(request!.url.searchParams)).toEqual({ format: 'jsonv2', lat: '19.4326', lon: '-99.1332' });
    expect(request!.headers['user-agent']).toMatch(/^fleetcore\/\d/);
    expect(request!.headers.authorization).toBe('Bearer k-123');
  });

  it('Photon: /reverse?lat=&lon=, the first feature put together', async () => {
    const provider = await startProvider(json(PHOTON_ZOCALO));
    const answer = await geocoder({ provider: 'photon', url: `${provider.url}/photon/` }).reverse(19.4326, -99.1332);
    expect(answer).toBe('Palacio Nacional, Plaza de la Constitución 1, Ciudad de México, México');
    const [request] = provider.received;
    expect(request!.url.pathname).toBe('/photon/reverse');
    expect(Object.fromEntries(request!.url.searchParams)).toEqual({ lat: '19.4326', lon: '-99.1332' });
    expect(request!.headers.authorization).toBeUndefined();
  });

  it('Pelias: /v1/reverse?point.lat=&point.lon=, the key as api_key, the first label', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const answer = await geocoder({ provider: 'pelias', url: provider.url, key: 'ge-abc' }).reverse(19.4326, -99.1332);
    expect(answer).toBe('Zócalo, Mexico City, CDMX, Mexico');
    const [request] = provider.received;
    expect(request!.url.pathname).toBe('/v1/reverse');
    expect(Object.fromEntries(request!.url.searchParams)).toEqual({ 'point.lat': '19.4326', 'point.lon': '-99.1332', size: '1', api_key: 'ge-abc' });
  });

  it('a provider with nothing for the point: the offline answer', async () => {
    const provider = await startProvider(json({ error: 'Unable to geocode' }));
    expect(await geocoder({ provider: 'nominatim', url: provider.url }).reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
  });
});

describe('cache', () => {
  it('answers a point that rounds like an asked one without a request', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const pelias = geocoder({ provider: 'pelias', url: provider.url });
    await pelias.reverse(19.4326, -99.1332);
    expect(await pelias.reverse(19.43262, -99.13318)).toBe('Zócalo, Mexico City, CDMX, Mexico');
    expect(provider.received).toHaveLength(1);
    await pelias.reverse(19.4336, -99.1332); // 110 m north: another key
    expect(provider.received).toHaveLength(2);
  });

  it('sends one request for points asked together that round alike', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const pelias = geocoder({ provider: 'pelias', url: provider.url });
    const answers = await Promise.all([pelias.reverse(19.4326, -99.1332), pelias.reverse(19.43261, -99.1332), pelias.reverse(19.43259, -99.1332)]);
    expect(new Set(answers)).toEqual(new Set(['Zócalo, Mexico City, CDMX, Mexico']));
    expect(provider.received).toHaveLength(1);
  });

  it('keeps at most GEOCODER_CACHE_SIZE points', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const pelias = geocoder({ provider: 'pelias', url: provider.url, cacheSize: 1 });
    await pelias.reverse(19.4326, -99.1332);
    await pelias.reverse(19.5, -99.1);
    await pelias.reverse(19.4326, -99.1332);
    expect(provider.received).toHaveLength(3);
  });

  it('does not keep an offline answer given for a failure', async () => {
    let fail = true;
    const provider = await startProvider((request, response) => (fail ? json('oops', 503)(request, response) : json(PELIAS_ZOCALO)(request, response)));
    const pelias = geocoder({ provider: 'pelias', url: provider.url });
    expect(await pelias.reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
    fail = false;
    expect(await pelias.reverse(19.4326, -99.1332)).toBe('Zócalo, Mexico City, CDMX, Mexico');
  });
});

describe('fallback to offline', () => {
  it('on a timeout', async () => {
    const provider = await startProvider((request, response) => setTimeout(() => json(NOMINATIM_ZOCALO)(request, response), 2000));
    const started = performance.now();
    expect(await geocoder({ provider: 'nominatim', url: provider.url, timeoutMs: 200 }).reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it.each([
    ['a 500', json({ message: 'internal' }, 500)],
    ['a 429', json({ message: 'slow down' }, 429)],
    ['a body that is not JSON', json('<html>bad gateway</html>')],
    ['JSON of another shape', json({ results: [] })],
  ])('on %s', async (_case, answer) => {
    const provider = await startProvider(answer);
    expect(await geocoder({ provider: 'photon', url: provider.url }).reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
    expect(provider.received).toHaveLength(1);
  });

  it('when nothing listens at GEOCODER_URL', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    await cleanups.pop()!();
    expect(await geocoder({ provider: 'pelias', url: provider.url }).reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
  });

  it('logs once when a streak of failures begins and once when the provider answers again', async () => {
    let fail = true;
    const provider = await startProvider((request, response) => (fail ? json('down', 502)(request, response) : json(PELIAS_ZOCALO)(request, response)));
    const { log, lines } = logLines();
    const pelias = geocoder({ provider: 'pelias', url: provider.url }, log);
    for (let i = 0; i < 3; i++) await pelias.reverse(19.4 + i / 100, -99.13);
    expect(lines.map((line) => [line.level, line.err])).toEqual([['warn', 'HTTP 502']]);
    fail = false;
    await pelias.reverse(19.4326, -99.1332);
    await pelias.reverse(19.5, -99.1);
    fail = true;
    await pelias.reverse(19.6, -99.1);
    expect(lines.map((line) => line.level)).toEqual(['warn', 'info', 'warn']);
    expect(provider.received).toHaveLength(6);
  });

  it('holds requests back for a 429 with Retry-After, answering from offline meanwhile', async () => {
    const provider = await startProvider(json({ message: 'rate limited' }, 429, { 'retry-after': '2' }));
    const photon = geocoder({ provider: 'photon', url: provider.url, timeoutMs: 500 });
    expect(await photon.reverse(19.4326, -99.1332)).toBe(OFFLINE_ZOCALO);
    expect(await photon.reverse(19.5, -99.1)).toBe(await offline.reverse(19.5, -99.1));
    expect(provider.received).toHaveLength(1);
  });
});

describe('rate limit (GEOCODER_RATE_PER_S)', () => {
  it('spaces requests 1 / rate apart', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const pelias = geocoder({ provider: 'pelias', url: provider.url, requestsPerSecond: 5 });
    // A connection first: the first request on a new connection can arrive late by its set-up
    // (and by loading fetch itself, in a fresh process), which would shorten the next gap.
    await pelias.reverse(19.3, -99.13);
    const answers = await Promise.all([0, 1, 2, 3].map((i) => pelias.reverse(19.4 + i / 100, -99.13)));
    expect(answers).toEqual(Array(4).fill('Zócalo, Mexico City, CDMX, Mexico'));
    const at = provider.received.slice(1).map((request) => request.at);
    expect(at).toHaveLength(4);
    // Started 200 ms apart (unpaced, all four would arrive within a few ms). Arrivals carry the
    // scheduling jitter of a loaded machine, tens of ms on a busy 2-core CI box.
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(120);
    expect(at[3]! - at[0]!).toBeGreaterThanOrEqual(560);
  });

  it('answers from offline, without a request, a point whose turn is further off than the timeout', async () => {
    const provider = await startProvider(json(PELIAS_ZOCALO));
    const { log, lines } = logLines();
    const pelias = geocoder({ provider: 'pelias', url: provider.url, requestsPerSecond: 1, timeoutMs: 500 }, log);
    const answers = await Promise.all([pelias.reverse(19.4326, -99.1332), pelias.reverse(19.5, -99.1), pelias.reverse(19.6, -99.1)]);
    expect(answers).toEqual(['Zócalo, Mexico City, CDMX, Mexico', await offline.reverse(19.5, -99.1), await offline.reverse(19.6, -99.1)]);
    expect(provider.received).toHaveLength(1);
    expect(lines.map((line) => line.level)).toEqual(['warn']);
  });
});

describe('createGeocoder', () => {
  it('off: no address for any point', async () => {
    expect(await createGeocoder({ provider: 'off', timeoutMs: 3000, requestsPerSecond: 1, cacheSize: 10 }, silentLogger).reverse(19.4326, -99.1332)).toBeNull();
  });

  it('an online provider needs GEOCODER_URL', () => {
    expect(() => createGeocoder({ provider: 'photon', timeoutMs: 3000, requestsPerSecond: 1, cacheSize: 10 }, silentLogger)).toThrow(/GEOCODER_URL/);
  });
});
