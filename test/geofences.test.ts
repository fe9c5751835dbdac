import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { square } from '../simulators/fleet-records.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface GeofenceBody {
  id: number;
  name: string;
  centerLat: number;
  centerLng: number;
  radiusMeters: number;
  vertexCount: number;
  vertices: Array<{ lat: number; lng: number }>;
}

/**
 * Distance in metres between two nearby points on the WGS 84 ellipsoid (local flat approximation with the
 * meridian and prime-vertical radii of curvature): far better than 0.1 % for the few-km shapes used here.
 */
function metres(a: { lat: number; lng: number }, b: { lat: number; lng: number }): number {
  const A = 6_378_137;
  const e2 = 0.00669437999014;
  const rad = Math.PI / 180;
  const phi = ((a.lat + b.lat) / 2) * rad;
  const w = 1 - e2 * Math.sin(phi) ** 2;
  const meridian = (A * (1 - e2)) / w ** 1.5;
  const primeVertical = A / Math.sqrt(w);
  const dy = (b.lat - a.lat) * rad * meridian;
  const dx = (b.lng - a.lng) * rad * primeVertical * Math.cos(phi);
  return Math.hypot(dx, dy);
}

const ring = (points: Array<[number, number]>) => [...points, points[0]!];
const asVertices = (points: Array<[number, number]>) => points.map(([lng, lat]) => ({ lat, lng }));

async function list(key: string): Promise<GeofenceBody[]> {
  const { status, body } = await t.json('/api/v1/geofences', { key });
  expect(status).toBe(200);
  expect(body).toMatchObject({ success: true, error: null });
  expect(Array.isArray(body.data)).toBe(true);
  return body.data;
}

