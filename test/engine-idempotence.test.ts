import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../runtime/logger.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { evaluateFixes, type FenceState } from '../domain/geofences/fence-crossings.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { evaluateDevices, type EvaluationSettings } from '../engine/workers/evaluate-devices.ts';
import { engineOutput, seedMixedFleet } from './support/mixed-fleet.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The engine's effect must be exactly once whatever the delivery: a job run twice, two workers on the
// same devices at once, a worker that dies mid-job. The reference is the pure evaluation of each
// device's fixes in the order they were committed.

const SETTINGS: EvaluationSettings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 1000, lateWindowMs: 3_600_000 };
let database: TestDatabase;
let catalog: GeofenceCatalog;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await catalog?.close();
  await database?.destroy();
});

/** What the engine must have stored: the pure evaluation, batch by batch, per device. */
function expectedEvents(accountId: number, imeiOf: Map<number, string>, nameOf: Map<number, string>, batches: StoredFix[][]) {
  const states = new Map<number, FenceState>();
  const rows: Array<{ imei: string; name: string; type: string; fix_time: Date }> = [];
  for (const batch of batches) {
    const byDevice = new Map<number, StoredFix[]>();
    for (const f of batch) byDevice.set(f.deviceId, [...(byDevice.get(f.deviceId) ?? []), f]);
    for (const [deviceId, fixes] of byDevice) {
      fixes.sort((a, b) => a.fixTime.getTime() - b.fixTime.getTime());
      const result = evaluateFixes(catalog.index(accountId, 'live'), catalog.dwellRules, states.get(deviceId) ?? { cursor: null, inside: new Int32Array(0), pending: [] },
        fixes.map((f) => ({ fixTime: f.fixTime.getTime(), valid: f.valid, latitude: f.latitude, longitude: f.longitude })));
      states.set(deviceId, result.state);
      for (const c of result.crossings) rows.push({ imei: imeiOf.get(deviceId)!, name: nameOf.get(c.geofenceId)!, type: c.type, fix_time: new Date(c.fixTime) });
    }
  }
  return rows.sort((a, b) => a.imei.localeCompare(b.imei) || a.fix_time.getTime() - b.fix_time.getTime() || a.name.localeCompare(b.name) || a.type.localeCompare(b.type));
}

describe('engine evaluation under at-least-once delivery', () => {
  it('stores each crossing once: jobs run twice, concurrently, and after a worker died mid-job', async () => {
    const fleet = await seedMixedFleet(database, 501, 12, 120);
    catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 1_000 });
    const devices = await database.db.selectFrom('devices').select(['id', 'imei']).where('account_id', '=', fleet.accountId).execute();
    const geofences = await database.db.selectFrom('geofences').select(['id', 'name']).where('account_id', '=', fleet.accountId).execute();
    const imeiOf = new Map(devices.map((d) => [d.id, d.imei]));
    const nameOf = new Map(geofences.map((g) => [g.id, g.name]));

    // Committed in two halves, as two ingest flushes; the second half holds late fixes older than the first's.
    const half = fleet.fixes.filter((_, i) => i % 120 < 60);
    const rest = fleet.fixes.filter((_, i) => i % 120 >= 60);
    await fleet.write(half);

    // A worker dies at the last step of a job, after its events, visits and outbox rows were written:
    // a constraint makes the final cursor update fail. The transaction rolls back; nothing remains.
    await sql`ALTER TABLE device_engine_states ADD CONSTRAINT dies_here CHECK (cursor_fix_time IS NULL) NOT VALID`.execute(database.db);
    await expect(evaluateDevices(database.db, catalog, fleet.deviceIds, SETTINGS)).rejects.toThrow(/dies_here/);
    await sql`ALTER TABLE device_engine_states DROP CONSTRAINT dies_here`.execute(database.db);
    expect(await engineOutput(database, fleet.accountId)).toEqual({ events: [], visits: [] });

    // The job again, twice over, and concurrently with a copy of itself on the same devices.
    await Promise.all([
      evaluateDevices(database.db, catalog, fleet.deviceIds, SETTINGS),
      evaluateDevices(database.db, catalog, [...fleet.deviceIds].reverse(), SETTINGS),
    ]);
    const again = await evaluateDevices(database.db, catalog, fleet.deviceIds, SETTINGS);
    expect(again.events).toBe(0);

    await fleet.write(rest);
    await Promise.all([
      evaluateDevices(database.db, catalog, fleet.deviceIds.slice(0, 8), SETTINGS),
      evaluateDevices(database.db, catalog, fleet.deviceIds.slice(4), SETTINGS),
    ]);
    await evaluateDevices(database.db, catalog, fleet.deviceIds, SETTINGS);

    const output = await engineOutput(database, fleet.accountId);
    const expected = expectedEvents(fleet.accountId, imeiOf, nameOf, [half, rest]);
    expect(expected.length).toBeGreaterThan(50); // the walks do cross the geofences
    expect(output.events.map((e) => ({ imei: e.imei, name: e.name, type: e.type, fix_time: e.fix_time }))).toEqual(expected);

    // Visits pair each enter with the following exit of the same geofence; no duplicates, at most one open.
    const visitsByKey = new Map<string, number>();
    for (const v of output.visits) visitsByKey.set(`${v.imei} ${v.name} ${v.entry_time.toISOString()}`, (visitsByKey.get(`${v.imei} ${v.name} ${v.entry_time.toISOString()}`) ?? 0) + 1);
    expect([...visitsByKey.values()].every((n) => n === 1)).toBe(true);
    expect(output.visits).toHaveLength(expected.filter((e) => e.type === 'enter').length);
    const logged = await database.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('type', 'like', 'vehicle.geofence.%').executeTakeFirstOrThrow();
    expect(Number(logged.n)).toBe(expected.length);
  }, 120_000);
});
