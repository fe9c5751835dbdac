import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAddressKeeper } from '../engine/geocoding/address-keeper.ts';
import { createGeocoder } from '../engine/geocoding/create-geocoder.ts';
import type { ReverseGeocoder } from '../engine/geocoding/reverse-geocoder.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Addresses kept after the commit, end to end: Teltonika trackers over TCP, the engine with a
// Nominatim geocoder pointed at a local HTTP server answering Nominatim's documented /reverse JSON
// (jsonv2), and the API. The server counts its requests, so a lookup the reuse distance saves is seen
// not to happen.

const REUSE_M = 100;
/** Metres north as degrees of latitude. */
const north = (m: number) => m / 111_195;

/** A local Nominatim: every point has an address naming the point it was asked for; `hang` keeps every request open. */
async function nominatim(options: { hang?: boolean } = {}) {
  const asked: Array<{ lat: number; lon: number }> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://localhost');
    if (url.pathname !== '/reverse' || url.searchParams.get('format') !== 'jsonv2') {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { code: 400, message: 'Parameter format unknown' } }));
      return;
    }
    const lat = Number(url.searchParams.get('lat'));
    const lon = Number(url.searchParams.get('lon'));
    asked.push({ lat, lon });
    if (options.hang) return;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
      place_id: 1000 + asked.length, licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
      osm_type: 'way', osm_id: 2000 + asked.length, lat: String(lat), lon: String(lon), category: 'highway', type: 'residential',
      place_rank: 26, importance: 0.1, addresstype: 'road', name: 'Calle de Prueba',
      display_name: addressOf(lat, lon),
      address: { road: 'Calle de Prueba', city: 'Ciudad de México', country: 'México', country_code: 'mx' },
      boundingbox: [String(lat - 0.001), String(lat + 0.001), String(lon - 0.001), String(lon + 0.001)],
    }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The address the local Nominatim gives a point: it names the point, to 4 decimals. */
const addressOf = (lat: number, lon: number) => `Calle de Prueba ${lat.toFixed(4)} ${lon.toFixed(4)}, Ciudad de México, México`;

let database: TestDatabase;
let make: ReturnType<typeof fixtures>;
let tenant: Awaited<ReturnType<ReturnType<typeof fixtures>['tenant']>>;

beforeAll(async () => {
  database = await openTestDatabase();
  make = fixtures(database.db);
  tenant = await make.tenant();
});
afterAll(async () => {
  await database?.destroy();
});

/** A harness whose engine keeps addresses through a Nominatim geocoder at `url`. */
async function harnessWithGeocoder(url: string, timeoutMs: number): Promise<{ harness: EngineHarness; geocoder: ReverseGeocoder }> {
  const geocoder = createGeocoder({ provider: 'nominatim', url, timeoutMs, requestsPerSecond: 100, cacheSize: 1000 }, silentLogger);
  const harness = await startEngineHarness(database, { ...ENGINE_TEST_SETTINGS, geocoding: { geocoder, reuseM: REUSE_M, pollMs: 200 } });
  return { harness, geocoder };
}

async function vehicle(imei: string, name: string) {
  return make.device(tenant.account.id, { imei, name, userIds: [tenant.user.id] });
}

