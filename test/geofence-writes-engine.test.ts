import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../cli/config.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A geofence created, reshaped, renamed and deleted through the API, and a real Teltonika tracker over
// TCP driving through it: the engine must use each change for fixes sent one second after the API
// answered. The engine reads the change log at the production default interval (on PostgreSQL a NOTIFY
// also wakes it at once), not the faster one the other engine tests use.

const IMEI = '356307042449556';
const OUT = { latitude: 19.3, longitude: -99.3 };
const A = { latitude: 19.4, longitude: -99.1 };
const B = { latitude: 19.5, longitude: -99.2 };
const C = { latitude: 19.6, longitude: -99.3 };
const around = (p: { latitude: number; longitude: number }, half = 0.003) => [
  { lat: p.latitude - half, lng: p.longitude - half },
  { lat: p.latitude - half, lng: p.longitude + half },
  { lat: p.latitude + half, lng: p.longitude + half },
  { lat: p.latitude + half, lng: p.longitude - half },
];

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
let deviceId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, { ...ENGINE_TEST_SETTINGS, geofencePollMs: loadConfig({}).engine.geofencePollMs });
  const make = fixtures(database.db);
  const tenant = await make.tenant();
  key = tenant.key;
  deviceId = (await make.device(tenant.account.id, { imei: IMEI, name: 'Follower', userIds: [tenant.user.id] })).id;
});
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

async function api(path: string, method = 'GET', body?: unknown) {
  const res = await harness.app.request(`/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The vehicle's geofence events in the event log, oldest first, as `enter Name #id`. */
async function logged(): Promise<string[]> {
  const { rows } = await sql<{ type: string; name: string; id: string }>`
    SELECT type, data->'geofence'->>'name' AS name, data->'geofence'->>'id' AS id
    FROM events WHERE device_id = ${deviceId} AND type LIKE 'vehicle.geofence.%' ORDER BY id
  `.execute(database.db);
  return rows.map((r) => `${r.type.slice('vehicle.geofence.'.length)} ${r.name} #${r.id}`);
}

async function loggedBecomes(expected: string[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await logged();
    if (JSON.stringify(now) === JSON.stringify(expected) || Date.now() > deadline) return void expect(now).toEqual(expected);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const oneSecond = () => new Promise((r) => setTimeout(r, 1_000));

describe('the engine follows geofence writes', () => {
  it('uses a created, reshaped, renamed and deleted geofence for fixes sent a second later', async () => {
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      await tracker.report(OUT);
      const created = await api('/geofences', 'POST', { name: 'Fresh', type: 'circle', center: { lat: A.latitude, lng: A.longitude }, radiusMeters: 300 });
      expect(created.status).toBe(201);
      const id = created.body.data.id as number;
      await oneSecond();
      await tracker.report(A);
      await loggedBecomes([`enter Fresh #${id}`]);

      // Reshaped away from where the vehicle stands (a circle made a polygon): its next fix there is
      // outside, so it exits; at the new place it enters.
      expect((await api(`/geofences/${id}`, 'PATCH', { type: 'polygon', vertices: around(B) })).status).toBe(200);
      await oneSecond();
      await tracker.report(A);
      await loggedBecomes([`enter Fresh #${id}`, `exit Fresh #${id}`]);
      await tracker.report(B);
      await loggedBecomes([`enter Fresh #${id}`, `exit Fresh #${id}`, `enter Fresh #${id}`]);

      // Renamed: the next crossing carries the new name.
      expect((await api(`/geofences/${id}`, 'PATCH', { name: 'Renamed' })).status).toBe(200);
      await oneSecond();
      await tracker.report(OUT);
      await loggedBecomes([`enter Fresh #${id}`, `exit Fresh #${id}`, `enter Fresh #${id}`, `exit Renamed #${id}`]);
      await tracker.report(B);
      const beforeDelete = [`enter Fresh #${id}`, `exit Fresh #${id}`, `enter Fresh #${id}`, `exit Renamed #${id}`, `enter Renamed #${id}`];
      await loggedBecomes(beforeDelete);

      // Deleted while the vehicle is inside: forgotten without an exit, and no crossing after. The
      // vehicle ends in another geofence: once that enter is logged, every fix before it was evaluated.
      const sentinel = await api('/geofences', 'POST', { name: 'Sentinel', type: 'circle', center: { lat: C.latitude, lng: C.longitude }, radiusMeters: 300 });
      expect((await api(`/geofences/${id}`, 'DELETE')).status).toBe(200);
      await oneSecond();
      await tracker.report(OUT);
      await tracker.report(B);
      await tracker.report(OUT);
      await tracker.report(C);
      await loggedBecomes([...beforeDelete, `enter Sentinel #${sentinel.body.data.id}`]);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM geofence_events WHERE geofence_id = ${id}`.execute(database.db);
      expect(rows[0]!.n).toBe(0); // its crossings went with it (the event log keeps what it logged)
      expect((await api(`/geofences/${id}`)).status).toBe(404);
    } finally {
      tracker.close();
    }
  }, 60_000);
});
