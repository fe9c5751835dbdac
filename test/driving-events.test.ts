import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driverRating } from '../domain/drivers/driver-rating.ts';
import { EARTH_RADIUS_M } from '../domain/geofences/fence-shape.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import type { SimulatedFix } from '../simulators/teltonika-packets.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A Teltonika tracker over TCP drives through the engine with a long idle, a hard take-off, a sharp
// turn, a hard stop, and a stop the tracker's own accelerometer reports as harsh braking; the events
// are read through GET /events, the trip through GET /reports/trips and the driver's rating through
// GET /drivers/{id}. Harsh events are computed with the default thresholds (docs/engine.md, "Driving behaviour").

const LAT0 = 19.4;
const LNG0 = -99.1;
const M_PER_DEG = (EARTH_RADIUS_M * Math.PI) / 180;

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
  const tenant = await make.tenant('UTC');
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

type Step = { after: number; kmh: number; heading?: number; ignition?: boolean; greenDriving?: SimulatedFix['greenDriving'] };

/** Fixes from `start`, each `after` seconds after the one before, the place following speed and heading. */
function drive(start: Date, steps: Step[]): SimulatedFix[] {
  let t = start.getTime();
  let lat = LAT0;
  let lng = LNG0;
  let heading = 0;
  let kmh = 0;
  return steps.map((s) => {
    // The leg covered at the mean of the two speeds, on the heading held.
    const metres = (((kmh + s.kmh) / 2) / 3.6) * s.after;
    lat += (metres * Math.cos((heading * Math.PI) / 180)) / M_PER_DEG;
    lng += (metres * Math.sin((heading * Math.PI) / 180)) / (M_PER_DEG * Math.cos((lat * Math.PI) / 180));
    t += s.after * 1000;
    heading = s.heading ?? heading;
    kmh = s.kmh;
    return {
      time: new Date(t), latitude: lat, longitude: lng, speedKmh: s.kmh, heading, satellites: 9, ignition: s.ignition ?? true,
      ...(s.greenDriving ? { greenDriving: s.greenDriving } : {}),
    };
  });
}

const repeat = (n: number, step: Step): Step[] => Array.from({ length: n }, () => step);

/** Seconds of the drive at which each manoeuvre happens (fix times are `start` + these). */
function script(): { steps: Step[] } {
  const steps: Step[] = [
    { after: 0, kmh: 0 }, // t=0: parked, ignition on
    ...repeat(14, { after: 30, kmh: 0 }), // idling to t=420
    // Hard take-off: +12 km/h a second (3.3 m/s²).
    { after: 1, kmh: 12 }, { after: 1, kmh: 24 }, { after: 1, kmh: 36 }, { after: 1, kmh: 48 }, { after: 1, kmh: 60 },
    ...repeat(60, { after: 10, kmh: 60 }), // 10 km north
    ...repeat(6, { after: 10, kmh: 40 }), // eases to 40 km/h (0.6 m/s²)
    // Sharp right turn: 30° a second at 40 km/h (v·ω = 5.8 m/s²).
    { after: 1, kmh: 40, heading: 30 }, { after: 1, kmh: 40, heading: 60 }, { after: 1, kmh: 40, heading: 90 },
    ...repeat(6, { after: 10, kmh: 40 }),
    // Hard stop: −20 km/h a second (5.6 m/s²), then a minute at the kerb with the engine running.
    { after: 1, kmh: 20 }, { after: 1, kmh: 0 },
    ...repeat(6, { after: 10, kmh: 0 }),
    // A gentle start (2.2 m/s²: not harsh).
    { after: 1, kmh: 8 }, { after: 1, kmh: 16 }, { after: 1, kmh: 24 }, { after: 1, kmh: 32 }, { after: 1, kmh: 40 },
    ...repeat(6, { after: 10, kmh: 40 }),
    // A stop the tracker reports as harsh braking, and the speeds show too: counted once.
    { after: 1, kmh: 25, greenDriving: 'braking' }, { after: 1, kmh: 10 }, { after: 1, kmh: 0 },
    ...repeat(6, { after: 60, kmh: 0, ignition: false }),
  ];
  return { steps };
}

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

async function drivingEvents(imei: string) {
  const res = await api(`/events?deviceIds=${imei}&types=vehicle.harsh.*,vehicle.idle.*,vehicle.alarm&limit=100`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as any[]).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.type.localeCompare(b.type));
}