async function api(harness: EngineHarness, path: string) {
  const response = await harness.app.request(`/api/v1${path}`, { headers: { Authorization: `Bearer ${tenant.key}` } });
  const body = (await response.json()) as any;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

const statusOf = async (harness: EngineHarness, imei: string) => ((await api(harness, '/devices/status')).data as any[]).find((d) => d.deviceId === imei);

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

async function eventsOf(deviceId: number, type: string) {
  const { rows } = await sql<{ data: any }>`SELECT data FROM events WHERE device_id = ${deviceId} AND type = ${type} ORDER BY id`.execute(database.db);
  return rows.map((r) => r.data);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('addresses through a Nominatim server', () => {
  let provider: Awaited<ReturnType<typeof nominatim>>;
  let harness: EngineHarness;
  let geocoder: ReverseGeocoder;

  beforeAll(async () => {
    provider = await nominatim();
    ({ harness, geocoder } = await harnessWithGeocoder(provider.url, 5_000));
  });
  afterAll(async () => {
    await harness?.close();
    await geocoder?.close?.();
    await provider?.close();
  });

  it('shows a reported position\'s address within seconds, keeps it without a lookup within the reuse distance, looks up again beyond it', async () => {
    const IMEI = '356307042447001';
    const van = await vehicle(IMEI, 'Address Van');
    const P0 = { latitude: 19.4326, longitude: -99.1332 };
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      const first = await tracker.report(P0);
      const reported = Date.now();
      await eventually(() => statusOf(harness, IMEI), (s) => expect(s.address).toBe(addressOf(P0.latitude, P0.longitude)), 5_000);
      expect(Date.now() - reported).toBeLessThan(5_000);
      expect(provider.asked).toHaveLength(1);
      await evaluatedThrough(van.id, first);
      // The first fix's ignition.on was logged with what was known then: nothing, or (the keeper being
      // quicker than the engine) this very point's address.
      expect([null, addressOf(P0.latitude, P0.longitude)]).toContain((await eventsOf(van.id, 'vehicle.ignition.on'))[0].position.address);

      // 60 m on (a point of its own in the geocoder's cache): the address stays, and nothing is asked.
      const near = { latitude: P0.latitude + north(60), longitude: P0.longitude };
      await evaluatedThrough(van.id, await tracker.report(near));
      await pause(1_500);
      const kept = await statusOf(harness, IMEI);
      expect(kept.latitude).toBeCloseTo(near.latitude, 5);
      expect(kept.address).toBe(addressOf(P0.latitude, P0.longitude));
      expect(provider.asked).toHaveLength(1);

      // 1 km on, with the ignition off: the address follows within seconds; the event carries what was
      // known when it was logged, never the address of the point 1 km back.
      const P1 = { latitude: P0.latitude + north(1_000), longitude: P0.longitude };
      const moved = await tracker.report({ ...P1, speedKmh: 0, ignition: false });
      await eventually(() => statusOf(harness, IMEI), (s) => expect(s.address).toBe(addressOf(P1.latitude, P1.longitude)), 5_000);
      expect(provider.asked).toHaveLength(2);
      expect(provider.asked[1]!.lat).toBeCloseTo(P1.latitude, 6);
      await evaluatedThrough(van.id, moved);
      expect([null, addressOf(P1.latitude, P1.longitude)]).toContain((await eventsOf(van.id, 'vehicle.ignition.off'))[0].position.address);

      // 30 m from where the address was looked up: the event carries it; no lookup.
      const P2 = { latitude: P1.latitude + north(30), longitude: P1.longitude };
      await evaluatedThrough(van.id, await tracker.report({ ...P2, speedKmh: 0, ignition: true }));
      const ignitionOn = await eventsOf(van.id, 'vehicle.ignition.on');
      expect(ignitionOn).toHaveLength(2);
      expect(ignitionOn[1].position.lat).toBeCloseTo(P2.latitude, 5);
      expect(ignitionOn[1].position.address).toBe(addressOf(P1.latitude, P1.longitude));

      const detail = await api(harness, `/vehicles/${IMEI}`);
      expect(detail.data.address).toBe(addressOf(P1.latitude, P1.longitude));
      await pause(500);
      expect(provider.asked).toHaveLength(2);
    } finally {
      tracker.close();
    }
  });

  it('gives trips their start and end addresses and stops theirs, reusing the vehicle\'s known address near it', async () => {
    const IMEI = '356307042447002';
    const truck = await vehicle(IMEI, 'Trip Truck');
    const S = { latitude: 19.30, longitude: -99.20 };
    const start = new Date(Math.floor((Date.now() - 3_600_000) / 1000) * 1000);
    const fixes: Array<{ time: Date; latitude: number; longitude: number; speedKmh: number; ignition: boolean }> = [];
    let t = start.getTime();
    let metres = 0;
    // Parked 6 min, 5 km north at 60 km/h, parked 6 min: one trip between two stops.
    for (const leg of [{ seconds: 360, kmh: 0 }, { seconds: 300, kmh: 60 }, { seconds: 360, kmh: 0 }]) {
      for (let s = 0; s < leg.seconds; s += 10) {
        fixes.push({ time: new Date(t), latitude: S.latitude + north(metres), longitude: S.longitude, speedKmh: leg.kmh, ignition: leg.kmh > 0 });
        t += 10_000;
        metres += (leg.kmh / 3.6) * 10;
      }
    }
    const E = fixes.at(-1)!;
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      for (let i = 0; i < fixes.length; i += 20) await tracker.reportAll(fixes.slice(i, i + 20));
    } finally {
      tracker.close();
    }
    await evaluatedThrough(truck.id, E.time);

    const day = (d: Date) => d.toISOString().slice(0, 10);
    const report = async () =>
      (await api(harness, `/reports/trips?from=${day(new Date(start.getTime() - 86_400_000))}&to=${day(new Date(start.getTime() + 86_400_000))}&deviceIds=${IMEI}`)).data.vehicles[0];
    const done = await eventually(report, (v) => {
      expect(v.trips).toHaveLength(1);
      expect(v.trips[0].endTime).not.toBeNull();
      expect(v.trips[0].endAddress).not.toBeNull();
      expect(v.stops.every((s: any) => s.address !== null)).toBe(true);
    }, 10_000);
    const trip = done.trips[0];
    expect(trip.startAddress).toMatch(new RegExp(`^Calle de Prueba ${S.latitude.toFixed(4)} `));
    // The end is where the vehicle still is: the address looked up for its state serves the trip's end and the stop.
    expect(trip.endAddress).toBe(addressOf(E.latitude, E.longitude));
    expect(done.stops.map((s: any) => s.address)).toEqual([trip.startAddress, addressOf(E.latitude, E.longitude)]);
    const askedHere = provider.asked.filter((p) => Math.abs(p.lon - S.longitude) < 1e-9);
    // The vehicle's point (its end) once, the start once: the stop at the start is within the reuse distance of it.
    expect(askedHere.length).toBeLessThanOrEqual(3);
    expect(askedHere.filter((p) => Math.abs(p.lat - E.latitude) < 1e-6)).toHaveLength(1);
  });
});

