import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { fixtures } from './support/fixtures.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp();
  key = (await t.fixtures.tenant()).key;
});
afterAll(async () => {
  await t?.close();
});

const post = (body: unknown, as = key) => t.json('/api/v1/geofences', { key: as, method: 'POST', body });
const square = [{ lat: 19.40, lng: -99.10 }, { lat: 19.40, lng: -99.09 }, { lat: 19.41, lng: -99.09 }, { lat: 19.41, lng: -99.10 }];

describe('geofence writes', () => {
  it('creates, reads, changes and deletes a geofence', async () => {
    const created = await post({ name: 'Yard', type: 'polygon', vertices: square, exitDwellSeconds: 45 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Yard', type: 'polygon', vertexCount: 4, enterDwellSeconds: 0, exitDwellSeconds: 45 });
    const id = created.body.data.id;
    expect((await t.json(`/api/v1/geofences/${id}`, { key })).body.data).toEqual(created.body.data);

    const reshaped = await t.json(`/api/v1/geofences/${id}`, { key, method: 'PATCH', body: { name: 'Yard 2', type: 'circle', center: { lat: 19.5, lng: -99.2 }, radiusMeters: 300 } });
    expect(reshaped.status).toBe(200);
    expect(reshaped.body.data).toMatchObject({ id, name: 'Yard 2', type: 'circle', centerLat: 19.5, centerLng: -99.2, radiusMeters: 300, exitDwellSeconds: 45 });
    expect((await t.json('/api/v1/geofences', { key })).body.data.map((g: any) => g.name)).toContain('Yard 2');

    expect((await t.json(`/api/v1/geofences/${id}`, { key, method: 'DELETE' })).body.data).toEqual({ id, deleted: true });
    expect((await t.json(`/api/v1/geofences/${id}`, { key })).status).toBe(404);
  });

  it('closes a polygon for the user: given open or closed, the same vertices', async () => {
    const open = await post({ name: 'Open', type: 'polygon', vertices: square });
    const closed = await post({ name: 'Closed', type: 'polygon', vertices: [...square, square[0]] });
    expect(closed.body.data.vertices).toEqual(open.body.data.vertices);
    expect(closed.body.data.vertexCount).toBe(4);
  });

  it('takes a GeoJSON MultiPolygon, listing its largest part', async () => {
    const small = [[-99.0, 19.0], [-98.99, 19.0], [-98.99, 19.01], [-99.0, 19.0]];
    const large = [[-99.2, 19.2], [-99.1, 19.2], [-99.1, 19.3], [-99.2, 19.3], [-99.2, 19.2]];
    const { status, body } = await post({ name: 'Two lots', geometry: { type: 'MultiPolygon', coordinates: [[small], [large]] } });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ type: 'polygon', vertexCount: 4 });
  });

  it.each([
    [{ name: 'A', type: 'polygon', vertices: square.slice(0, 2) }, /at least 3 distinct vertices, got 2/],
    [{ name: 'A', type: 'polygon', vertices: [square[0], square[0], square[1], square[0]] }, /at least 3 distinct/],
    [{ name: 'A', type: 'polygon', vertices: [{ lat: 0, lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }, { lat: 1, lng: 0 }] }, /cross themselves near lat 0\.5/],
    [{ name: 'A', type: 'polygon', vertices: [{ lat: 91, lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }] }, /vertices\.0\.lat must be between -90 and 90/],
    [{ name: 'A', type: 'circle', center: { lat: -95, lng: 0 }, radiusMeters: 10 }, /center\.lat must be between -90 and 90/],
    [{ name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 0 }, /radiusMeters must be more than 0/],
    [{ name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 150_000 }, /at most 100000 \(100 km\)/],
    [{ name: 'A', type: 'circle', radiusMeters: 10 }, /center is required/],
    [{ name: 'A', type: 'hexagon' }, /type/],
    [{ name: 'A' }, /give type \(circle or polygon\)/],
    [{ name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 5, geometry: { type: 'Polygon', coordinates: [] } }, /not both/],
    [{ name: 'A', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 1], [0, 1], [1, 0], [0, 0]]] } }, /not valid: Self-intersection/],
    [{ name: '  ', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 5 }, /name must be 1 to 200/],
    [{ name: 'A', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 5, enterDwellSeconds: -1 }, /enterDwellSeconds/],
  ])('refuses %j saying what is wrong', async (body, message) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer.error).toMatch(message);
  });

  it('refuses a name the account already has (409), and keeps accounts and permissions apart', async () => {
    await post({ name: 'Depot', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 50 });
    const again = await post({ name: 'Depot', type: 'circle', center: { lat: 1, lng: 1 }, radiusMeters: 50 });
    expect(again.status).toBe(409);
    const other = await t.fixtures.tenant();
    expect((await post({ name: 'Depot', type: 'circle', center: { lat: 1, lng: 1 }, radiusMeters: 50 }, other.key)).status).toBe(201);
    const mine = (await t.json('/api/v1/geofences', { key })).body.data.find((g: any) => g.name === 'Depot');
    expect((await t.json(`/api/v1/geofences/${mine.id}`, { key: other.key })).status).toBe(404);
    expect((await t.json(`/api/v1/geofences/${mine.id}`, { key: other.key, method: 'DELETE' })).status).toBe(404);
    const readOnly = (await t.fixtures.key((await t.fixtures.tenant()).user.id, { permissions: ['geofences:read'] })).key;
    expect((await post({ name: 'X', type: 'circle', center: { lat: 0, lng: 0 }, radiusMeters: 5 }, readOnly)).status).toBe(403);
  });
});

