import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARTH_RADIUS_M, haversineMetres } from '../domain/geofences/fence-shape.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import type { SimulatedFix } from '../simulators/teltonika-packets.ts';
import { gt06Dialect } from '../simulators/tracker-dialect.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A GT06 tracker, which reports no odometer, drives a scripted route of known length over a real TCP
// connection; the server's odometer and engine hours are read back through the API, before and after
// an installer's baseline.

const LAT0 = 19.4326;
const LNG0 = -99.1332;
const DEG = 180 / Math.PI;

const offset = (east: number, north: number) => ({
  latitude: LAT0 + (north / EARTH_RADIUS_M) * DEG,
  longitude: LNG0 + (east / (EARTH_RADIUS_M * Math.cos((LAT0 * Math.PI) / 180))) * DEG,
});

type Place = { latitude: number; longitude: number };

/** A 13.4 km route of five straight streets with a right-angle turn at each corner. */
const CORNERS: Place[] = [offset(0, 0), offset(3000, 0), offset(3000, 2500), offset(500, 2500), offset(500, 5000), offset(3400, 5000)];
const ROUTE_M = CORNERS.slice(1).reduce((m, b, i) => m + haversineMetres(CORNERS[i]!.latitude, CORNERS[i]!.longitude, b.latitude, b.longitude), 0);

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
let make: ReturnType<typeof fixtures>;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, ENGINE_TEST_SETTINGS, ['gt06']);
  make = fixtures(database.db);
  key = (await make.tenant()).key;
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

/** Parked at `at` for `seconds`, a fix every 10 s scattered 10 to 20 m in a random direction. */
function parked(random: () => number, at: Place, from: number, seconds: number, ignition: boolean): SimulatedFix[] {
  const fixes: SimulatedFix[] = [];
  for (let s = 0; s < seconds; s += 10) {
    const r = 10 + random() * 10;
    const a = random() * 2 * Math.PI;
    const east = r * Math.cos(a);
    const north = r * Math.sin(a);
    fixes.push({
      time: new Date(from + s * 1000), speedKmh: Math.floor(random() * 3), heading: 0, satellites: 9, ignition,
      latitude: at.latitude + (north / EARTH_RADIUS_M) * DEG,
      longitude: at.longitude + (east / (EARTH_RADIUS_M * Math.cos((at.latitude * Math.PI) / 180))) * DEG,
    });
  }
  return fixes;
}

/** Along the corners at `kmh`: a fix every 10 s and one at each corner (trackers report a change of heading); whole seconds, as GT06 sends them. */
function drive(corners: Place[], from: number, kmh: number): { fixes: SimulatedFix[]; end: number } {
  const fixes: SimulatedFix[] = [];
  const step = (kmh / 3.6) * 10;
  let t = from;
  for (let i = 1; i < corners.length; i++) {
    const a = corners[i - 1]!;
    const b = corners[i]!;
    const legM = haversineMetres(a.latitude, a.longitude, b.latitude, b.longitude);
    for (let along = 0; along < legM; along += step) {
      const k = along / legM;
      fixes.push({
        time: new Date(t), speedKmh: kmh, heading: 90, satellites: 9, ignition: true,
        latitude: a.latitude + (b.latitude - a.latitude) * k, longitude: a.longitude + (b.longitude - a.longitude) * k,
      });
      t += Math.max(1, Math.round((Math.min(step, legM - along) / step) * 10)) * 1000;
    }
  }
  const last = corners[corners.length - 1]!;
  fixes.push({ time: new Date(t), speedKmh: 0, heading: 90, satellites: 9, ignition: true, ...last });
  return { fixes, end: t };
}

