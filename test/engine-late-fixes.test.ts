import { sql, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices, type EvaluationSettings } from '../engine/workers/evaluate-devices.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures, square } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * Fixes that reach the database after newer ones of their device were evaluated: two batches of one
 * device committed out of order (two ingest processes, or a tracker resending its buffer on a new
 * connection while its live fixes already went in). The engine must not lose the crossings they hold.
 */

const SETTINGS: EvaluationSettings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, lateWindowMs: 3_600_000 };
const DEPOT = { lat: 19.4, lng: -99.1 };
const OUTSIDE = { lat: 19.5, lng: -99.3 };

let database: TestDatabase;
let catalog: GeofenceCatalog;
let write: BatchWrite;
let accountId: number;
let depotId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  write = fixBatchWriter(database);
  const make = fixtures(database.db);
  accountId = (await make.account()).id;
  depotId = (await make.geofence(accountId, 'Depot', square(DEPOT.lat, DEPOT.lng, 0.01))).id;
  catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 60_000 });
});
afterAll(async () => {
  await catalog?.close();
  await database?.destroy();
});

const T0 = Date.parse('2024-07-01T10:00:00Z');
const fix = (deviceId: number, minute: number, at: { lat: number; lng: number }): StoredFix => ({
  deviceId, fixTime: new Date(T0 + minute * 60_000), receivedAt: new Date(), valid: true, latitude: at.lat, longitude: at.lng, speedKmh: 30, attributes: {},
});

async function events(deviceId: number) {
  const rows = await database.db.selectFrom('geofence_events').select(['type', 'fix_time']).where('device_id', '=', deviceId).orderBy('fix_time').orderBy('id').execute();
  return rows.map((r) => `${r.type} ${(r.fix_time.getTime() - T0) / 60_000}`);
}
async function visits(deviceId: number) {
  const rows = await database.db.selectFrom('geofence_visits').select(['entry_time', 'exit_time']).where('device_id', '=', deviceId).orderBy('entry_time').execute();
  return rows.map((r) => `${(r.entry_time.getTime() - T0) / 60_000}-${r.exit_time ? (r.exit_time.getTime() - T0) / 60_000 : 'open'}`);
}
const counts = async (deviceId: number) =>
  database.db.selectFrom('device_engine_states').select(['late_fixes', 'late_fixes_ignored']).where('device_id', '=', deviceId).executeTakeFirstOrThrow();

