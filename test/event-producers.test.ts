import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLocal } from '../domain/time/zoned-time.ts';
import { setAccountSpeedLimit } from '../db/accounts.ts';
import { setDeviceSpeedLimit } from '../db/devices.ts';
import { ENGINE_QUEUE, scheduleTravelStart, unscheduleTravelStart } from '../engine/engine-jobs.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';
import { eventually } from './support/eventually.ts';

// Every event kind the trackers and travels cause, driven as in production: trackers over TCP
// (Teltonika, and Queclink GL200 for alarms), the engine with its real queue, travels through the API.
// Each scenario has a vehicle of its own; what is checked is the rows of the `events` table.

const TZ = 'America/Mexico_City';
const LAT = 19.4;
// Circles of 300 m, 2 km apart on one street.
const A = { lat: LAT, lng: -99.1 };
const B = { lat: LAT, lng: -99.08 };

let database: TestDatabase;
let harness: EngineHarness | undefined;
let key: string;
let accountId: number;
let userId: number;
let make: ReturnType<typeof fixtures>;
const SETTINGS = { ...ENGINE_TEST_SETTINGS, overspeedHysteresisKmh: 5, onTimeToleranceMinutes: 5 };

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, SETTINGS, ['gl200']);
  make = fixtures(database.db);
  const tenant = await make.tenant(TZ);
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
  for (const [name, at] of [['A', A], ['B', B]] as const) {
    await make.geofence(accountId, name, { kind: 'circle', lat: at.lat, lng: at.lng, radiusMeters: 300 });
  }
});
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

let imeis = 0;
async function vehicle(name: string) {
  const imei = `35630704245${String(++imeis).padStart(4, '0')}`;
  const device = await make.device(accountId, { imei, name, plates: `EV-${imeis}`, userIds: [userId] });
  return { id: device.id, imei, name };
}

interface EventRow {
  id: string;
  type: string;
  device_id: number | null;
  occurred_at: Date;
  data: any;
}

const eventsOf = async (deviceId: number, prefix = '') =>
  (await sql<EventRow>`
    SELECT id::text, type, device_id, occurred_at, data FROM events WHERE device_id = ${deviceId} AND type LIKE ${`${prefix}%`} ORDER BY id
  `.execute(database.db)).rows;

/** Waits until the engine has evaluated a device's fixes through `time`. */
const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

const port = (protocol: string) => harness!.ports[protocol]!;
const second = (n: number, from = Date.now()) => new Date(Math.floor(from / 1000) * 1000 + n * 1000);

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness!.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('vehicle events from fixes', () => {
  it('logs ignition on and off at the fixes that changed it; a first report of off logs nothing', async () => {
    const car = await vehicle('Ignition Car');
    const tracker = await scriptedTracker(port('teltonika'), car.imei);
    const start = Date.now();
    const ignitions = [false, false, true, true, false, true];
    const times: Date[] = [];
    for (const [i, ignition] of ignitions.entries()) times.push(await tracker.report({ latitude: 19.3, longitude: -99.3, speedKmh: 0, ignition, time: second(i, start) }));
    tracker.close();
    await evaluatedThrough(car.id, times.at(-1)!);
    const events = await eventsOf(car.id, 'vehicle.ignition.');
    expect(events.map((e) => [e.type, e.occurred_at.toISOString()])).toEqual([
      ['vehicle.ignition.on', times[2]!.toISOString()],
      ['vehicle.ignition.off', times[4]!.toISOString()],
      ['vehicle.ignition.on', times[5]!.toISOString()],
    ]);
    expect(events[0]!.data).toMatchObject({
      vehicle: { id: car.imei, name: car.name, imei: car.imei },
      position: { lat: 19.3, lng: -99.3, speedKmh: 0, fixTime: times[2]!.toISOString() },
    });
  }, 60_000);

  it('logs one overspeed per speeding stretch (hysteresis 5 km/h), against the vehicle\'s own limit over the account\'s', async () => {
    const truck = await vehicle('Fast Truck');
    await setAccountSpeedLimit(database.db, accountId, 120);
    await setDeviceSpeedLimit(database.db, truck.imei, 80);
    const tracker = await scriptedTracker(port('teltonika'), truck.imei);
    const start = Date.now();
    const report = async (speedKmh: number, i: number) => tracker.report({ latitude: 19.3, longitude: -99.32, speedKmh, time: second(i, start) });

    // Over at 90; 95, and 78 (not below 80 − 5), and 90 again are the same stretch.
    const first = [70, 90, 95, 78, 90];
    const times: Date[] = [];
    for (const [i, speed] of first.entries()) times.push(await report(speed, i));
    await evaluatedThrough(truck.id, times.at(-1)!);
    const one = await eventsOf(truck.id, 'vehicle.overspeed');
    expect(one.map((e) => [e.occurred_at.toISOString(), e.data.speedKmh, e.data.limitKmh])).toEqual([[times[1]!.toISOString(), 90, 80]]);
    expect(one[0]!.data.position).toMatchObject({ speedKmh: 90, fixTime: times[1]!.toISOString() });

    // Below 75 ends it (evaluated in another job, so the stretch was carried in the engine's state); 90 starts another.
    for (const [i, speed] of [70, 90].entries()) times.push(await report(speed, first.length + i));
    tracker.close();
    await evaluatedThrough(truck.id, times.at(-1)!);
    const two = await eventsOf(truck.id, 'vehicle.overspeed');
    expect(two.map((e) => [e.occurred_at.toISOString(), e.data.speedKmh])).toEqual([[times[1]!.toISOString(), 90], [times[6]!.toISOString(), 90]]);
    await setAccountSpeedLimit(database.db, accountId, null);

    // The evaluation run again over the same fixes, from a state that forgot them, adds no event.
    const before = await eventsOf(truck.id);
    for (let run = 0; run < 2; run++) {
      await sql`
        UPDATE device_engine_states SET cursor_fix_time = NULL, ignition = NULL, overspeed = false, status = NULL, inside = '{}', pending = '[]'
        WHERE device_id = ${truck.id}`.execute(database.db);
      const outcome = await evaluateDevices(database.db, harness!.engine.catalog, [truck.id], { ...SETTINGS, overspeedHysteresisKmh: 5 });
      expect(outcome.events).toBe(0);
    }
    expect(await eventsOf(truck.id)).toEqual(before);
  }, 60_000);
});

