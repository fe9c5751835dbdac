import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TravelStatus } from '../db/schema.ts';
import { square } from '../simulators/fleet-records.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** A user in Mexico City with one vehicle and two geofences. */
async function scene(timezone = 'America/Mexico_City') {
  const { account, user, key } = await t.fixtures.tenant(timezone);
  const vehicle = await t.fixtures.device(account.id, { name: `Truck ${account.id}` });
  await t.fixtures.geofence(account.id, 'Warehouse North', square(19.5, -99.1, 0.01));
  await t.fixtures.geofence(account.id, 'Customer Polanco', { kind: 'circle', lat: 19.43, lng: -99.19, radiusMeters: 300 });
  return { account, user, key, vehicle };
}

const body = (vehicle: string) => ({
  vehicle,
  startTime: '01/05/2030 08:00',
  waypoints: [
    { geofence: 'Warehouse North', expectedArrival: '01/05/2030 09:30' },
    { geofence: 'Customer Polanco', expectedArrival: '01/05/2030 11:00' },
  ],
});

const pendingWaypoint = { status: 'Pending', arrivedAt: null, estimatedArrival: null, delayMinutes: null, timing: '' };

describe('POST /api/v1/travels', () => {
  it('creates a Scheduled travel with the current position as waypoint 1, times in the user timezone', async () => {
    const { key, vehicle } = await scene();
    const { status, body: res } = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    expect(status).toBe(200);
    expect(res.success).toBe(true);
    expect(res.data).toEqual({
      travelId: expect.any(Number),
      vehicle: vehicle.name,
      status: 'Scheduled',
      timezone: 'America/Mexico_City',
      progress: 0,
      totalWaypoints: 3,
      completedWaypoints: 0,
      startTime: { local: '01/05/2030 08:00', utc: '01/05/2030 14:00' },
      waypoints: [
        { order: 1, geofence: 'Current position', expectedArrival: { local: '01/05/2030 08:00', utc: '01/05/2030 14:00' }, ...pendingWaypoint },
        { order: 2, geofence: 'Warehouse North', expectedArrival: { local: '01/05/2030 09:30', utc: '01/05/2030 15:30' }, ...pendingWaypoint },
        { order: 3, geofence: 'Customer Polanco', expectedArrival: { local: '01/05/2030 11:00', utc: '01/05/2030 17:00' }, ...pendingWaypoint },
      ],
    });
    const stored = await t.database.db.selectFrom('travels').selectAll().where('id', '=', res.data.travelId).executeTakeFirstOrThrow();
    expect(stored.start_time.toISOString()).toBe('2030-05-01T14:00:00.000Z');
    expect(stored.status).toBe(TravelStatus.Scheduled);
  });

  it('reads the same local times in another timezone as other instants', async () => {
    const { key, vehicle } = await scene('Asia/Kolkata');
    const { body: res } = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    expect(res.data.timezone).toBe('Asia/Kolkata');
    expect(res.data.startTime).toEqual({ local: '01/05/2030 08:00', utc: '01/05/2030 02:30' });
  });

  it.each([
    ['an unknown vehicle', (b: any) => ({ ...b, vehicle: 'No Such Truck' }), 'Vehicle not found'],
    ['an unknown geofence', (b: any) => ({ ...b, waypoints: [{ geofence: 'Nowhere', expectedArrival: '01/05/2030 09:30' }] }), 'Geofence not found'],
    ['a geofence name in another case', (b: any) => ({ ...b, waypoints: [{ geofence: 'warehouse north', expectedArrival: '01/05/2030 09:30' }] }), 'Geofence not found'],
    ['an ISO start time', (b: any) => ({ ...b, startTime: '2030-05-01T08:00' }), 'Invalid date format'],
    ['an impossible date', (b: any) => ({ ...b, startTime: '31/02/2030 08:00' }), 'Invalid date format'],
    ['a malformed expected arrival', (b: any) => ({ ...b, waypoints: [{ geofence: 'Warehouse North', expectedArrival: '1/5/2030 9:30' }] }), 'Invalid date format'],
  ])('refuses %s with 400', async (_case, change, error) => {
    const { key, vehicle } = await scene();
    const { status, body: res } = await t.json('/api/v1/travels', { key, method: 'POST', body: change(body(vehicle.name)) });
    expect(status).toBe(400);
    expect(res).toMatchObject({ success: false, data: null, error });
  });

  it('refuses a second active travel for the same vehicle with 400 "Active travel exists"', async () => {
    const { key, vehicle } = await scene();
    expect((await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).status).toBe(200);
    const second = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('Active travel exists');
  });

  it('creates exactly one travel when two requests for the same vehicle race', async () => {
    const { key, vehicle } = await scene();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 400).map((r) => r.body.error)).toEqual(Array(5).fill('Active travel exists'));
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM travels WHERE device_id = ${vehicle.id}`.execute(t.database.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('allows a new travel once the previous one is cancelled', async () => {
    const { key, vehicle } = await scene();
    const first = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    await t.json(`/api/v1/travels/${first.body.data.travelId}`, { key, method: 'DELETE' });
    expect((await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).status).toBe(200);
  });

  it('refuses arrivals earlier than the start or than the waypoint before', async () => {
    const { key, vehicle } = await scene();
    const early = { ...body(vehicle.name), waypoints: [{ geofence: 'Warehouse North', expectedArrival: '01/05/2030 07:59' }] };
    const res = await t.json('/api/v1/travels', { key, method: 'POST', body: early });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/waypoint 2 .*earlier than startTime/);
    const unordered = {
      ...body(vehicle.name),
      waypoints: [
        { geofence: 'Warehouse North', expectedArrival: '01/05/2030 10:00' },
        { geofence: 'Customer Polanco', expectedArrival: '01/05/2030 09:00' },
      ],
    };
    expect((await t.json('/api/v1/travels', { key, method: 'POST', body: unordered })).body.error).toMatch(/waypoint 3 .*waypoint 2/);
  });

  it.each([
    ['no body fields', {}, /vehicle is required.*startTime is required.*waypoints is required/],
    ['empty waypoints', { vehicle: 'x', startTime: '01/05/2030 08:00', waypoints: [] }, /at least one destination/],
    ['a numeric vehicle', { vehicle: 7, startTime: '01/05/2030 08:00', waypoints: [{ geofence: 'a', expectedArrival: '01/05/2030 09:00' }] }, /vehicle must be a string/],
    ['a waypoint without geofence', { vehicle: 'x', startTime: '01/05/2030 08:00', waypoints: [{ expectedArrival: '01/05/2030 09:00' }] }, /waypoints\.0\.geofence is required/],
    ['an array body', [1, 2], /./],
  ])('answers 400 for %s', async (_case, payload, message) => {
    const { key } = await scene();
    const { status, body: res } = await t.json('/api/v1/travels', { key, method: 'POST', body: payload });
    expect(status).toBe(400);
    expect(res.success).toBe(false);
    expect(res.error).toMatch(message);
  });

  it('does not find a vehicle that belongs to another user, account or mode', async () => {
    const { account, key } = await scene();
    const colleague = await t.fixtures.user(account.id);
    const theirs = await t.fixtures.device(account.id, { name: 'Colleague truck', userIds: [colleague.id] });
    const testTruck = await t.fixtures.device(account.id, { name: 'Test truck', mode: 'test' });
    for (const name of [theirs.name, testTruck.name]) {
      expect((await t.json('/api/v1/travels', { key, method: 'POST', body: body(name) })).body.error).toBe('Vehicle not found');
    }
  });
});

describe('GET /api/v1/travels and /travels/{id}', () => {
  it('lists only Scheduled and In progress travels with the next waypoint', async () => {
    const { key, vehicle, account } = await scene();
    const other = await t.fixtures.device(account.id, { name: `Van ${account.id}` });
    const a = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    const b = await t.json('/api/v1/travels', { key, method: 'POST', body: { ...body(other.name), startTime: '01/05/2030 07:00' } });
    // The engine moves travels forward; here the row stands in for it: b started, its first waypoint reached.
    await t.database.db.updateTable('travels').set({ status: TravelStatus.InProgress }).where('id', '=', b.body.data.travelId).execute();
    await t.database.db
      .updateTable('travel_waypoints')
      .set({ status: 'completed', arrived_at: new Date('2030-05-01T13:00:00Z') })
      .where('travel_id', '=', b.body.data.travelId)
      .where('seq', '=', 1)
      .execute();
    await t.database.db
      .updateTable('travel_waypoints')
      .set({ estimated_arrival: new Date('2030-05-01T15:42:00Z') })
      .where('travel_id', '=', b.body.data.travelId)
      .where('seq', '=', 2)
      .execute();

    const { status, body: res } = await t.json('/api/v1/travels', { key });
    expect(status).toBe(200);
    expect(res.data).toEqual([
      {
        travelId: b.body.data.travelId,
        vehicle: other.name,
        status: 'In progress',
        progress: 33.3,
        totalWaypoints: 3,
        completedWaypoints: 1,
        nextWaypoint: 'Warehouse North',
        delayMinutes: 12,
        timing: '+12 min late (est.)',
        startTime: { local: '01/05/2030 07:00', utc: '01/05/2030 13:00' },
      },
      {
        travelId: a.body.data.travelId,
        vehicle: vehicle.name,
        status: 'Scheduled',
        progress: 0,
        totalWaypoints: 3,
        completedWaypoints: 0,
        nextWaypoint: 'Current position',
        delayMinutes: null,
        timing: '',
        startTime: { local: '01/05/2030 08:00', utc: '01/05/2030 14:00' },
      },
    ]);

    await t.json(`/api/v1/travels/${a.body.data.travelId}`, { key, method: 'DELETE' });
    expect((await t.json('/api/v1/travels', { key })).body.data.map((s: { travelId: number }) => s.travelId)).toEqual([b.body.data.travelId]);

    const detail = await t.json(`/api/v1/travels/${b.body.data.travelId}`, { key });
    expect(detail.body.data.waypoints[0]).toMatchObject({ status: 'Completed', arrivedAt: { local: '01/05/2030 07:00', utc: '01/05/2030 13:00' }, delayMinutes: 0, timing: 'On time' });
    expect(detail.body.data.waypoints[1]).toMatchObject({ estimatedArrival: { local: '01/05/2030 09:42', utc: '01/05/2030 15:42' }, delayMinutes: 12 });
  });

  it('answers 404 for a missing travel and for another user\'s travel, 400 for a non-numeric id', async () => {
    const { key, vehicle, account } = await scene();
    const created = await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) });
    const colleague = await t.fixtures.user(account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    const testKey = (await t.fixtures.key((await t.fixtures.user(account.id)).id, { mode: 'test' })).key;
    for (const [path, k] of [
      ['/api/v1/travels/999999', key],
      [`/api/v1/travels/${created.body.data.travelId}`, colleagueKey],
      [`/api/v1/travels/${created.body.data.travelId}`, testKey],
    ] as const) {
      const res = await t.json(path, { key: k });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: 'Travel not found' });
    }
    expect((await t.json('/api/v1/travels', { key: colleagueKey })).body.data).toEqual([]);
    expect((await t.json('/api/v1/travels/abc', { key })).status).toBe(400);
  });
});

describe('DELETE /api/v1/travels/{id}', () => {
  it('cancels a Scheduled travel and its pending waypoints', async () => {
    const { key, vehicle } = await scene();
    const id = (await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).body.data.travelId;
    const res = await t.json(`/api/v1/travels/${id}`, { key, method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ travelId: id, status: 'Cancelled', message: `Travel ${id} cancelled` });
    const detail = (await t.json(`/api/v1/travels/${id}`, { key })).body.data;
    expect(detail.status).toBe('Cancelled');
    expect(detail.waypoints.map((w: { status: string }) => w.status)).toEqual(['Cancelled', 'Cancelled', 'Cancelled']);
  });

  it('cancels an In progress travel, keeping completed waypoints', async () => {
    const { key, vehicle } = await scene();
    const id = (await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).body.data.travelId;
    await t.database.db.updateTable('travels').set({ status: TravelStatus.InProgress }).where('id', '=', id).execute();
    await t.database.db.updateTable('travel_waypoints').set({ status: 'completed', arrived_at: new Date() }).where('travel_id', '=', id).where('seq', '=', 1).execute();
    expect((await t.json(`/api/v1/travels/${id}`, { key, method: 'DELETE' })).status).toBe(200);
    const detail = (await t.json(`/api/v1/travels/${id}`, { key })).body.data;
    expect(detail.waypoints.map((w: { status: string }) => w.status)).toEqual(['Completed', 'Cancelled', 'Cancelled']);
    expect(detail.progress).toBe(33.3);
  });

  it.each([
    ['Cancelled', TravelStatus.Cancelled],
    ['Completed', TravelStatus.Completed],
  ])('refuses to cancel a %s travel with 400 naming the status', async (name, code) => {
    const { key, vehicle } = await scene();
    const id = (await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).body.data.travelId;
    await t.database.db.updateTable('travels').set({ status: code }).where('id', '=', id).execute();
    const res = await t.json(`/api/v1/travels/${id}`, { key, method: 'DELETE' });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error).toContain(name);
  });

  it('answers 404 for a travel the key cannot see', async () => {
    const { key, vehicle } = await scene();
    const id = (await t.json('/api/v1/travels', { key, method: 'POST', body: body(vehicle.name) })).body.data.travelId;
    const stranger = await t.fixtures.tenant();
    const res = await t.json(`/api/v1/travels/${id}`, { key: stranger.key, method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Travel not found');
    expect((await t.json(`/api/v1/travels/${id}`, { key })).body.data.status).toBe('Scheduled');
  });
});