describe('late fixes', () => {
  it('adds the enter and exit that only the older of two batches committed out of order holds, once', async () => {
    const device = await fixtures(database.db).device(accountId);
    // The newer batch commits first and is evaluated: outside all along.
    await write([10, 12, 14, 16, 18, 20].map((m) => fix(device.id, m, OUTSIDE)), []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await events(device.id)).toEqual([]);
    // Then the older one: the vehicle went through the depot at minutes 4 and 5.
    await write([fix(device.id, 3, OUTSIDE), fix(device.id, 4, DEPOT), fix(device.id, 5, DEPOT), fix(device.id, 6, OUTSIDE)], []);
    const outcome = await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(outcome.late).toEqual({ evaluated: 4, ignored: 0 });
    expect(await events(device.id)).toEqual(['enter 4', 'exit 6']);
    expect(await visits(device.id)).toEqual(['4-6']);
    // Logged like any event, with the time they happened.
    const logged = await sql<{ type: string; time: string }>`
      SELECT type, occurred_at AS time FROM events WHERE device_id = ${device.id} AND type LIKE 'vehicle.geofence.%' ORDER BY id`.execute(database.db);
    expect(logged.rows.map((r) => r.type)).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit']);

    // Run again, and with the same late fixes listed again (a replayed job): nothing more.
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    await sql`INSERT INTO late_fixes (device_id, fix_time) SELECT device_id, fix_time FROM positions WHERE device_id = ${device.id} AND fix_time < ${new Date(T0 + 10 * 60_000).toISOString()}::timestamptz`.execute(database.db);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await events(device.id)).toEqual(['enter 4', 'exit 6']);
    expect(await visits(device.id)).toEqual(['4-6']);
    expect(await counts(device.id)).toEqual({ late_fixes: 8, late_fixes_ignored: 0 });
  });

  it('splits the visit of a vehicle that late fixes show left the geofence and came back', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([0, 2, 10, 12].map((m) => fix(device.id, m, DEPOT)), []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await visits(device.id)).toEqual(['0-open']);
    await write([fix(device.id, 5, OUTSIDE), fix(device.id, 6, OUTSIDE)], []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await events(device.id)).toEqual(['enter 0', 'exit 5', 'enter 10']);
    expect(await visits(device.id)).toEqual(['0-5', '10-open']);
  });

  it('moves no recorded crossing: a late fix showing the vehicle entered earlier than recorded adds nothing', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, 0, OUTSIDE), fix(device.id, 10, DEPOT)], []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    await write([fix(device.id, 5, DEPOT)], []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await events(device.id)).toEqual(['enter 10']);
    expect(await counts(device.id)).toEqual({ late_fixes: 1, late_fixes_ignored: 0 });
  });

  it('only counts a late fix further behind the cursor than the window', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, 0, OUTSIDE), fix(device.id, 180, OUTSIDE)], []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    // Two hours behind the cursor, with a one-hour window: stored in the history, not evaluated.
    await write([fix(device.id, 59, OUTSIDE), fix(device.id, 60, DEPOT), fix(device.id, 61, OUTSIDE)], []);
    const outcome = await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(outcome.late).toEqual({ evaluated: 0, ignored: 3 });
    expect(await events(device.id)).toEqual([]);
    expect(await counts(device.id)).toEqual({ late_fixes: 0, late_fixes_ignored: 3 });
    const listed = await database.db.selectFrom('late_fixes').select('fix_time').where('device_id', '=', device.id).execute();
    expect(listed).toEqual([]);
  });
});

/**
 * Pauses the engine's transaction right after its read of the fixes after the cursor (the query that
 * reads `positions` after `cursor_fix_time`), so a test can commit a batch on another connection
 * exactly there.
 */
function pauseAfterInOrderRead(whilePaused: () => Promise<void>): KyselyPlugin {
  const reads = new Set<unknown>();
  let done = false;
  return {
    transformQuery(args) {
      const node = args.node as { kind: string; sqlFragments?: readonly string[] };
      if (!done && node.kind === 'RawNode' && node.sqlFragments?.join('').includes('WHERE device_id = s.device_id AND fix_time > coalesce(s.cursor_fix_time')) reads.add(args.queryId);
      return args.node;
    },
    async transformResult(args) {
      if (reads.has(args.queryId) && !done) {
        done = true;
        await whilePaused();
      }
      return args.result;
    },
  };
}

// On the embedded database a transaction runs alone, so no batch can commit in the middle of the engine's.
describe.skipIf(!process.env.DATABASE_URL)('late fixes committed while the engine evaluates (PostgreSQL)', () => {
  it('evaluates a late fix committed after the in-order read that the new cursor passed', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, 0, OUTSIDE)], []);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    // The tracker unloads its buffer in several batches, out of order: the live fixes (10..20) and a first
    // buffered one (8) are in; the engine takes the device while a second buffered batch is committing.
    await write([10, 12, 14, 16, 18, 20].map((m) => fix(device.id, m, OUTSIDE)), []);
    await write([fix(device.id, 8, OUTSIDE)], []);
    const paused = database.db.withPlugin(
      pauseAfterInOrderRead(() => write([fix(device.id, 3, OUTSIDE), fix(device.id, 4, DEPOT), fix(device.id, 5, DEPOT), fix(device.id, 6, OUTSIDE)], [])),
    );
    await evaluateDevices(paused, catalog, [device.id], SETTINGS);
    await evaluateDevices(database.db, catalog, [device.id], SETTINGS);
    expect(await events(device.id)).toEqual(['enter 4', 'exit 6']);
    expect(await visits(device.id)).toEqual(['4-6']);
    expect(await counts(device.id)).toEqual({ late_fixes: 4, late_fixes_ignored: 0 });
  });
});