describe('alarms', () => {
  const stamp = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14);

  it('logs an SOS with a fix as vehicle.panic and a power cut without one as vehicle.alarm, once each however often the frames come', async () => {
    const van = await vehicle('Alarm Van');
    const fixTime = second(-30);
    const reportTime = second(-20);
    // GTSOS carries a fix (a position with alarm sos); GTMPF here has none (a report with alarm powerCut).
    const sos = `+RESP:GTSOS,020102,${van.imei},,0,0,1,1,4.3,92,70.0,-99.2,19.35,${stamp(fixTime)},0334,0020,18d8,6141,00,,${stamp(fixTime)},11F0$`;
    const powerCut = `+RESP:GTMPF,F50201,${van.imei},GL300M,${stamp(reportTime)},0BD4$`;
    const tracker = await rawTracker(port('gl200'));
    tracker.send(sos + powerCut);
    const logged = await eventually(
      () => eventsOf(van.id, 'vehicle.'),
      (rows) => expect(rows.filter((e) => e.type === 'vehicle.panic' || e.type === 'vehicle.alarm')).toHaveLength(2),
    );
    const panic = logged.find((e) => e.type === 'vehicle.panic')!;
    expect(panic.occurred_at.toISOString()).toBe(fixTime.toISOString());
    expect(panic.data).toMatchObject({ alarm: 'sos', vehicle: { imei: van.imei }, position: { lat: 19.35, lng: -99.2, speedKmh: 4.3, heading: 92 } });
    const alarm = logged.find((e) => e.type === 'vehicle.alarm')!;
    expect(alarm.occurred_at.toISOString()).toBe(reportTime.toISOString());
    expect(alarm.data).toEqual({ alarm: 'powerCut', vehicle: { id: van.imei, name: van.name, plates: 'EV-' + String(imeis), imei: van.imei } });

    // The tracker sends both frames again (it never saw an answer), on this connection and then on a new
    // one. The resent report is stored again (reports have no key of their own); its alarm is not logged again.
    const reports = (n: number) =>
      eventually(() => database.db.selectFrom('device_reports').select('id').where('device_id', '=', van.id).execute(), (rows) => expect(rows).toHaveLength(n));
    tracker.send(powerCut + sos);
    await reports(2);
    const again = await rawTracker(port('gl200'));
    again.send(sos + powerCut);
    await reports(3);
    await evaluatedThrough(van.id, fixTime);
    const alarms = (await eventsOf(van.id, 'vehicle.')).filter((e) => e.type === 'vehicle.panic' || e.type === 'vehicle.alarm');
    expect(alarms.map((e) => e.id)).toEqual([panic.id, alarm.id].sort((a, b) => Number(a) - Number(b)));
    tracker.end();
    again.end();
  }, 60_000);

  it('logs a panic that arrives late, from a tracker\'s buffer, behind fixes already evaluated', async () => {
    const car = await vehicle('Tunnel Car');
    const sosAt = (t: Date) => `+RESP:GTSOS,020102,${car.imei},,0,0,1,1,12.0,180,70.0,-99.25,19.33,${stamp(t)},0334,0020,18d8,6141,00,,${stamp(t)},11F0$`;
    const newer = second(-10);
    const older = second(-60);
    const tracker = await rawTracker(port('gl200'));
    tracker.send(sosAt(newer));
    await evaluatedThrough(car.id, newer);
    tracker.send(sosAt(older));
    const panics = await eventually(() => eventsOf(car.id, 'vehicle.panic'), (rows) => expect(rows).toHaveLength(2));
    expect(panics.map((e) => e.occurred_at.toISOString())).toEqual([newer.toISOString(), older.toISOString()]);
    expect(panics[1]!.data.position).toMatchObject({ fixTime: older.toISOString(), speedKmh: 12 });
    tracker.end();
  }, 60_000);
});