describe('GET /api/v1/geofences', () => {
  it('answers an empty array for an account without geofences', async () => {
    const { key } = await t.fixtures.tenant();
    const { status, body } = await t.json('/api/v1/geofences', { key });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.error).toBeNull();
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(body.data).toEqual([]);
  });

  it('sorts by name alphabetically, ignoring case and reading numbers by value', async () => {
    const { account, key } = await t.fixtures.tenant();
    // Inserted in an order that neither id order nor a plain code-point sort would turn into the expected one.
    const inserted = ['Zone 10', 'Beta', 'zone 3', 'Zone 2', 'alpha', 'Charlie 1', 'Zone 1'];
    for (const [i, name] of inserted.entries()) await t.fixtures.geofence(account.id, name, square(10 + i, 20, 0.01));
    const names = (await list(key)).map((g) => g.name);
    expect(names).toEqual(['alpha', 'Beta', 'Charlie 1', 'Zone 1', 'Zone 2', 'zone 3', 'Zone 10']);
  });

  it('describes a square polygon: its 4 vertices in order, its centroid and the half-diagonal as radius', async () => {
    const { account, key } = await t.fixtures.tenant();
    const [lat, lng, half] = [19.4326, -99.1332, 0.01];
    const created = await t.fixtures.geofence(account.id, 'Square', square(lat, lng, half));
    const [g] = await list(key);
    // The specification's fields, plus type and the dwell times (the shape the geofence writes answer too).
    expect(Object.keys(g!).sort()).toEqual(['centerLat', 'centerLng', 'enterDwellSeconds', 'exitDwellSeconds', 'id', 'name', 'radiusMeters', 'type', 'vertexCount', 'vertices']);
    expect(g!.id).toBe(created.id);
    expect(Number.isInteger(g!.id)).toBe(true);
    expect(g!.name).toBe('Square');
    expect(g!.vertexCount).toBe(4);
    expect(Number.isInteger(g!.vertexCount)).toBe(true);
    // To 7 decimals: stored as 19.442600000000002 and the like, answered as the corners were given.
    expect(g!.vertices).toEqual([
      { lat: 19.4226, lng: -99.1432 },
      { lat: 19.4226, lng: -99.1232 },
      { lat: 19.4426, lng: -99.1232 },
      { lat: 19.4426, lng: -99.1432 },
    ]);
    expect(g!.centerLat).toBeCloseTo(lat, 9);
    expect(g!.centerLng).toBeCloseTo(lng, 9);
    const halfDiagonal = metres({ lat, lng }, { lat: lat - half, lng: lng - half });
    expect(halfDiagonal).toBeGreaterThan(1400); // sanity of the expectation itself: ~1.5 km
    expect(Math.abs(g!.radiusMeters - halfDiagonal) / halfDiagonal).toBeLessThan(0.01);
    expect(typeof g!.radiusMeters).toBe('number');
  });

  it('describes a circle: the given center and radius, and a 64-vertex ring at that radius', async () => {
    const { account, key } = await t.fixtures.tenant();
    const center = { lat: 19.4326, lng: -99.1332 };
    const created = await t.fixtures.geofence(account.id, 'Round', { kind: 'circle', ...center, radiusMeters: 1234.5 });
    const [g] = await list(key);
    expect(g).toMatchObject({ id: created.id, name: 'Round', centerLat: center.lat, centerLng: center.lng, radiusMeters: 1234.5, vertexCount: 64 });
    expect(g!.vertices).toHaveLength(64);
    // No closing repeat: all 64 vertices are distinct points.
    expect(new Set(g!.vertices.map((v) => `${v.lat},${v.lng}`)).size).toBe(64);
    for (const v of g!.vertices) {
      expect(Object.keys(v).sort()).toEqual(['lat', 'lng']);
      expect(Math.abs(metres(center, v) - 1234.5) / 1234.5).toBeLessThan(0.01);
    }
  });

  it('lists the vertices of the largest part of a MultiPolygon', async () => {
    const { account, key } = await t.fixtures.tenant();
    const small: Array<[number, number]> = [[10, 10], [10.002, 10], [10.002, 10.002], [10, 10.002]];
    const large: Array<[number, number]> = [[10.95, 9.95], [11.05, 9.95], [11.07, 10.02], [11, 10.08], [10.93, 10.02]];
    await t.fixtures.geofence(account.id, 'Two parts', {
      kind: 'polygon',
      // The small part first, so "the first part" and "the largest part" differ.
      geometry: { type: 'MultiPolygon', coordinates: [[ring(small)], [ring(large)]] },
    });
    const [g] = await list(key);
    expect(g!.vertexCount).toBe(5);
    expect(g!.vertices).toEqual(asVertices(large));
    // The area-weighted centroid lies almost on the large part.
    expect(g!.centerLng).toBeGreaterThan(10.9);
    expect(g!.radiusMeters).toBeGreaterThan(0);
  });

  it('does not count the vertices of a hole', async () => {
    const { account, key } = await t.fixtures.tenant();
    const outer: Array<[number, number]> = [[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]];
    const hole: Array<[number, number]> = [[-0.02, -0.02], [-0.02, 0.02], [0.02, 0.02], [0.01, 0], [0.02, -0.02]];
    await t.fixtures.geofence(account.id, 'Ring road', { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring(outer), ring(hole)] } });
    const [g] = await list(key);
    expect(g!.vertexCount).toBe(4);
    expect(g!.vertices).toEqual(asVertices(outer));
    const halfDiagonal = metres({ lat: 0, lng: 0 }, { lat: 0.1, lng: 0.1 });
    expect(Math.abs(g!.radiusMeters - halfDiagonal) / halfDiagonal).toBeLessThan(0.01);
  });

  it('shows every user of the account the same list of the key\'s mode, and never another account\'s or mode\'s', async () => {
    const account = await t.fixtures.account();
    const alice = await t.fixtures.user(account.id, 'America/Mexico_City');
    const bob = await t.fixtures.user(account.id, 'Asia/Kolkata');
    const depot = await t.fixtures.geofence(account.id, 'Depot', square(19.4, -99.1, 0.01));
    const client = await t.fixtures.geofence(account.id, 'Client', { kind: 'circle', lat: 19.5, lng: -99.2, radiusMeters: 300 });
    // The test keys' own geofence, of the same name as a live one.
    const testDepot = await t.fixtures.geofence(account.id, 'Depot', square(19.6, -99.3, 0.01), 'test');
    const foreign = await t.fixtures.tenant();
    // Same name in another account: allowed, and must not leak across.
    const foreignDepot = await t.fixtures.geofence(foreign.account.id, 'Depot', square(0, 0, 0.01));

    const keys = [
      (await t.fixtures.key(alice.id)).key,
      (await t.fixtures.key(alice.id, { mode: 'test' })).key,
      (await t.fixtures.key(bob.id)).key,
      (await t.fixtures.key(bob.id, { mode: 'test' })).key,
    ];
    const lists = [];
    for (const key of keys) lists.push(await list(key));
    expect(lists[0]!.map((g) => [g.id, g.name])).toEqual([[client.id, 'Client'], [depot.id, 'Depot']]);
    expect(lists[2]).toEqual(lists[0]);
    expect(lists[1]!.map((g) => [g.id, g.name])).toEqual([[testDepot.id, 'Depot']]);
    expect(lists[3]).toEqual(lists[1]);

    expect((await list(foreign.key)).map((g) => [g.id, g.name])).toEqual([[foreignDepot.id, 'Depot']]);
  });

  it('needs the geofences:read permission and a key', async () => {
    const { account, user } = await t.fixtures.tenant();
    await t.fixtures.geofence(account.id, 'Hidden', square(1, 1, 0.01));
    const devicesOnly = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).key;
    const geofencesOnly = (await t.fixtures.key(user.id, { permissions: ['geofences:read'] })).key;
    const denied = await t.json('/api/v1/geofences', { key: devicesOnly });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ success: false, data: null });
    expect((await t.json('/api/v1/geofences')).status).toBe(401);
    expect((await list(geofencesOnly)).map((g) => g.name)).toEqual(['Hidden']);
  });
});
