import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARTH_RADIUS_M } from '../domain/geofences/fence-shape.ts';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Scripted drives over a real Teltonika TCP connection, segmented by the engine as the fixes arrive,
// read back through GET /reports/trips. Each scenario has a vehicle of its own.

const TZ = 'Europe/Madrid';
const LAT0 = 40.4;
const LNG0 = -3.7;
/** Metres due north as degrees of latitude, on the engine's sphere. */
const north = (m: number) => (m / EARTH_RADIUS_M) * (180 / Math.PI);

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
let accountId: number;
let userId: number;
let make: ReturnType<typeof fixtures>;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, ENGINE_TEST_SETTINGS);
  make = fixtures(database.db);
  const tenant = await make.tenant(TZ);
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
  // The depot at the start, the customer 10 km north; a city zone around both (the smaller name wins).
  await make.geofence(accountId, 'Depot', { kind: 'circle', lat: LAT0, lng: LNG0, radiusMeters: 200 });
  await make.geofence(accountId, 'Customer', { kind: 'circle', lat: LAT0 + north(10_000), lng: LNG0, radiusMeters: 200 });
  await make.geofence(accountId, 'City', { kind: 'circle', lat: LAT0 + north(5_000), lng: LNG0, radiusMeters: 8_000 });
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

let imeis = 0;
async function vehicle(name: string) {
  const imei = `35800704245${String(++imeis).padStart(4, '0')}`;
  const device = await make.device(accountId, { imei, name, plates: `TR-${imeis}`, userIds: [userId] });
  return { id: device.id, imei, name };
}

interface Leg {
  seconds: number;
  kmh: number;
  ignition: boolean;
}

interface ScriptedFix {
  time: Date;
  latitude: number;
  longitude: number;
  speedKmh: number;
  ignition: boolean;
  odometer?: number;
}

/** Due north from the depot, a fix every 10 s with the speed of its leg; the place follows the speeds. */
function route(start: Date, legs: Leg[], fromMetres = 0): ScriptedFix[] {
  const fixes: ScriptedFix[] = [];
  let t = start.getTime();
  let metres = fromMetres;
  for (const leg of legs) {
    for (let s = 0; s < leg.seconds; s += 10) {
      fixes.push({ time: new Date(t), latitude: LAT0 + north(metres), longitude: LNG0, speedKmh: leg.kmh, ignition: leg.ignition });
      t += 10_000;
      metres += (leg.kmh / 3.6) * 10;
    }
  }
  return fixes;
}

async function send(imei: string, fixes: ScriptedFix[]) {
  const tracker = await scriptedTracker(harness.ports.teltonika!, imei);
  for (const f of fixes) await tracker.report({ ...f, heading: 0, satellites: 9 });
  tracker.close();
}

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

async function api(path: string, as = key) {
  const response = await harness.app.request(`/api/v1${path}`, { headers: { Authorization: `Bearer ${as}` } });
  return { status: response.status, body: (await response.json()) as any };
}

/** Whole seconds since the epoch, as the tracker's clock reports them. */
const hoursAgo = (h: number) => new Date(Math.floor((Date.now() - h * 3_600_000) / 1000) * 1000);
const at = (start: Date, s: number) => new Date(start.getTime() + s * 1000);
const inZone = (d: Date) => new Date(d).getTime();
const day = (d: Date) => d.toISOString().slice(0, 10);