describe('driving behaviour worked out by the engine', () => {
  it('logs harsh manoeuvres (computed and the tracker\'s, once each) and a long idle, and counts them in the trip and the driver\'s rating', async () => {
    const imei = '358007042460001';
    const van = await make.device(accountId, { imei, name: 'Harsh Van', plates: 'HV-1', userIds: [userId] });
    const start = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000);
    const driver = await api('/drivers', { method: 'POST', body: { name: 'Dana Driver', identifier: 'DANA-KEY-1' } });
    expect(driver.status).toBe(201);
    const assigned = await api(`/drivers/${driver.body.data.id}/assignment`, {
      method: 'POST', body: { vehicleId: imei, since: new Date(start.getTime() - 60_000).toISOString() },
    });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);

    const fixes = drive(start, script().steps);
    const secondOf = (i: number) => (fixes[i]!.time.getTime() - start.getTime()) / 1000;
    const tracker = await scriptedTracker(harness.ports.teltonika!, imei);
    // In packets of a few records, as a tracker empties its buffer: the engine sees them over several batches.
    for (let i = 0; i < fixes.length; i += 7) await tracker.reportAll(fixes.slice(i, i + 7));
    tracker.close();
    await evaluatedThrough(van.id, fixes.at(-1)!.time);

    const events = await drivingEvents(imei);
    const at = (e: any) => (Date.parse(e.timestamp) - start.getTime()) / 1000;
    const turnAt = secondOf(fixes.findIndex((f) => f.heading === 30));
    const hardStopAt = secondOf(fixes.findIndex((f, i) => i > 80 && f.speedKmh === 20));
    const alarmAt = secondOf(fixes.findIndex((f) => f.greenDriving === 'braking'));
    expect(events.map((e) => [e.type, at(e), e.data.source ?? e.data.alarm ?? null])).toEqual([
      ['vehicle.idle.start', 0, null],
      ['vehicle.harsh.acceleration', 421, 'computed'],
      ['vehicle.idle.end', 421, null],
      ['vehicle.harsh.cornering', turnAt, 'computed'],
      ['vehicle.harsh.braking', hardStopAt, 'computed'],
      ['vehicle.alarm', alarmAt, 'hardBraking'],
      ['vehicle.harsh.braking', alarmAt, 'tracker'],
    ]);
    const [idleStart, takeOff, idleEnd, turn, stop, , trackerBraking] = events;
    expect(idleStart.data.position).toMatchObject({ lat: LAT0, lng: LNG0, speedKmh: 0 });
    expect(idleEnd.data).toMatchObject({ idleSeconds: 421, since: start.toISOString() });
    expect(takeOff.data).toMatchObject({ accelerationMs2: 3.3, speedBeforeKmh: 0, speedAfterKmh: 12, intervalS: 1, alarm: null });
    expect(turn.data).toMatchObject({ accelerationMs2: 5.8, speedKmh: 40, headingChangeDeg: 30, intervalS: 1 });
    expect(stop.data).toMatchObject({ accelerationMs2: 5.6, speedBeforeKmh: 40, speedAfterKmh: 20 });
    expect(trackerBraking.data).toMatchObject({ alarm: 'hardBraking', accelerationMs2: null });
    expect(trackerBraking.data.vehicle).toMatchObject({ id: imei, name: 'Harsh Van' });

    // The trip counts the four manoeuvres once each, and the minute at the kerb as idle; the stop before it the long idle.
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const report = await api(`/reports/trips?from=${day(new Date(start.getTime() - 86_400_000))}&to=${day(new Date(start.getTime() + 86_400_000))}&deviceIds=${imei}`);
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    const vehicle = report.body.data.vehicles[0];
    expect(vehicle.trips).toHaveLength(1);
    expect(vehicle.trips[0]).toMatchObject({ harshEvents: 4, idleS: 60 });
    expect(vehicle.stops[0]).toMatchObject({ engineIdleS: 420 });
    expect(vehicle.trips[0].distanceKm).toBeGreaterThan(10);

    // The driver's rating counts them too.
    const rated = await api(`/drivers/${driver.body.data.id}`);
    expect(rated.status).toBe(200);
    const basis = rated.body.data.ratingBasis;
    expect(basis).toMatchObject({ harshEvents: 4, idleMinutes: 1 });
    expect(rated.body.data.rating).toBe(driverRating({ distanceM: basis.distanceKm * 1000, overspeedS: basis.overspeedMinutes * 60, harshEvents: 4, idleS: 60 }));

    // The engine forgets the device and evaluates its drive again: every event has its dedupe key, nothing more is logged.
    await sql`
      UPDATE device_engine_states SET cursor_fix_time = NULL, segment = NULL, accumulators = NULL, driving = NULL, ignition = NULL, status = NULL
      WHERE device_id = ${van.id}
    `.execute(database.db);
    const replayed = await evaluateDevices(database.db, harness.engine.catalog, [van.id], { ...ENGINE_TEST_SETTINGS, fixesPerDevice: 1000 });
    expect(replayed.unfinished).toEqual([]);
    expect(await drivingEvents(imei)).toHaveLength(events.length);
  }, 120_000);
});
