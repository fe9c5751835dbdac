import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineFixOf, fixesAfterCursors } from '../db/engine-states.ts';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { CommittedFixes } from '../engine/committed-fixes.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices, type EvaluationSettings } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures, square } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * The engine in the process that committed a batch takes its fixes from memory instead of reading them
 * back: it must read them exactly as the database would, and read the database whenever memory does
 * not hold every fix after the cursor (another process's, or one it was never told of).
 */

const SETTINGS: EvaluationSettings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, lateWindowMs: 3_600_000 };
const DEPOT = { lat: 19.4, lng: -99.1 };
const OUTSIDE = { lat: 19.5, lng: -99.3 };
const T0 = Date.parse('2024-07-01T10:00:00Z');

let database: TestDatabase;
let catalog: GeofenceCatalog;
let write: BatchWrite;
let accountId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  write = fixBatchWriter(database);
  const make = fixtures(database.db);
  accountId = (await make.account()).id;
  await make.geofence(accountId, 'Depot', square(DEPOT.lat, DEPOT.lng, 0.01));
  catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 60_000 });
});
afterAll(async () => {
  await catalog?.close();
  await database?.destroy();
});

const fix = (deviceId: number, minute: number, where: { lat: number; lng: number }, extra: Partial<StoredFix> = {}): StoredFix => ({
  deviceId, fixTime: new Date(T0 + minute * 60_000), receivedAt: new Date(), valid: true, latitude: where.lat, longitude: where.lng, speedKmh: 30,
  attributes: {}, ...extra,
});

async function events(deviceId: number) {
  const rows = await database.db.selectFrom('geofence_events').select(['type', 'fix_time']).where('device_id', '=', deviceId).orderBy('fix_time').execute();
  return rows.map((r) => `${r.type} ${(r.fix_time.getTime() - T0) / 60_000}`);
}

describe('fixes committed in this process', () => {
  it('are read from memory as the database reads them back', async () => {
    const device = await fixtures(database.db).device(accountId);
    const fixes = [
      fix(device.id, 1, OUTSIDE, { attributes: { alarm: 'sos', odometer: 12_345.5, fuel: 55.5, driverUniqueId: 'A1B2' } }),
      fix(device.id, 2, OUTSIDE, { speedKmh: Number.NaN, heading: 270, ignition: true, attributes: { odometer: '99', driverUniqueId: null, driverLicense: 'L-7' } }),
      fix(device.id, 3, DEPOT, { valid: false, heading: Number.POSITIVE_INFINITY, attributes: { fuelVolume: Number.POSITIVE_INFINITY, fuel: '40' } }),
      fix(device.id, 4, DEPOT, { ignition: false, attributes: { fuelVolume: 61, alarm: null } }),
    ];
    await write(fixes, []);
    await sql`INSERT INTO device_engine_states (device_id) VALUES (${device.id}) ON CONFLICT DO NOTHING`.execute(database.db);
    const readBack = await fixesAfterCursors(database.db, [device.id], 100);
    expect(fixes.map(engineFixOf)).toEqual(readBack);
    // A value the database would spell otherwise is not taken from memory.
    expect(engineFixOf(fix(device.id, 5, DEPOT, { attributes: { alarm: 3 } }))).toBeUndefined();
    expect(engineFixOf(fix(device.id, 5, DEPOT, { attributes: { driverLicense: { id: 1 } } }))).toBeUndefined();
  });

  it('are taken from memory when the database holds as many after the cursor', async () => {
    const device = await fixtures(database.db).device(accountId);
    const committed = new CommittedFixes();
    const stored = [fix(device.id, 0, OUTSIDE), fix(device.id, 1, OUTSIDE), fix(device.id, 2, OUTSIDE)];
    await write(stored, []);
    // Memory's copy of minute 1 says the depot: only a step that read memory finds the vehicle there.
    committed.add([stored[0]!, fix(device.id, 1, DEPOT), stored[2]!]);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS, committed);
    expect(await events(device.id)).toEqual(['enter 1', 'exit 2']);
    expect(committed.size).toBe(0);
  });

  it('are read from the database when memory misses one of them', async () => {
    const device = await fixtures(database.db).device(accountId);
    const committed = new CommittedFixes();
    const fixes = [fix(device.id, 0, OUTSIDE), fix(device.id, 4, DEPOT), fix(device.id, 6, OUTSIDE)];
    await write(fixes, []);
    // Minute 4 was committed by another process: this one heard of minutes 0 and 6 only.
    committed.add([fixes[0]!, fixes[2]!]);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS, committed);
    expect(await events(device.id)).toEqual(['enter 4', 'exit 6']);

    // Later fixes, all heard of, after a cursor the database moved: memory again, and the same events as without it.
    const later = [fix(device.id, 8, DEPOT), fix(device.id, 9, OUTSIDE)];
    await write(later, []);
    committed.add(later);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS, committed);
    expect(await events(device.id)).toEqual(['enter 4', 'exit 6', 'enter 8', 'exit 9']);
    expect(committed.size).toBe(0);
  });
});