/** The report for one vehicle over the two days around `start` (UTC dates are within a day of Madrid's). */
async function reportFor(imei: string, start: Date, include?: string) {
  const from = day(new Date(start.getTime() - 86_400_000));
  const to = day(new Date(start.getTime() + 86_400_000));
  const { status, body } = await api(`/reports/trips?from=${from}&to=${to}&deviceIds=${imei}${include ? `&include=${include}` : ''}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data.vehicles[0];
}

describe('trips and stops of a scripted drive', () => {
  // Parked at the depot 10 min (ignition on for the last 5), 10 km north at 60 km/h, parked at the customer 10 min (ignition on 1 min).
  const LEGS: Leg[] = [
    { seconds: 300, kmh: 0, ignition: false },
    { seconds: 300, kmh: 0, ignition: true },
    { seconds: 600, kmh: 60, ignition: true },
    { seconds: 60, kmh: 0, ignition: true },
    { seconds: 540, kmh: 0, ignition: false },
  ];

  it('reports the trip with its distance, times to the second, idle time and geofences, and the stops around it', async () => {
    const van = await vehicle('Scripted Van');
    const start = hoursAgo(3);
    const fixes = route(start, LEGS);
    await send(van.imei, fixes);
    await evaluatedThrough(van.id, fixes.at(-1)!.time);

    const report = await reportFor(van.imei, start);
    expect(report.deviceId).toBe(van.imei);
    expect(report.trips).toHaveLength(1);
    const trip = report.trips[0];
    // It leaves from the last still fix (590 s) and ends at the first still fix at the customer (1200 s).
    expect(inZone(trip.startTime)).toBe(at(start, 590).getTime());
    expect(inZone(trip.endTime)).toBe(at(start, 1200).getTime());
    expect(trip.startTime).toMatch(/\+0[12]:00$/);
    expect(trip.durationS).toBe(610);
    expect(trip.drivingS).toBe(610);
    expect(trip.idleS).toBe(0);
    expect(Math.abs(trip.distanceKm - 10) / 10).toBeLessThan(0.01);
    expect(trip.maxSpeedKmh).toBe(60);
    expect(trip.averageSpeedKmh).toBeCloseTo(59, 0);
    expect(trip).toMatchObject({ startGeofence: 'Depot', endGeofence: 'Customer', overspeedS: 0, harshEvents: 0, driver: null });
    expect(trip.startPosition.lat).toBeCloseTo(LAT0, 5);
    expect(trip.endPosition.lat).toBeCloseTo(LAT0 + north(10_000), 5);

    expect(report.stops.map((s: any) => [inZone(s.startTime), s.endTime && inZone(s.endTime), s.geofence])).toEqual([
      [start.getTime(), at(start, 590).getTime(), 'Depot'],
      [at(start, 1200).getTime(), null, 'Customer'],
    ]);
    expect(report.stops[0]).toMatchObject({ durationS: 590, engineIdleS: 290 });
    // Still there: its duration runs to the last fix so far.
    expect(report.stops[1]).toMatchObject({ durationS: 590, engineIdleS: 60 });

    expect(report.summary).toMatchObject({ tripCount: 1, drivingS: 610, idleS: 350, maxSpeedKmh: 60 });
    expect(report.summary.distanceKm).toBeCloseTo(trip.distanceKm, 3);
  }, 60_000);

  it('shows a trip in progress with endTime null, and ends it once the vehicle has stood still long enough', async () => {
    const car = await vehicle('Running Car');
    // Recent: a trip whose last fix is older than TRIP_MAX_GAP_S is shown ended (the next test but one).
    const start = hoursAgo(0.7);
    const fixes = route(start, LEGS);
    const stopped = fixes.findIndex((f, i) => i > 60 && f.speedKmh === 0);
    await send(car.imei, fixes.slice(0, stopped + 3));
    await evaluatedThrough(car.id, fixes[stopped + 2]!.time);
    const running = await reportFor(car.imei, start, 'trips');
    expect(running.trips).toHaveLength(1);
    expect(running.trips[0]).toMatchObject({ endTime: null });
    expect(inZone(running.trips[0].startTime)).toBe(at(start, 590).getTime());
    expect(running.stops).toBeUndefined();
    // The same trip read as if an hour had passed without a fix: ended at its last fix, as the gap rule will end it.
    const silent = createApp({ db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: { ...TEST_CONFIG, tripMaxGapS: 60 } });
    const later = await silent.request(`/api/v1/reports/trips?from=${day(start)}&to=${day(new Date(start.getTime() + 86_400_000))}&deviceIds=${car.imei}&include=trips`, { headers: { Authorization: `Bearer ${key}` } });
    const shown = ((await later.json()) as any).data.vehicles[0].trips[0];
    expect(inZone(shown.endTime)).toBe(at(start, 1200).getTime());
    expect(shown.durationS).toBe(610);

    await send(car.imei, fixes.slice(stopped + 3));
    await evaluatedThrough(car.id, fixes.at(-1)!.time);
    const ended = await reportFor(car.imei, start, 'trips');
    expect(inZone(ended.trips[0].endTime)).toBe(at(start, 1200).getTime());
  }, 60_000);

  it('ends a trip at its last fix when the tracker falls silent for over an hour, and starts another after', async () => {
    const truck = await vehicle('Gap Truck');
    const start = hoursAgo(8);
    const before = route(start, [{ seconds: 60, kmh: 0, ignition: true }, { seconds: 600, kmh: 50, ignition: true }]);
    const resumeAt = new Date(before.at(-1)!.time.getTime() + 2 * 3_600_000);
    const after = route(resumeAt, [{ seconds: 600, kmh: 50, ignition: true }, { seconds: 400, kmh: 0, ignition: false }], 9_000);
    await send(truck.imei, [...before, ...after]);
    await evaluatedThrough(truck.id, after.at(-1)!.time);
    const report = await reportFor(truck.imei, start);
    expect(report.trips.map((t: any) => [inZone(t.startTime), t.endTime && inZone(t.endTime)])).toEqual([
      [at(start, 50).getTime(), before.at(-1)!.time.getTime()],
      [resumeAt.getTime(), after[60]!.time.getTime()],
    ]);
    // The silence is a stop from the last fix before it to the first fix after it.
    expect(report.stops.map((s: any) => [inZone(s.startTime), s.endTime && inZone(s.endTime)])).toEqual([
      [start.getTime(), at(start, 50).getTime()],
      [before.at(-1)!.time.getTime(), resumeAt.getTime()],
      [after[60]!.time.getTime(), null],
    ]);
  }, 60_000);

  it('measures distance by the odometer the tracker sends', async () => {
    const bus = await vehicle('Odometer Bus');
    const start = hoursAgo(10);
    // The odometer says 12 km for what the coordinates say is 10 km (a winding road): the odometer wins.
    const fixes = route(start, LEGS).map((f, i) => ({ ...f, odometer: 500_000 + Math.round(i * 100) }));
    await send(bus.imei, fixes);
    await evaluatedThrough(bus.id, fixes.at(-1)!.time);
    const report = await reportFor(bus.imei, start, 'trips');
    // From fix 59 (590 s) to fix 120 (1200 s): 61 steps of 100 m.
    expect(report.trips[0].distanceKm).toBe(6.1);
  }, 60_000);
});

describe('segmentation is idempotent', () => {
  it('gives the same rows when the fixes arrive twice, when evaluated again from scratch, and when two workers race', async () => {
    const van = await vehicle('Replay Van');
    const start = hoursAgo(12);
    const fixes = route(start, [
      { seconds: 120, kmh: 0, ignition: true },
      { seconds: 400, kmh: 40, ignition: true },
      { seconds: 400, kmh: 0, ignition: false },
      { seconds: 300, kmh: 30, ignition: true },
      { seconds: 400, kmh: 0, ignition: false },
    ]);
    await send(van.imei, fixes);
    await evaluatedThrough(van.id, fixes.at(-1)!.time);
    const rows = async () => ({
      trips: (await sql`SELECT * FROM trips WHERE device_id = ${van.id} ORDER BY start_time`.execute(database.db)).rows.map(({ id: _, ...r }: any) => r),
      stops: (await sql`SELECT * FROM stops WHERE device_id = ${van.id} ORDER BY start_time`.execute(database.db)).rows.map(({ id: _, ...r }: any) => r),
    });
    const first = await rows();
    expect(first.trips).toHaveLength(2);
    expect(first.stops).toHaveLength(3);

    // The tracker resends everything (it never saw the answers): stored once, nothing changes.
    await send(van.imei, fixes);
    await new Promise((r) => setTimeout(r, 300));
    expect(await rows()).toEqual(first);

    // The engine forgets the device and evaluates it again, by two workers at once.
    await sql`UPDATE device_engine_states SET cursor_fix_time = NULL, segment = NULL, accumulators = NULL, driving = NULL, status = NULL, ignition = NULL, inside = '{}', pending = '[]' WHERE device_id = ${van.id}`.execute(database.db);
    const settings = { ...ENGINE_TEST_SETTINGS, fixesPerDevice: 37 };
    const drain = async () => {
      for (let i = 0; i < 20; i++) {
        const out = await evaluateDevices(database.db, harness.engine.catalog, [van.id], settings);
        if (out.unfinished.length === 0) return;
      }
    };
    await Promise.all([drain(), drain()]);
    expect(await rows()).toEqual(first);
  }, 60_000);
});

describe('GET /reports/trips', () => {
  it('sums the fleet, filters by include, and refuses what it cannot answer', async () => {
    const a = await vehicle('Fleet A');
    const b = await vehicle('Fleet B');
    const start = hoursAgo(14);
    const fixes = route(start, [{ seconds: 60, kmh: 0, ignition: true }, { seconds: 600, kmh: 36, ignition: true }, { seconds: 400, kmh: 0, ignition: false }]);
    await send(a.imei, fixes);
    await send(b.imei, fixes.map((f) => ({ ...f, longitude: f.longitude + 0.1 })));
    await evaluatedThrough(a.id, fixes.at(-1)!.time);
    await evaluatedThrough(b.id, fixes.at(-1)!.time);

    // The two-hour window around the drive, in Madrid's wall clock.
    const local = (d: Date) => new Intl.DateTimeFormat('sv-SE', { timeZone: TZ, dateStyle: 'short', timeStyle: 'short' }).format(d).replace(' ', 'T');
    const from = local(new Date(start.getTime() - 30 * 60_000));
    const to = local(new Date(start.getTime() + 90 * 60_000));
    const { status, body } = await api(`/reports/trips?from=${from}&to=${to}&deviceIds=${a.imei},${b.imei}&include=summary`);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data.included).toEqual(['summary']);
    expect(body.data.vehicles.map((v: any) => v.deviceName)).toEqual(['Fleet A', 'Fleet B']);
    expect(body.data.vehicles[0].trips).toBeUndefined();
    const each = body.data.vehicles[0].summary;
    expect(each.tripCount).toBe(1);
    expect(each.drivingS).toBe(610);
    // 610 s of driving over a 2 h range.
    expect(each.utilisation).toBeCloseTo(610 / 7200, 3);
    expect(body.data.fleet.tripCount).toBe(2);
    expect(body.data.fleet.drivingS).toBe(1220);
    expect(body.data.fleet.utilisation).toBeCloseTo(1220 / 14_400, 3);
    expect(body.data.fleet.distanceKm).toBeCloseTo(each.distanceKm + body.data.vehicles[1].summary.distanceKm, 3);

    // A range that ends before the drive holds none of it.
    const before = await api(`/reports/trips?from=${local(new Date(start.getTime() - 3_600_000))}&to=${local(new Date(start.getTime() - 60_000))}&deviceIds=${a.imei}`);
    expect(before.body.data.vehicles[0]).toMatchObject({ trips: [], stops: [], summary: { tripCount: 0, maxSpeedKmh: null, utilisation: 0 } });

    expect((await api('/reports/trips?from=2024-05-01&to=2024-05-02&deviceIds=000000000000000')).status).toBe(404);
    expect((await api('/reports/trips?from=2024-05-01&to=2024-05-02&include=trips,legs')).body.error).toMatch(/Unknown include section "legs"/);
    expect((await api('/reports/trips?from=2024-05-02&to=2024-05-01')).body.error).toBe('from must not be after to');
    expect((await api('/reports/trips?from=2024-05-01')).status).toBe(400);
    const reader = await make.key(userId, { permissions: ['devices:read'] });
    expect((await api('/reports/trips?from=2024-05-01&to=2024-05-02', reader.key)).status).toBe(403);
  }, 60_000);
});
