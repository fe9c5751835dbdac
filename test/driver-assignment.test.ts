import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { gt06Frame, gt06Login } from '../simulators/gt06-packets.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Drivers assigned from the keys trackers read, end to end: Teltonika frames with an iButton (IO 78)
// and a GT06 0x17 message with a driver tag, over real TCP sockets into ingest, the engine with its real
// queue, and the API. What is checked is the assignment history, the `driver.changed` events, the key
// recorded on a vehicle when it names nobody, the driver the trip segmenter records, and that the same
// fixes evaluated again change nothing.

const TZ = 'America/Mexico_City';
const ANA_KEY = 0x01c68011010000c7n;
const BEN_KEY = 0x00000000a1b2c3d4n;
const STRANGER_KEY = 0xdeadbeef00000001n;
const CARL_TAG = 'bf0000012ca7e001';

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
let accountId: number;
let userId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, ENGINE_TEST_SETTINGS, ['gt06']);
  const tenant = await fixtures(database.db).tenant(TZ);
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
});
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function registerDriver(name: string, identifier: string) {
  const res = await api('/drivers', { method: 'POST', body: { name, identifier } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data as { id: number; name: string; identifier: string };
}

/** GT06 0x17 as Concox firmwares with a driver-tag reader send it: fix, cell, then the 8-byte tag. */
function gt06DriverFix(f: { time: Date; lat: number; lng: number; speedKmh: number; tag: string }, serial: number): Buffer {
  const body = Buffer.alloc(34);
  let at = 0;
  const t = f.time;
  for (const v of [t.getUTCFullYear() - 2000, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()]) body[at++] = v;
  body[at++] = 0xc9; // GPS info length, 9 satellites
  body.writeUInt32BE(Math.round(Math.abs(f.lat) * 1_800_000), at); at += 4;
  body.writeUInt32BE(Math.round(Math.abs(f.lng) * 1_800_000), at); at += 4;
  body[at++] = f.speedKmh;
  body.writeUInt16BE(0x1000 | (f.lat >= 0 ? 0x0400 : 0) | (f.lng < 0 ? 0x0800 : 0), at); at += 2; // positioned, hemispheres, course 0
  body.writeUInt16BE(334, at); at += 2; // MCC
  body[at++] = 20; // MNC
  body.writeUInt16BE(0x1234, at); at += 2; // LAC
  body.writeUIntBE(0x00abcd, at, 3); at += 3; // cell id
  Buffer.from(f.tag, 'hex').copy(body, at);
  return Buffer.from(gt06Frame(0x17, body, serial));
}

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

const assignmentsOf = (deviceId: number) =>
  database.db.selectFrom('driver_assignments').select(['driver_id', 'since', 'until', 'source']).where('device_id', '=', deviceId).orderBy('since').execute();

const driverEvents = async (deviceId: number) =>
  (await sql<{ occurred_at: Date; data: any }>`
    SELECT occurred_at, data FROM events WHERE device_id = ${deviceId} AND type = 'driver.changed' ORDER BY occurred_at, id
  `.execute(database.db)).rows;

const unknownKeyOf = (deviceId: number) =>
  database.db.selectFrom('devices').select(['unknown_driver_identifier', 'unknown_driver_seen_at']).where('id', '=', deviceId).executeTakeFirstOrThrow();

describe('drivers from the keys trackers read', () => {
  // One timeline across the tests below, in order: a Teltonika truck, then a GT06 van.
  const base = Math.floor((Date.now() - 3 * 3_600_000) / 1000) * 1000;
  const at = (s: number) => new Date(base + s * 1000);
  /** Truck fixes every 30 s driving north at 40 km/h (333 m per fix). */
  const drive = (i: number, iButton?: bigint) => ({ time: at(30 * i), latitude: 19.3 + i * 0.003, longitude: -99.2, heading: 0, speedKmh: i === 0 ? 0 : 40, iButton });
  let truck: { id: number; imei: string };
  let van: { id: number; imei: string };
  let ana: Awaited<ReturnType<typeof registerDriver>>;
  let ben: Awaited<ReturnType<typeof registerDriver>>;
  let carl: Awaited<ReturnType<typeof registerDriver>>;
  let dora: Awaited<ReturnType<typeof registerDriver>>;
  let gt06: RawTracker;

  beforeAll(async () => {
    const make = fixtures(database.db);
    truck = await make.device(accountId, { imei: '356307042449001', name: 'Key Truck', userIds: [userId] });
    van = await make.device(accountId, { imei: '356307042449002', name: 'Tag Van', userIds: [userId] });
    ana = await registerDriver('Ana López', ANA_KEY.toString(16).padStart(16, '0'));
    ben = await registerDriver('Ben Ortiz', BEN_KEY.toString(16).padStart(16, '0'));
    carl = await registerDriver('Carl Pérez', CARL_TAG);
  });
  afterAll(() => gt06?.end());

  it('assigns Ana from the Teltonika fix with her iButton (IO 78), then Ben from his, across two packets; the trip records Ana', async () => {
    const tracker = await scriptedTracker(harness.ports.teltonika!, truck.imei);
    await tracker.reportAll([drive(0), drive(1, ANA_KEY), drive(2), drive(3), drive(4), drive(5)]);
    await tracker.reportAll([drive(6), drive(7), drive(8), drive(9), drive(10, BEN_KEY), drive(11)]);
    tracker.close();
    await evaluatedThrough(truck.id, at(330));

    expect(await assignmentsOf(truck.id)).toEqual([
      { driver_id: ana.id, since: at(30), until: at(300), source: 'telemetry' },
      { driver_id: ben.id, since: at(300), until: null, source: 'telemetry' },
    ]);
    const events = await driverEvents(truck.id);
    expect(events.map((e) => [e.occurred_at.toISOString(), e.data.driver?.name, e.data.previousDriver?.name ?? null, e.data.reason])).toEqual([
      [at(30).toISOString(), 'Ana López', null, 'identified'],
      [at(300).toISOString(), 'Ben Ortiz', 'Ana López', 'identified'],
    ]);
    expect(events[0]!.data).toEqual({
      vehicle: { id: truck.imei, name: 'Key Truck', plates: expect.any(String), imei: truck.imei },
      position: { lat: 19.303, lng: -99.2, speedKmh: 40, heading: 0, fixTime: at(30).toISOString(), address: null },
      driver: { id: ana.id, name: 'Ana López', identifier: '01C68011010000C7' },
      previousDriver: null,
      source: 'telemetry',
      reason: 'identified',
      reportedIdentifier: '01C68011010000C7',
    });

    // The segmenter got the driver per fix: the trip that began at Ana's fix is hers.
    const trips = await database.db.selectFrom('trips').select(['start_time', 'driver_id']).where('device_id', '=', truck.id).orderBy('start_time').execute();
    expect(trips.length).toBeGreaterThan(0);
    expect(trips[0]!.driver_id).toBe(ana.id);

    const benNow = (await api(`/drivers/${ben.id}`)).body.data;
    expect(benNow).toMatchObject({ currentVehicle: { id: truck.imei, name: 'Key Truck' }, assignmentSource: 'telemetry' });
    expect(Date.parse(benNow.assignedSince)).toBe(at(300).getTime());
    expect(benNow.assignedSince).toMatch(/-0[56]:00$/);
  });

  it('ends Ben\'s assignment at a key nobody has, records it on the vehicle, and assigns the driver registered with it later', async () => {
    const tracker = await scriptedTracker(harness.ports.teltonika!, truck.imei);
    await tracker.reportAll([drive(12, STRANGER_KEY), drive(13), drive(14, STRANGER_KEY)]);
    await evaluatedThrough(truck.id, at(420));
    expect(await unknownKeyOf(truck.id)).toEqual({ unknown_driver_identifier: 'DEADBEEF00000001', unknown_driver_seen_at: at(420) });
    const ended = (await driverEvents(truck.id)).at(-1)!;
    expect(ended.occurred_at).toEqual(at(360));
    expect(ended.data).toMatchObject({ driver: null, previousDriver: { id: ben.id }, reason: 'unknownIdentifier', reportedIdentifier: 'DEADBEEF00000001' });
    expect((await api(`/drivers/${ben.id}`)).body.data.currentVehicle).toBeNull();

    dora = await registerDriver('Dora Vega', 'deadbeef00000001');
    expect(await unknownKeyOf(truck.id)).toEqual({ unknown_driver_identifier: null, unknown_driver_seen_at: null });
    await tracker.reportAll([drive(15, STRANGER_KEY)]);
    tracker.close();
    await evaluatedThrough(truck.id, at(450));
    expect((await assignmentsOf(truck.id)).slice(1)).toEqual([
      { driver_id: ben.id, since: at(300), until: at(360), source: 'telemetry' },
      { driver_id: dora.id, since: at(450), until: null, source: 'telemetry' },
    ]);
  });

  it('assigns Carl from a GT06 driver tag, then moves Dora from the truck to the van when the van reads her key', async () => {
    gt06 = await rawTracker(harness.ports.gt06!);
    gt06.send(Buffer.from(gt06Login(van.imei)));
    expect((await gt06.read(10))[3]).toBe(0x01);
    const fix = (s: number, tag: string, serial: number) => gt06DriverFix({ time: at(s), lat: 19.35, lng: -99.25, speedKmh: 30, tag }, serial);
    gt06.send(Buffer.concat([fix(600, CARL_TAG, 2), fix(630, '0000000000000000', 3), fix(660, 'deadbeef00000001', 4)]));
    await evaluatedThrough(van.id, at(660));

    expect(await assignmentsOf(van.id)).toEqual([
      { driver_id: carl.id, since: at(600), until: at(660), source: 'telemetry' },
      { driver_id: dora.id, since: at(660), until: null, source: 'telemetry' },
    ]);
    expect((await assignmentsOf(truck.id)).at(-1)).toEqual({ driver_id: dora.id, since: at(450), until: at(660), source: 'telemetry' });
    expect((await driverEvents(van.id)).map((e) => [e.occurred_at.getTime(), e.data.driver?.name, e.data.previousDriver?.name ?? null, e.data.reportedIdentifier])).toEqual([
      [at(600).getTime(), 'Carl Pérez', null, 'BF0000012CA7E001'],
      [at(660).getTime(), 'Dora Vega', 'Carl Pérez', 'DEADBEEF00000001'],
    ]);
    const left = (await driverEvents(truck.id)).at(-1)!;
    expect([left.occurred_at.getTime(), left.data.driver, left.data.previousDriver?.name, left.data.reason, left.data.position]).toEqual([at(660).getTime(), null, 'Dora Vega', 'otherVehicle', undefined]);

    // The history as the API tells it, newest first.
    const history = (await api(`/drivers/${dora.id}`)).body.data.assignments;
    expect(history.map((a: any) => [a.vehicle.name, Date.parse(a.since), a.until && Date.parse(a.until), a.source])).toEqual([
      ['Tag Van', at(660).getTime(), null, 'telemetry'],
      ['Key Truck', at(450).getTime(), at(660).getTime(), 'telemetry'],
    ]);
    expect((await api(`/drivers/${ana.id}`)).body.data.assignments.map((a: any) => [Date.parse(a.since), Date.parse(a.until)])).toEqual([[at(30).getTime(), at(300).getTime()]]);
  });

  it('evaluated again from scratch, the same fixes write and log nothing new; a tracker resending a packet changes nothing', async () => {
    const snapshot = async () => ({
      truck: await assignmentsOf(truck.id), van: await assignmentsOf(van.id),
      truckEvents: await driverEvents(truck.id), vanEvents: await driverEvents(van.id), unknown: await unknownKeyOf(truck.id),
    });
    const before = await snapshot();
    const tracker = await scriptedTracker(harness.ports.teltonika!, truck.imei);
    await tracker.reportAll([drive(1, ANA_KEY), drive(10, BEN_KEY)]);
    tracker.close();
    for (let run = 0; run < 2; run++) {
      await sql`
        UPDATE device_engine_states SET cursor_fix_time = NULL, ignition = NULL, overspeed = false, status = NULL, inside = '{}', pending = '[]', segment = NULL, accumulators = NULL, driving = NULL
        WHERE device_id IN (${truck.id}, ${van.id})`.execute(database.db);
      const outcome = await evaluateDevices(database.db, harness.engine.catalog, [truck.id, van.id], ENGINE_TEST_SETTINGS);
      expect(outcome.events).toBe(0);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('lets the API assign by hand, and a key the tracker reads later overrides it', async () => {
    const byHand = await api(`/drivers/${ana.id}/assignment`, { method: 'POST', body: { vehicleId: van.imei } });
    expect(byHand.status).toBe(200);
    expect(byHand.body.data).toMatchObject({ currentVehicle: { id: van.imei }, assignmentSource: 'manual' });
    // A buffered fix older than the manual assignment does not undo it; a newer one with Carl's tag does.
    const older = gt06DriverFix({ time: at(700), lat: 19.35, lng: -99.25, speedKmh: 30, tag: CARL_TAG }, 5);
    const newer = gt06DriverFix({ time: new Date(Date.now() + 1_000), lat: 19.35, lng: -99.25, speedKmh: 30, tag: CARL_TAG }, 6);
    gt06.send(older);
    await evaluatedThrough(van.id, at(700));
    expect((await assignmentsOf(van.id)).at(-1)).toMatchObject({ driver_id: ana.id, until: null, source: 'manual' });
    gt06.send(newer);
    const assignments = await eventually(() => assignmentsOf(van.id), (rows) => expect(rows.at(-1)).toMatchObject({ driver_id: carl.id, until: null, source: 'telemetry' }));
    expect(assignments.at(-2)).toMatchObject({ driver_id: ana.id, source: 'manual' });
    expect((await driverEvents(van.id)).slice(-2).map((e) => [e.data.driver?.name, e.data.source, e.data.reason])).toEqual([
      ['Ana López', 'manual', 'assigned'],
      ['Carl Pérez', 'telemetry', 'identified'],
    ]);
  });
});