describe('a provider that never answers', () => {
  let provider: Awaited<ReturnType<typeof nominatim>>;
  let harness: EngineHarness;
  let geocoder: ReverseGeocoder;

  beforeAll(async () => {
    provider = await nominatim({ hang: true });
    // Far longer than the test: every lookup hangs throughout it.
    ({ harness, geocoder } = await harnessWithGeocoder(provider.url, 60_000));
  });
  afterAll(async () => {
    await harness?.close();
    await geocoder?.close?.();
    await provider?.close();
  });

  it('delays no geofence event while lookups hang', async () => {
    const IMEI = '356307042447003';
    const car = await vehicle(IMEI, 'Fence Car');
    const OUT = { latitude: 19.60, longitude: -99.30 };
    const IN = { latitude: 19.65, longitude: -99.30 };
    await make.geofence(tenant.account.id, 'Hang Yard', { kind: 'circle', lat: IN.latitude, lng: IN.longitude, radiusMeters: 300 });
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      await evaluatedThrough(car.id, await tracker.report(OUT));
      // The lookup for the vehicle's position is asked and held open.
      await eventually(async () => provider.asked.length, (n) => expect(n).toBeGreaterThanOrEqual(1), 5_000);
      await tracker.report(IN);
      const sent = Date.now();
      await eventually(() => eventsOf(car.id, 'vehicle.geofence.enter'), (e) => expect(e).toHaveLength(1), 5_000);
      expect(Date.now() - sent).toBeLessThan(3_000);
      expect((await statusOf(harness, IMEI)).address).toBeNull();
    } finally {
      tracker.close();
    }
  });
});

describe('two engine processes', () => {
  it('share the work: each device is looked up once, an invalid fix never, and a newer fix stored meanwhile keeps the address', async () => {
    const provider = await nominatim();
    const geocoders = [0, 1].map(() => createGeocoder({ provider: 'nominatim', url: provider.url, timeoutMs: 5_000, requestsPerSecond: 100, cacheSize: 1000 }, silentLogger));
    const devices = await Promise.all(Array.from({ length: 12 }, (_, i) => vehicle(`35630704244${String(8100 + i)}`, `Shared ${i}`)));
    const invalid = await vehicle('356307042448200', 'No Fix');
    const placeOf = (i: number) => ({ latitude: 20 + i * 0.01, longitude: -100 });
    const fixTime = new Date();
    for (const [i, d] of devices.entries()) await make.fix(d.id, { fixTime, valid: true, ...placeOf(i) });
    await make.fix(invalid.id, { fixTime, valid: false, latitude: 21, longitude: -101 });
    // Slower answers, so both keepers claim while lookups are in flight.
    const keepers = geocoders.map((g) => startAddressKeeper(database.db, { reverse: async (lat, lng) => { await pause(100); return g.reverse(lat, lng); } }, silentLogger, { reuseM: REUSE_M, pollMs: 50, concurrency: 2 }));
    try {
      const addressed = () => database.db.selectFrom('device_states').select(['device_id', 'address']).where('device_id', 'in', [...devices.map((d) => d.id), invalid.id]).execute();
      await eventually(addressed, (rows) => expect(rows.filter((r) => r.address !== null)).toHaveLength(devices.length), 10_000);
      await pause(500);
      // Only these devices: a vehicle of the tests above whose lookup hung is looked up here too.
      const askedHere = () => provider.asked.filter((p) => p.lon === -100);
      expect(askedHere()).toHaveLength(devices.length);
      expect(new Set(askedHere().map((p) => p.lat.toFixed(4))).size).toBe(devices.length);
      expect((await addressed()).find((r) => r.device_id === invalid.id)!.address).toBeNull();

      // Ingest stores a newer fix 20 m on: the address stays, and nothing is asked.
      await make.fix(devices[0]!.id, { fixTime: new Date(fixTime.getTime() + 1000), valid: true, latitude: placeOf(0).latitude + north(20), longitude: -100 });
      await pause(500);
      const first = await database.db.selectFrom('device_states').select(['address', 'latitude']).where('device_id', '=', devices[0]!.id).executeTakeFirstOrThrow();
      expect(first.latitude).toBeCloseTo(placeOf(0).latitude + north(20), 6);
      expect(first.address).toBe(addressOf(placeOf(0).latitude, -100));
      expect(askedHere()).toHaveLength(devices.length);
    } finally {
      for (const k of keepers) await k.close();
      for (const g of geocoders) await g.close?.();
      await provider.close();
    }
  });
});