/** Sends each fix in its own GT06 message over one connection, each acknowledged before the next. */
async function send(imei: string, fixes: SimulatedFix[]): Promise<void> {
  const tracker = await rawTracker(harness.ports.gt06!);
  tracker.send(gt06Dialect.login(imei));
  const login = gt06Dialect.readLoginAnswer(await tracker.read(10));
  expect(login?.accepted).toBe(true);
  for (const f of fixes) {
    tracker.send(gt06Dialect.packet([f]));
    expect(gt06Dialect.readServerMessage(await tracker.read(10))).toMatchObject({ kind: 'ack' });
  }
  tracker.end();
}

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function statusOf(imei: string) {
  const { status, body } = await api(`/devices/${imei}/status`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data;
}

const day = (d: Date) => d.toISOString().slice(0, 10);

describe('a tracker that reports no odometer', () => {
  const imei = '358007042460001';
  let deviceId: number;
  let odometerAfterDrive: number;
  // Whole seconds, three hours ago: parked 10 min, the route at 50 km/h, parked an hour (idling the first 5 min).
  const start = Math.floor((Date.now() - 3 * 3_600_000) / 1000) * 1000;
  const random = seededRandom(42);
  const before = parked(random, CORNERS[0]!, start, 600, false);
  const route = drive(CORNERS, start + 600_000, 50);
  const idling = parked(random, CORNERS[CORNERS.length - 1]!, route.end + 10_000, 300, true);
  const after = parked(random, CORNERS[CORNERS.length - 1]!, route.end + 310_000, 3600, false);
  const all = [...before, ...route.fixes, ...idling, ...after];
  const lastTime = all[all.length - 1]!.time;

  beforeAll(async () => {
    deviceId = (await make.device((await database.db.selectFrom('users').select('account_id').executeTakeFirstOrThrow()).account_id, { imei, name: 'Van 1', protocol: 'gt06' })).id;
  });

  it('gets an odometer from the server within 1 % of the route driven, and under 50 m more from an hour parked', async () => {
    await send(imei, [...before, ...route.fixes, ...idling]);
    await evaluatedThrough(deviceId, idling[idling.length - 1]!.time);
    const driven = await statusOf(imei);
    expect(Math.abs(driven.odometerKm * 1000 - ROUTE_M) / ROUTE_M).toBeLessThan(0.01);

    await send(imei, after);
    await evaluatedThrough(deviceId, lastTime);
    const status = await statusOf(imei);
    expect((status.odometerKm - driven.odometerKm) * 1000).toBeLessThan(50);
    odometerAfterDrive = status.odometerKm;

    const { status: code, body } = await api(`/vehicles/${imei}/accumulators`);
    expect(code).toBe(200);
    expect(body.data).toMatchObject({ deviceId: imei, odometerSource: 'server', odometerKm: status.odometerKm, serverOdometerKm: status.odometerKm });
    // Ignition on from the drive's first fix to the end of the idling (to the first fix with it off).
    const onS = (after[0]!.time.getTime() - route.fixes[0]!.time.getTime()) / 1000;
    expect(Math.abs(body.data.engineHours * 3600 - onS)).toBeLessThanOrEqual(36);

    // The trip report's distance is the server's odometer over the trip.
    const { body: report } = await api(`/reports/trips?from=${day(new Date(start - 86_400_000))}&to=${day(new Date(start + 86_400_000))}&deviceIds=${imei}`);
    const trips = report.data.vehicles[0].trips;
    expect(trips).toHaveLength(1);
    expect(Math.abs(trips[0].distanceKm - driven.odometerKm)).toBeLessThan(0.05);
  }, 180_000);

  it('adds nothing for fixes sent again, nor for a late fix off the route', async () => {
    const resent = route.fixes.slice(0, 50);
    // 1 s after a fix of the route, 800 m off it: a detour no later fix knew of.
    const late = { ...route.fixes[20]!, time: new Date(route.fixes[20]!.time.getTime() + 1000), ...offset(1500, 800) };
    await send(imei, [...resent, late]);
    // The late fix is listed for the engine; once it is handled, nothing moved.
    await eventually(
      () => database.db.selectFrom('late_fixes').select('device_id').where('device_id', '=', deviceId).execute(),
      (rows) => expect(rows).toEqual([]),
    );
    await eventually(
      () => database.db.selectFrom('device_engine_states').select(['late_fixes', 'late_fixes_ignored']).where('device_id', '=', deviceId).executeTakeFirstOrThrow(),
      (s) => expect(s.late_fixes + s.late_fixes_ignored).toBeGreaterThanOrEqual(1),
    );
    expect((await statusOf(imei)).odometerKm).toBe(odometerAfterDrive);
  }, 60_000);

  it('shows an installer\'s baseline plus what is driven after it', async () => {
    const set = await api(`/vehicles/${imei}/accumulators`, { method: 'PUT', body: { odometerKm: 120_000, engineHours: 3_500 } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data).toMatchObject({ odometerKm: 120_000, serverOdometerKm: 120_000, engineHours: 3_500, baseline: { odometerKm: 120_000, engineHours: 3_500 } });
    expect((await statusOf(imei)).odometerKm).toBe(120_000);
    const audited = await database.db.selectFrom('audit_log').select(['target_id', 'details']).where('action', '=', 'vehicle.accumulators_set').execute();
    expect(audited).toEqual([{ target_id: imei, details: { odometerKm: 120_000, engineHours: 3_500 } }]);

    // 2 km on from the end of the route, due north, then parked.
    const end = CORNERS[CORNERS.length - 1]!;
    const north = { latitude: end.latitude + (2000 / EARTH_RADIUS_M) * DEG, longitude: end.longitude };
    const from = lastTime.getTime() + 60_000;
    const more = drive([end, north], from, 40);
    const stop = parked(seededRandom(9), north, more.end + 10_000, 600, false);
    await send(imei, [...more.fixes, ...stop]);
    await evaluatedThrough(deviceId, stop[stop.length - 1]!.time);
    const shown = (await statusOf(imei)).odometerKm;
    expect(Math.abs((shown - 120_000) * 1000 - 2000) / 2000).toBeLessThan(0.01);

    const detail = await api(`/vehicles/${imei}`);
    expect(detail.body.data).toMatchObject({ odometer_km: shown });
    // The drive's 3 minutes with the ignition on, on top of the 3,500 hours.
    expect(detail.body.data.engine_hours).toBeGreaterThan(3_500.04);
    expect(detail.body.data.engine_hours).toBeLessThan(3_500.07);

    // Only the engine hours set again: the odometer keeps its baseline.
    const again = await api(`/vehicles/${imei}/accumulators`, { method: 'PUT', body: { engineHours: 10 } });
    expect(again.body.data).toMatchObject({ odometerKm: shown, engineHours: 10, baseline: { odometerKm: 120_000, engineHours: 10 } });
  }, 120_000);

  it('refuses a baseline without a figure, a negative one, or an unknown field', async () => {
    for (const body of [{}, { odometerKm: -1 }, { engineHours: 'many' }, { odometerKm: 1, mileage: 2 }]) {
      const res = await api(`/vehicles/${imei}/accumulators`, { method: 'PUT', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await api('/vehicles/358007042469999/accumulators', { method: 'PUT', body: { odometerKm: 1 } })).status).toBe(404);
  });
});

describe('a tracker that reports its own odometer', () => {
  it('keeps showing its own in the status, whatever the server counts', async () => {
    const imei = '358007042460002';
    const accountId = (await database.db.selectFrom('users').select('account_id').executeTakeFirstOrThrow()).account_id;
    const device = await make.device(accountId, { imei, name: 'Van 2' });
    const start = Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000;
    const fixes = drive(CORNERS.slice(0, 2), start, 50).fixes.map((f, i) => ({ ...f, odometer: 48_213_400 + i * 139 }));
    const tracker = await scriptedTracker(harness.ports.teltonika!, imei);
    await tracker.reportAll(fixes);
    tracker.close();
    await evaluatedThrough(device.id, fixes[fixes.length - 1]!.time);
    const status = await statusOf(imei);
    expect(status.odometerKm).toBeCloseTo((48_213_400 + (fixes.length - 1) * 139) / 1000, 1);
    const { body } = await api(`/vehicles/${imei}/accumulators`);
    expect(body.data.odometerSource).toBe('tracker');
    expect(Math.abs(body.data.serverOdometerKm * 1000 - 3000) / 3000).toBeLessThan(0.01);
  }, 60_000);
});