describe('device presence', () => {
  it('logs online when a tracker identifies, offline when it hangs up, and a replaced connection\'s offline before the new online', async () => {
    const unit = await vehicle('Presence Unit');
    const first = await scriptedTracker(port('teltonika'), unit.imei);
    const online = await eventually(() => eventsOf(unit.id, 'device.'), (rows) => expect(rows).toHaveLength(1));
    expect(online[0]).toMatchObject({ type: 'device.online', data: { protocol: 'teltonika', remoteAddress: '127.0.0.1', vehicle: { imei: unit.imei } } });
    expect(online[0]!.data.position).toBeUndefined();
    first.close();
    await eventually(() => eventsOf(unit.id, 'device.'), (rows) => expect(rows).toHaveLength(2));

    // The tracker reconnects while its old connection still looks open: the new one replaces it.
    const second = await scriptedTracker(port('teltonika'), unit.imei);
    const third = await scriptedTracker(port('teltonika'), unit.imei);
    const rows = await eventually(() => eventsOf(unit.id, 'device.'), (r) => expect(r).toHaveLength(5));
    expect(rows.map((e) => [e.type, e.data.reason ?? null])).toEqual([
      ['device.online', null],
      ['device.offline', 'closed by the tracker'],
      ['device.online', null],
      ['device.offline', 'replaced by a newer connection'],
      ['device.online', null],
    ]);
    // The stored connection follows the newest; the replaced one closing later logs nothing more.
    second.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf(unit.id, 'device.')).toHaveLength(5);
    const stored = await database.db.selectFrom('device_connections').selectAll().where('device_id', '=', unit.id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ protocol: 'teltonika', remote_address: '127.0.0.1' });
    presenceUnit = { id: unit.id, tracker: third };
  }, 60_000);
});

let presenceUnit: { id: number; tracker: Awaited<ReturnType<typeof scriptedTracker>> } | undefined;

