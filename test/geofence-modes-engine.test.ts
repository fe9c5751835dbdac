import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import type { DeviceMode } from '../db/schema.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices, type EvaluationSettings } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures, square } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The engine evaluates a test vehicle against its account's test geofences only, and a live vehicle
// against the live ones: two geofences of one account on the same ground, one per mode, and a vehicle of
// each mode driving through both. Crossings, visits, trips' places and late fixes all follow the mode.

const SETTINGS: EvaluationSettings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, lateWindowMs: 3_600_000 };
const DEPOT = { lat: 19.4, lng: -99.1 };
const AWAY = { lat: 19.5, lng: -99.3 };
const T0 = Date.parse('2024-07-01T10:00:00Z');

let database: TestDatabase;
let catalog: GeofenceCatalog;
let write: BatchWrite;

beforeAll(async () => {
  database = await openTestDatabase();
  write = fixBatchWriter(database);
  catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 50 });
});
afterAll(async () => {
  await catalog?.close();
  await database?.destroy();
});

const fix = (deviceId: number, minute: number, at: { lat: number; lng: number }, speedKmh = 30): StoredFix => ({
  deviceId, fixTime: new Date(T0 + minute * 60_000), receivedAt: new Date(), valid: true, latitude: at.lat, longitude: at.lng, speedKmh, ignition: true, attributes: {},
});

const inside = (accountId: number, mode: DeviceMode, at: { lat: number; lng: number }) => {
  const out = new Int32Array(16);
  const index = catalog.index(accountId, mode);
  return index ? [...out.subarray(0, index.query(at.lat, at.lng, out))] : [];
};

async function within(ms: number, check: () => boolean): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One account with a live and a test geofence on the same ground, and a vehicle of each mode. */
async function scene() {
  const make = fixtures(database.db);
  const account = await make.account();
  const live = await make.geofence(account.id, 'Live depot', square(DEPOT.lat, DEPOT.lng, 0.01));
  const test = await make.geofence(account.id, 'Test depot', square(DEPOT.lat, DEPOT.lng, 0.01), 'test');
  const liveTruck = await make.device(account.id, { name: 'Live truck' });
  const testTruck = await make.device(account.id, { name: 'Test truck', mode: 'test' });
  await within(5_000, () => catalog.index(account.id, 'live')?.has(live.id) === true && catalog.index(account.id, 'test')?.has(test.id) === true);
  return { account, live, test, liveTruck, testTruck };
}

const crossings = async (deviceId: number) =>
  (await database.db.selectFrom('geofence_events').select(['geofence_id', 'type']).where('device_id', '=', deviceId).orderBy('fix_time').orderBy('id').execute())
    .map((r) => `${r.type} ${r.geofence_id}`);

describe('the geofence catalog keeps each mode apart', () => {
  it('indexes an account\'s live and test geofences separately, and follows a geofence moved to the other mode by hand', async () => {
    const { account, live, test } = await scene();
    expect(inside(account.id, 'live', DEPOT)).toEqual([live.id]);
    expect(inside(account.id, 'test', DEPOT)).toEqual([test.id]);

    await sql`UPDATE geofences SET mode = 'test' WHERE id = ${live.id}`.execute(database.db);
    await within(5_000, () => inside(account.id, 'live', DEPOT).length === 0);
    expect(inside(account.id, 'test', DEPOT)).toEqual([test.id, live.id].sort((a, b) => a - b));

    await database.db.deleteFrom('geofences').where('id', '=', live.id).execute();
    await within(5_000, () => inside(account.id, 'test', DEPOT).length === 1);
  });
});

describe('the engine evaluates each vehicle against the geofences of its own mode', () => {
  it('records a test vehicle\'s crossings, visits and trip places with the test geofence, a live vehicle\'s with the live one', async () => {
    const { live, test, liveTruck, testTruck } = await scene();
    for (const truck of [liveTruck, testTruck]) {
      // Parked at the depot, then a drive away of 15 minutes, then parked there.
      const fixes = [
        ...[0, 2, 4, 6, 8, 10].map((m) => fix(truck.id, m, DEPOT, 0)),
        ...Array.from({ length: 16 }, (_, i) => fix(truck.id, 11 + i, { lat: DEPOT.lat + ((AWAY.lat - DEPOT.lat) * (i + 1)) / 16, lng: DEPOT.lng + ((AWAY.lng - DEPOT.lng) * (i + 1)) / 16 }, 40)),
        ...[28, 30, 32, 34, 36, 38, 40].map((m) => fix(truck.id, m, AWAY, 0)),
      ];
      await write(fixes, []);
    }
    await evaluateDevices(database.db, catalog, [liveTruck.id, testTruck.id], SETTINGS);

    expect(await crossings(liveTruck.id)).toEqual([`enter ${live.id}`, `exit ${live.id}`]);
    expect(await crossings(testTruck.id)).toEqual([`enter ${test.id}`, `exit ${test.id}`]);
    const visited = async (deviceId: number) =>
      (await database.db.selectFrom('geofence_visits').select('geofence_id').where('device_id', '=', deviceId).execute()).map((v) => v.geofence_id);
    expect(await visited(liveTruck.id)).toEqual([live.id]);
    expect(await visited(testTruck.id)).toEqual([test.id]);
    const logged = await sql<{ device_id: number; geofence: string }>`
      SELECT device_id, data->'geofence'->>'id' AS geofence FROM events WHERE device_id IN (${liveTruck.id}, ${testTruck.id}) AND type LIKE 'vehicle.geofence.%' ORDER BY id`.execute(database.db);
    expect(logged.rows.filter((r) => r.device_id === testTruck.id).map((r) => Number(r.geofence))).toEqual([test.id, test.id]);
    expect(logged.rows.filter((r) => r.device_id === liveTruck.id).map((r) => Number(r.geofence))).toEqual([live.id, live.id]);

    // Where a trip began is named after the geofence of the vehicle's mode.
    const started = async (deviceId: number) =>
      (await database.db.selectFrom('trips').select('start_geofence').where('device_id', '=', deviceId).execute()).map((r) => r.start_geofence);
    expect(await started(liveTruck.id)).toEqual(['Live depot']);
    expect(await started(testTruck.id)).toEqual(['Test depot']);
  });

  it('evaluates a test vehicle\'s late fixes against the test geofences only', async () => {
    const { account, test, testTruck } = await scene();
    // A live geofence where the test one is not: a late fix there must cross nothing.
    const liveOnly = await fixtures(database.db).geofence(account.id, 'Live only', square(AWAY.lat, AWAY.lng, 0.01));
    await within(5_000, () => catalog.index(account.id, 'live')?.has(liveOnly.id) === true);
    const elsewhere = { lat: 19.6, lng: -99.5 };
    await write([60, 62, 64].map((m) => fix(testTruck.id, m, elsewhere)), []);
    await evaluateDevices(database.db, catalog, [testTruck.id], SETTINGS);
    // Older fixes arrive after: through the test depot and through the live-only geofence.
    await write([fix(testTruck.id, 50, elsewhere), fix(testTruck.id, 51, DEPOT), fix(testTruck.id, 52, elsewhere), fix(testTruck.id, 53, AWAY), fix(testTruck.id, 54, elsewhere)], []);
    const outcome = await evaluateDevices(database.db, catalog, [testTruck.id], SETTINGS);
    expect(outcome.late.evaluated).toBe(5);
    expect(await crossings(testTruck.id)).toEqual([`enter ${test.id}`, `exit ${test.id}`]);
  });
});
