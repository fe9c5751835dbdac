import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Device } from '../db/schema.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// The /drivers API as an integrator uses it, through the real HTTP app on a real database: register,
// list in pages, read with history and rating, change, assign by hand, delete. Assignment from the
// trackers' keys over TCP is test/driver-assignment.test.ts.

const TZ = 'America/Mexico_City'; // UTC-6 all year
let t: TestApp;
let key: string;
let accountId: number;
let userId: number;
let otherUserKey: string;
let truck: Device;
let van: Device;
let hidden: Device;

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant(TZ);
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
  const other = await t.fixtures.user(accountId, TZ);
  otherUserKey = (await t.fixtures.key(other.id)).key;
  truck = await t.fixtures.device(accountId, { name: 'Truck 12', userIds: [userId, other.id] });
  van = await t.fixtures.device(accountId, { name: 'Van 3', userIds: [userId] });
  // Only the other user may see this one.
  hidden = await t.fixtures.device(accountId, { name: 'Hidden Truck', userIds: [other.id] });
});
afterAll(async () => {
  await t?.close();
});

const api = (path: string, options: { method?: string; body?: unknown; as?: string } = {}) =>
  t.json(`/api/v1${path}`, { key: options.as ?? key, method: options.method, body: options.body });

let names = 0;
async function driver(fields: Record<string, unknown> = {}) {
  const n = ++names;
  const res = await api('/drivers', { method: 'POST', body: { name: `Driver ${String(n).padStart(3, '0')}`, identifier: `KEY-${n}-${Date.now()}`, ...fields } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const driverEvents = async (deviceId: number) =>
  (await sql<{ occurred_at: Date; data: any }>`SELECT occurred_at, data FROM events WHERE device_id = ${deviceId} AND type = 'driver.changed' ORDER BY id`.execute(t.database.db)).rows;

describe('registering, reading, changing and deleting a driver', () => {
  it('registers a driver with the identifier trimmed and upper case, no vehicle, no rating yet', async () => {
    const res = await api('/drivers', { method: 'POST', body: { name: '  Ana López ', identifier: ' 01c68011010000c7 ', phone: '+52 55 1234 5678' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'Ana López', identifier: '01C68011010000C7', phone: '+52 55 1234 5678', currentVehicle: null, assignedSince: null, assignmentSource: null, rating: null,
    });
    expect(res.body.data.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-06:00$/);
    const detail = await api(`/drivers/${res.body.data.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id: res.body.data.id, assignments: [], ratingBasis: { days: 30, distanceKm: 0, overspeedMinutes: 0, harshEvents: 0, idleMinutes: 0 } });
  });

  it('refuses a second driver with the same key, however it is spelled (409), also through PATCH', async () => {
    const first = await driver({ identifier: 'dup-key-77' });
    const again = await api('/drivers', { method: 'POST', body: { name: 'Someone else', identifier: ' DUP-KEY-77' } });
    expect(again.status).toBe(409);
    expectErrorEnvelope(again.body, /identifier DUP-KEY-77 already exists/);
    const second = await driver();
    const patch = await api(`/drivers/${second.id}`, { method: 'PATCH', body: { identifier: 'Dup-Key-77' } });
    expect(patch.status).toBe(409);
    expect((await api(`/drivers/${first.id}`)).body.data.identifier).toBe('DUP-KEY-77');
  });

  it('changes only the fields given; phone null removes it; an empty body changes nothing', async () => {
    const d = await driver({ phone: '555 0100' });
    const renamed = await api(`/drivers/${d.id}`, { method: 'PATCH', body: { name: 'Renamed Driver', phone: null } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Renamed Driver', identifier: d.identifier, phone: null });
    const same = await api(`/drivers/${d.id}`, { method: 'PATCH', body: {} });
    expect(same.body.data).toEqual(renamed.body.data);
  });

  it('answers bad input with 400 in the envelope, unknown drivers with 404', async () => {
    const bad: Array<[string, string, unknown, RegExp]> = [
      ['POST', '/drivers', { identifier: 'X1' }, /name is required/],
      ['POST', '/drivers', { name: 'No key' }, /identifier is required/],
      ['POST', '/drivers', { name: '   ', identifier: 'X2' }, /name must be 1 to 200/],
      ['POST', '/drivers', { name: 'Long key', identifier: 'K'.repeat(65) }, /identifier must be 1 to 64/],
      ['POST', '/drivers', { name: 'Tab key', identifier: 'AB\tCD' }, /control characters/],
      ['POST', '/drivers', { name: 'Nul\u0000name', identifier: 'X3' }, /NUL/],
      ['POST', '/drivers', { name: 'Phone', identifier: 'X4', phone: 'call me' }, /phone must be/],
      ['POST', '/drivers', { name: 'Extra', identifier: 'X5', rating: 100 }, /rating/],
      ['POST', '/drivers', { name: 42, identifier: 'X6' }, /name must be a string/],
      ['PATCH', '/drivers/abc', { name: 'x' }, /id/],
      ['GET', '/drivers/99999999999', undefined, /id/],
      ['GET', '/drivers?limit=0', undefined, /limit/],
      ['GET', '/drivers?limit=501', undefined, /limit/],
      ['GET', '/drivers?q=a%00b', undefined, /NUL/],
    ];
    for (const [method, path, body, message] of bad) {
      const res = await api(path, { method, body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expectErrorEnvelope(res.body, message);
    }
    for (const [method, path] of [['GET', '/drivers/2147483647'], ['PATCH', '/drivers/2147483647'], ['DELETE', '/drivers/2147483647'], ['DELETE', '/drivers/2147483647/assignment']]) {
      const res = await api(path!, { method, body: method === 'PATCH' ? { name: 'x' } : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
      expectErrorEnvelope(res.body, 'Driver not found: 2147483647');
    }
  });

  it('keeps drivers to their account and mode, and to the keys\' permissions', async () => {
    const d = await driver();
    const stranger = await t.fixtures.tenant(TZ);
    expect((await api(`/drivers/${d.id}`, { as: stranger.key })).status).toBe(404);
    expect((await api(`/drivers/${d.id}`, { as: stranger.key, method: 'DELETE' })).status).toBe(404);
    const testKey = (await t.fixtures.key(userId, { mode: 'test' })).key;
    expect((await api(`/drivers/${d.id}`, { as: testKey })).status).toBe(404);
    // The same key in test mode is a driver of its own.
    expect((await api('/drivers', { as: testKey, method: 'POST', body: { name: 'Test mode driver', identifier: d.identifier } })).status).toBe(201);
    // Every user of the account sees the account's drivers.
    expect((await api(`/drivers/${d.id}`, { as: otherUserKey })).status).toBe(200);
    const reader = (await t.fixtures.key(userId, { permissions: ['drivers:read'] })).key;
    expect((await api(`/drivers/${d.id}`, { as: reader })).status).toBe(200);
    const denied = await api('/drivers', { as: reader, method: 'POST', body: { name: 'Nope', identifier: 'NOPE-1' } });
    expect(denied.status).toBe(403);
    expectErrorEnvelope(denied.body, 'This API key lacks the drivers:write permission');
    const writerOnly = (await t.fixtures.key(userId, { permissions: ['drivers:write'] })).key;
    expect((await api('/drivers', { as: writerOnly })).status).toBe(403);
  });

  it('deletes a driver with their history; their trips stay, without a driver, and their vehicle logs driverDeleted', async () => {
    const d = await driver();
    const car = await t.fixtures.device(accountId, { name: `Delete car ${d.id}`, userIds: [userId] });
    expect((await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId: car.imei } })).status).toBe(200);
    await t.database.db.insertInto('trips').values(trip(car.id, d.id, 1, 20_000)).execute();
    const res = await api(`/drivers/${d.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: d.id, deleted: true });
    expect((await api(`/drivers/${d.id}`)).status).toBe(404);
    expect((await api(`/drivers/${d.id}`, { method: 'DELETE' })).status).toBe(404);
    expect(await t.database.db.selectFrom('driver_assignments').select('id').where('device_id', '=', car.id).execute()).toEqual([]);
    expect(await t.database.db.selectFrom('trips').select(['driver_id', 'distance_m']).where('device_id', '=', car.id).execute()).toEqual([{ driver_id: null, distance_m: 20_000 }]);
    expect((await driverEvents(car.id)).map((e) => [e.data.reason, e.data.driver?.id ?? null, e.data.previousDriver?.id ?? null])).toEqual([['assigned', d.id, null], ['driverDeleted', null, d.id]]);
  });
});

describe('GET /drivers', () => {
  let listed: any[];
  beforeAll(async () => {
    // A tenant of its own, so the list holds exactly these.
    const tenant = await t.fixtures.tenant(TZ);
    listed = [];
    for (const [name, identifier] of [['Carla Ruiz', 'AA01'], ['Bruno Díaz', 'BB02'], ['Ana Gómez', 'CC03'], ['Dario Sol', 'ANA-KEY'], ['Ana Gómez', 'DD04'], ['Eva Luna', 'EE05'], ['Fabio Mar', 'FF06']]) {
      const res = await t.json('/api/v1/drivers', { key: tenant.key, method: 'POST', body: { name, identifier } });
      listed.push(res.body.data);
    }
    key2 = tenant.key;
  });
  let key2: string;

  it('pages by name then id with an opaque cursor, has_more and next_cursor as GET /events', async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await api(`/drivers?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { as: key2 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'has_more', 'next_cursor']);
      expect(res.body.has_more).toBe(res.body.next_cursor !== null);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    const expected = [...listed].sort((a, b) => (a.name === b.name ? a.id - b.id : a.name < b.name ? -1 : 1));
    expect(seen.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    expect((await api('/drivers', { as: key2 })).body.data).toHaveLength(7);
  });

  it('filters by part of the name or the identifier, in any case', async () => {
    const ana = await api('/drivers?q=ana', { as: key2 });
    expect(ana.body.data.map((d: any) => [d.name, d.identifier])).toEqual([['Ana Gómez', 'CC03'], ['Ana Gómez', 'DD04'], ['Dario Sol', 'ANA-KEY']]);
    expect((await api('/drivers?q=ee0', { as: key2 })).body.data.map((d: any) => d.name)).toEqual(['Eva Luna']);
    expect((await api('/drivers?q=nobody', { as: key2 })).body).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('refuses a cursor tampered with, made with another q, or made for another tenant (400)', async () => {
    const page = await api('/drivers?limit=2&q=a', { as: key2 });
    const cursor = page.body.next_cursor as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const tampered = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace('Ana', 'Zed')).toString('base64url');
    for (const [path, as, message] of [
      [`/drivers?limit=2&q=a&cursor=${tampered}`, key2, /cursor is not one this list returned/],
      [`/drivers?limit=2&q=b&cursor=${cursor}`, key2, /other filters/],
      [`/drivers?limit=2&q=a&cursor=${cursor}`, key, /cursor is not one this list returned/],
      ['/drivers?cursor=not-a-cursor', key2, /cursor/],
      [`/drivers?cursor=${'A'.repeat(5000)}`, key2, /cursor/],
    ] as const) {
      const res = await api(path, { as });
      expect(res.status, path).toBe(400);
      expectErrorEnvelope(res.body, message);
    }
    expect((await api(`/drivers?limit=2&q=a&cursor=${cursor}`, { as: key2 })).status).toBe(200);
  });
});

describe('assigning by hand', () => {
  it('assigns, hands over, moves and unassigns, keeping the history and logging driver.changed on each vehicle', async () => {
    const ana = await driver({ name: 'Manual Ana' });
    const ben = await driver({ name: 'Manual Ben' });
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
    const local = (d: Date) => new Date(d.getTime() - 6 * 3_600_000).toISOString().slice(0, 16); // Mexico City wall clock

    const t1 = ago(50);
    const first = await api(`/drivers/${ana.id}/assignment`, { method: 'POST', body: { vehicleId: truck.imei, since: local(t1) } });
    expect(first.status).toBe(200);
    const t1Minute = new Date(Math.floor(t1.getTime() / 60_000) * 60_000);
    expect(first.body.data).toMatchObject({ currentVehicle: { id: truck.imei, name: 'Truck 12' }, assignmentSource: 'manual', assignedSince: `${local(t1)}:00-06:00` });
    // Again: nothing changes, nothing more is logged.
    expect((await api(`/drivers/${ana.id}/assignment`, { method: 'POST', body: { vehicleId: truck.imei } })).status).toBe(200);

    const t2 = new Date(Math.floor(ago(30).getTime() / 1000) * 1000);
    const handover = await api(`/drivers/${ben.id}/assignment`, { method: 'POST', body: { vehicleId: truck.imei, since: t2.toISOString() } });
    expect(handover.status).toBe(200);
    expect((await api(`/drivers/${ana.id}`)).body.data).toMatchObject({ currentVehicle: null, assignedSince: null });

    const t3 = new Date(Math.floor(ago(10).getTime() / 1000) * 1000);
    expect((await api(`/drivers/${ben.id}/assignment`, { method: 'POST', body: { vehicleId: van.imei, since: t3.toISOString().replace('Z', '+00:00') } })).status).toBe(200);

    const history = (await api(`/drivers/${ben.id}`)).body.data.assignments;
    expect(history.map((a: any) => [a.vehicle.name, Date.parse(a.since), a.until && Date.parse(a.until), a.source])).toEqual([
      ['Van 3', t3.getTime(), null, 'manual'],
      ['Truck 12', t2.getTime(), t3.getTime(), 'manual'],
    ]);
    expect((await api(`/drivers/${ana.id}`)).body.data.assignments.map((a: any) => [Date.parse(a.since), Date.parse(a.until)])).toEqual([[t1Minute.getTime(), t2.getTime()]]);

    const unassigned = await api(`/drivers/${ben.id}/assignment`, { method: 'DELETE' });
    expect(unassigned.status).toBe(200);
    expect(unassigned.body.data.currentVehicle).toBeNull();
    const again = await api(`/drivers/${ben.id}/assignment`, { method: 'DELETE' });
    expect(again.status).toBe(409);
    expectErrorEnvelope(again.body, `Driver ${ben.id} has no current vehicle`);

    const onTruck = await driverEvents(truck.id);
    expect(onTruck.map((e) => [e.occurred_at.getTime(), e.data.driver?.name ?? null, e.data.previousDriver?.name ?? null, e.data.source, e.data.reason])).toEqual([
      [t1Minute.getTime(), 'Manual Ana', null, 'manual', 'assigned'],
      [t2.getTime(), 'Manual Ben', 'Manual Ana', 'manual', 'assigned'],
      [t3.getTime(), null, 'Manual Ben', 'manual', 'otherVehicle'],
    ]);
    expect(onTruck[0]!.data).toMatchObject({ vehicle: { id: truck.imei, name: 'Truck 12' }, driver: { id: ana.id, identifier: ana.identifier }, reportedIdentifier: null });
    expect((await driverEvents(van.id)).map((e) => [e.data.driver?.name ?? null, e.data.reason])).toEqual([['Manual Ben', 'assigned'], [null, 'unassigned']]);
  });

  it('refuses a since in the future (400), not after the newest change (409), and a vehicle the key cannot see (404)', async () => {
    const d = await driver();
    const car = await t.fixtures.device(accountId, { name: `Refusal car ${d.id}`, userIds: [userId] });
    const future = await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId: car.imei, since: new Date(Date.now() + 3_600_000).toISOString() } });
    expect(future.status).toBe(400);
    expectErrorEnvelope(future.body, 'since must not be in the future');
    for (const since of ['yesterday', '2024-05-01', '2024-02-30T10:00', '2024-05-01T25:00Z']) {
      const res = await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId: car.imei, since } });
      expect(res.status, since).toBe(400);
      expectErrorEnvelope(res.body, /since must be a date-time/);
    }
    expect((await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId: car.imei } })).status).toBe(200);
    await api(`/drivers/${d.id}/assignment`, { method: 'DELETE' });
    const rewrite = await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId: car.imei, since: new Date(Date.now() - 86_400_000).toISOString() } });
    expect(rewrite.status).toBe(409);
    expectErrorEnvelope(rewrite.body, /since must be after .* history is not rewritten/);
    for (const vehicleId of [hidden.imei, '000000000000000']) {
      const res = await api(`/drivers/${d.id}/assignment`, { method: 'POST', body: { vehicleId } });
      expect(res.status).toBe(404);
      expectErrorEnvelope(res.body, 'Vehicle not found or no access');
    }
    expect((await api('/drivers/2147483647/assignment', { method: 'POST', body: { vehicleId: car.imei } })).status).toBe(404);
  });

  it('shows a current vehicle and history only to users who can see the vehicle', async () => {
    const d = await driver();
    const other = await api(`/drivers/${d.id}/assignment`, { as: otherUserKey, method: 'POST', body: { vehicleId: hidden.imei } });
    expect(other.status).toBe(200);
    expect(other.body.data.currentVehicle).toEqual({ id: hidden.imei, name: 'Hidden Truck' });
    const mine = (await api(`/drivers/${d.id}`)).body.data;
    expect(mine).toMatchObject({ currentVehicle: null, assignedSince: null, assignments: [] });
  });
});

function trip(deviceId: number, driverId: number | null, daysAgo: number, distanceM: number, faults: { overspeedS?: number; harshEvents?: number; idleS?: number } = {}) {
  const start = new Date(Date.now() - daysAgo * 86_400_000);
  return {
    device_id: deviceId, start_time: start, end_time: new Date(start.getTime() + 3_600_000), last_fix_time: new Date(start.getTime() + 3_600_000),
    start_lat: 19.4, start_lng: -99.1, end_lat: 19.5, end_lng: -99.2, start_geofence: null, end_geofence: null,
    distance_m: distanceM, driving_s: 3_000, idle_s: faults.idleS ?? 0, overspeed_s: faults.overspeedS ?? 0, max_speed_kmh: 90, harsh_events: faults.harshEvents ?? 0, driver_id: driverId,
  };
}

describe('rating', () => {
  // Trips are inserted as the engine's segmenter writes them (it is tested in test/trips-report.test.ts):
  // the rating only reads their totals.
  it('rates the last 30 days of trips per 100 km: 100 − 2×overspeed min − 5×harsh − 0.5×idle min, null under 10 km', async () => {
    const careful = await driver({ name: 'Rated Careful' });
    const rough = await driver({ name: 'Rated Rough' });
    const newcomer = await driver({ name: 'Rated Newcomer' });
    const car = await t.fixtures.device(accountId, { name: 'Rating car', userIds: [userId] });
    await t.database.db.insertInto('trips').values([
      // 100 km in two trips: 2 overspeed minutes, 1 harsh event, 20 idle minutes → 100 − 4 − 5 − 10.
      trip(car.id, careful.id, 1, 60_000, { overspeedS: 120, idleS: 600 }),
      trip(car.id, careful.id, 3, 40_000, { harshEvents: 1, idleS: 600 }),
      // Older than 30 days: not counted.
      trip(car.id, careful.id, 31, 10_000, { harshEvents: 50 }),
      // 20 km, 4 harsh events: 20 per 100 km → 0.
      trip(car.id, rough.id, 2, 20_000, { harshEvents: 4 }),
      trip(car.id, newcomer.id, 2.5, 9_000),
    ]).execute();
    const detail = (await api(`/drivers/${careful.id}`)).body.data;
    expect(detail.rating).toBe(81);
    expect(detail.ratingBasis).toEqual({ days: 30, distanceKm: 100, overspeedMinutes: 2, harshEvents: 1, idleMinutes: 20 });
    const listed = (await api('/drivers?q=rated')).body.data;
    expect(listed.map((d: any) => [d.name, d.rating])).toEqual([['Rated Careful', 81], ['Rated Newcomer', null], ['Rated Rough', 0]]);
  });
});