describe('travel events', () => {
  const minuteOf = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000);

  /** A travel created through the API, then started now (as an edit of its start time would). */
  async function startedTravel(vehicleName: string, expectedMinutes: number[]) {
    const start = new Date(minuteOf(new Date()).getTime() + 60_000);
    const at = (minutes: number) => formatLocal(new Date(start.getTime() + minutes * 60_000), TZ);
    const created = await api('/travels', {
      method: 'POST',
      body: { vehicle: vehicleName, startTime: at(0), waypoints: expectedMinutes.map((m, i) => ({ geofence: i === 0 ? 'A' : 'B', expectedArrival: at(m) })) },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.travelId as number;
    const startedAt = new Date();
    await database.db.updateTable('travels').set({ start_time: startedAt }).where('id', '=', id).execute();
    const queue = harness!.queues.queue(ENGINE_QUEUE);
    await unscheduleTravelStart(queue, id);
    await scheduleTravelStart(queue, id, startedAt);
    return { id, startedAt };
  }

  it('logs started, each waypoint arrived and completed, from the engine\'s own transactions', async () => {
    const bus = await vehicle('Route Bus');
    const tracker = await scriptedTracker(port('teltonika'), bus.imei);
    const parked = await tracker.report({ latitude: LAT, longitude: -99.13, speedKmh: 0 });
    await evaluatedThrough(bus.id, parked);
    const { id, startedAt } = await startedTravel(bus.name, [30, 60]);
    const started = await eventually(() => eventsOf(bus.id, 'travel.'), (rows) => expect(rows).toHaveLength(1));
    expect(started[0]).toMatchObject({ type: 'travel.started', data: { travel: { id, status: 'In progress' }, position: { lat: LAT, lng: -99.13 } } });
    expect(started[0]!.occurred_at.toISOString()).toBe(startedAt.toISOString());

    const inA = await tracker.report({ latitude: A.lat, longitude: A.lng, speedKmh: 30 });
    await tracker.report({ latitude: LAT + 0.02, longitude: -99.09, speedKmh: 50 });
    const inB = await tracker.report({ latitude: B.lat, longitude: B.lng, speedKmh: 20 });
    tracker.close();
    const rows = await eventually(() => eventsOf(bus.id, 'travel.'), (r) => expect(r).toHaveLength(4));
    expect(rows.map((e) => e.type)).toEqual(['travel.started', 'travel.waypoint.arrived', 'travel.waypoint.arrived', 'travel.completed']);
    const expectedAt = (minutes: number) => new Date(minuteOf(startedAt).getTime() + 60_000 + minutes * 60_000);
    expect(rows[1]!.data).toMatchObject({
      travel: { id, status: 'In progress' },
      waypoint: { order: 2, geofence: 'A', expectedArrival: expectedAt(30).toISOString(), arrivedAt: inA.toISOString(), delayMinutes: Math.round((inA.getTime() - expectedAt(30).getTime()) / 60_000) },
      position: { lat: A.lat, lng: A.lng, speedKmh: 30 },
    });
    expect(rows[2]!.data).toMatchObject({ travel: { id, status: 'Completed' }, waypoint: { order: 3, geofence: 'B', arrivedAt: inB.toISOString() } });
    expect(rows[3]).toMatchObject({ type: 'travel.completed', data: { travel: { id, status: 'Completed' }, position: { lat: B.lat, lng: B.lng } } });
    expect(rows[3]!.occurred_at.toISOString()).toBe(inB.toISOString());
    // What the API shows agrees.
    expect((await api(`/travels/${id}`)).body.data.status).toBe('Completed');
  }, 60_000);

  it('logs a cancel in the same transaction as the cancel', async () => {
    const van = await vehicle('Cancelled Van');
    const start = new Date(minuteOf(new Date()).getTime() + 120_000);
    const created = await api('/travels', {
      method: 'POST',
      body: { vehicle: van.name, startTime: formatLocal(start, TZ), waypoints: [{ geofence: 'A', expectedArrival: formatLocal(new Date(start.getTime() + 3_600_000), TZ) }] },
    });
    const id = created.body.data.travelId as number;
    const before = new Date();
    expect((await api(`/travels/${id}`, { method: 'DELETE' })).status).toBe(200);
    const rows = await eventsOf(van.id, 'travel.');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'travel.cancelled', data: { travel: { id, status: 'Cancelled' }, vehicle: { imei: van.imei } } });
    expect(rows[0]!.data.position).toBeUndefined();
    expect(rows[0]!.occurred_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    // A second cancel fails and logs nothing.
    expect((await api(`/travels/${id}`, { method: 'DELETE' })).status).toBe(400);
    expect(await eventsOf(van.id, 'travel.')).toHaveLength(1);
  }, 30_000);

  it('logs travel.delayed once when a pending waypoint\'s estimate goes past the tolerance, however often ETAs refresh', async () => {
    const truck = await vehicle('Late Truck');
    const tracker = await scriptedTracker(port('teltonika'), truck.imei);
    // ~42 km west of A: at the default 40 km/h over 1.3 × the distance, over an hour away.
    const far = await tracker.report({ latitude: LAT, longitude: -99.5, speedKmh: 0 });
    tracker.close();
    await evaluatedThrough(truck.id, far);
    // A is expected at the start, B an hour later: A is late, B still on time.
    const { id } = await startedTravel(truck.name, [0, 240]);
    const delayed = await eventually(() => eventsOf(truck.id, 'travel.delayed'), (rows) => expect(rows).toHaveLength(1));
    expect(delayed[0]!.data).toMatchObject({
      travel: { id, status: 'In progress' },
      waypoint: { order: 2, geofence: 'A', estimatedArrival: expect.any(String) },
      position: { lat: LAT, lng: -99.5 },
    });
    expect(delayed[0]!.data.waypoint.delayMinutes).toBeGreaterThan(5);
    const waypoint = (await api(`/travels/${id}`)).body.data.waypoints[1];
    expect(waypoint.timing).toMatch(/min late \(est\.\)/);
    // ETAs refresh every second: a few more refreshes, still one event.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await eventsOf(truck.id, 'travel.delayed')).toHaveLength(1);
    const marks = await database.db.selectFrom('travel_waypoints').select(['seq', 'delayed_at']).where('travel_id', '=', id).orderBy('seq').execute();
    expect(marks.map((m) => m.delayed_at !== null)).toEqual([false, true, false]);
  }, 60_000);
});

describe('shutdown', () => {
  it('logs the connections a shutdown closes as offline for that reason', async () => {
    const unit = presenceUnit!;
    await harness!.close();
    harness = undefined;
    const rows = await eventsOf(unit.id, 'device.');
    expect(rows.at(-1)).toMatchObject({ type: 'device.offline', data: { reason: 'server shutdown' } });
    expect(await database.db.selectFrom('device_connections').select('device_id').where('device_id', '=', unit.id).execute()).toEqual([]);
  }, 30_000);
});