describe('the engine follows geofence writes', () => {
  let database: TestDatabase;
  let harness: EngineHarness;
  let engineKey: string;
  const IMEI = '356307042449555';

  beforeAll(async () => {
    database = await openTestDatabase();
    harness = await startEngineHarness(database);
    const make = fixtures(database.db);
    const tenant = await make.tenant();
    engineKey = tenant.key;
    await make.device(tenant.account.id, { imei: IMEI, name: 'Follower', userIds: [tenant.user.id] });
  });
  afterAll(async () => {
    await harness?.close();
    await database?.destroy();
  });

  const api = async (path: string, method = 'GET', body?: unknown) => {
    const res = await harness.app.request(`/api/v1${path}`, {
      method, headers: { Authorization: `Bearer ${engineKey}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const enters = async () => (await api('/events?types=vehicle.geofence.enter&order=asc')).body.data.map((e: any) => e.data.geofence.name);
  async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('uses a created, moved and deleted geofence for fixes a second later', async () => {
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      await tracker.report({ latitude: 19.30, longitude: -99.30 });
      const created = await api('/geofences', 'POST', { name: 'Fresh', type: 'circle', center: { lat: 19.40, lng: -99.10 }, radiusMeters: 300 });
      expect(created.status).toBe(201);
      await new Promise((r) => setTimeout(r, 1_000));
      await tracker.report({ latitude: 19.40, longitude: -99.10 });
      await eventually(async () => (await enters()).includes('Fresh'));

      // Moved away: leaving the old place exits, entering the new place enters.
      await tracker.report({ latitude: 19.30, longitude: -99.30 });
      await api(`/geofences/${created.body.data.id}`, 'PATCH', { name: 'Moved', type: 'circle', center: { lat: 19.50, lng: -99.20 }, radiusMeters: 300 });
      await new Promise((r) => setTimeout(r, 1_000));
      await tracker.report({ latitude: 19.40, longitude: -99.10 });
      await tracker.report({ latitude: 19.50, longitude: -99.20 });
      await eventually(async () => (await enters()).includes('Moved'));
      expect(await enters()).toEqual(['Fresh', 'Moved']);

      // Deleted: driving through its place again adds nothing.
      await tracker.report({ latitude: 19.30, longitude: -99.30 });
      expect((await api(`/geofences/${created.body.data.id}`, 'DELETE')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_000));
      await tracker.report({ latitude: 19.50, longitude: -99.20 });
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await enters()).toEqual(['Fresh', 'Moved']);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM geofence_events WHERE geofence_id = ${created.body.data.id}`.execute(database.db);
      expect(rows[0]!.n).toBe(0); // its crossings went with it, and none were added after
    } finally {
      tracker.close();
    }
  }, 60_000);
});
