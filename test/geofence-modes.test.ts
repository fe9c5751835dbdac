import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet } from './support/fleet-command.ts';
import { recordCrossingsThroughEngine } from './support/engine-crossings.ts';
import { square } from '../simulators/fleet-records.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// Test and live keys are separate for geofences as for every other resource: a geofence belongs to an
// account in one mode, and the other mode's keys neither see nor change it (404, as another account's).
// The engine side (a test vehicle evaluated against test geofences only) is test/geofence-modes-engine.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** One user of a new account with a live and a test key. */
async function account() {
  const { account, user, key: live } = await t.fixtures.tenant();
  const test = (await t.fixtures.key(user.id, { mode: 'test' })).key;
  return { account, user, live, test };
}

const circle = (name: string, lat = 19.4, lng = -99.1) => ({ name, type: 'circle', center: { lat, lng }, radiusMeters: 250 });
const stored = (id: number) => t.database.db.selectFrom('geofences').selectAll().where('id', '=', id).executeTakeFirst();

describe('geofences of the other mode', () => {
  it('a test key cannot rename, reshape or delete a live geofence: 404, and the geofence is unchanged', async () => {
    const { live, test } = await account();
    const created = await t.json('/api/v1/geofences', { key: live, method: 'POST', body: circle('Depot') });
    expect(created.status).toBe(201);
    const id = created.body.data.id as number;
    const before = await stored(id);

    const renamed = await t.json(`/api/v1/geofences/${id}`, { key: test, method: 'PATCH', body: { name: 'Renamed by a test key' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(404);
    expect(renamed.body.error).toBe(`Geofence not found: ${id}`);
    const reshaped = await t.json(`/api/v1/geofences/${id}`, { key: test, method: 'PATCH', body: { type: 'circle', center: { lat: 1, lng: 1 }, radiusMeters: 10 } });
    expect(reshaped.status).toBe(404);
    const deleted = await t.json(`/api/v1/geofences/${id}`, { key: test, method: 'DELETE' });
    expect(deleted.status).toBe(404);
    expect(deleted.body.error).toBe(`Geofence not found: ${id}`);

    expect(await stored(id)).toEqual(before);
    expect((await t.json(`/api/v1/geofences/${id}`, { key: live })).body.data.name).toBe('Depot');
  });

  it('a live key cannot read, change or delete a test geofence, and each mode lists only its own', async () => {
    const { live, test } = await account();
    const testFence = (await t.json('/api/v1/geofences', { key: test, method: 'POST', body: circle('Test yard', 19.5, -99.2) })).body.data;
    const liveFence = (await t.json('/api/v1/geofences', { key: live, method: 'POST', body: circle('Live yard') })).body.data;

    expect((await t.json(`/api/v1/geofences/${testFence.id}`, { key: live })).status).toBe(404);
    expect((await t.json(`/api/v1/geofences/${liveFence.id}`, { key: test })).status).toBe(404);
    expect((await t.json(`/api/v1/geofences/${testFence.id}`, { key: live, method: 'PATCH', body: { exitDwellSeconds: 60 } })).status).toBe(404);
    expect((await t.json(`/api/v1/geofences/${testFence.id}`, { key: live, method: 'DELETE' })).status).toBe(404);
    expect((await stored(testFence.id))?.exit_dwell_s).toBe(0);

    expect((await t.json('/api/v1/geofences', { key: live })).body.data.map((g: { name: string }) => g.name)).toEqual(['Live yard']);
    expect((await t.json('/api/v1/geofences', { key: test })).body.data.map((g: { name: string }) => g.name)).toEqual(['Test yard']);
    expect((await t.json(`/api/v1/geofences/${testFence.id}`, { key: test })).body.data).toEqual(testFence);
  });

  it('names are unique within an account and mode: the other mode may use the same name, and a clash names no other mode', async () => {
    const { live, test } = await account();
    const liveDepot = await t.json('/api/v1/geofences', { key: live, method: 'POST', body: circle('Depot') });
    const testDepot = await t.json('/api/v1/geofences', { key: test, method: 'POST', body: circle('Depot', 19.6, -99.3) });
    expect(testDepot.status, JSON.stringify(testDepot.body)).toBe(201);
    expect(testDepot.body.data.id).not.toBe(liveDepot.body.data.id);

    const again = await t.json('/api/v1/geofences', { key: test, method: 'POST', body: circle('Depot') });
    expect(again.status).toBe(409);
    // A rename onto a name of the same mode clashes; onto the other mode's name it does not.
    const other = (await t.json('/api/v1/geofences', { key: test, method: 'POST', body: circle('Yard') })).body.data;
    expect((await t.json(`/api/v1/geofences/${other.id}`, { key: test, method: 'PATCH', body: { name: 'Depot' } })).status).toBe(409);
    await t.json('/api/v1/geofences', { key: live, method: 'POST', body: circle('Gate') });
    expect((await t.json(`/api/v1/geofences/${other.id}`, { key: test, method: 'PATCH', body: { name: 'Gate' } })).status).toBe(200);
  });

  it('a travel names only geofences of its own mode', async () => {
    const { account: acct, user, live, test } = await account();
    await t.fixtures.device(acct.id, { name: 'Test truck', mode: 'test', userIds: [user.id] });
    await t.fixtures.device(acct.id, { name: 'Live truck', userIds: [user.id] });
    await t.fixtures.geofence(acct.id, 'Live depot', square(19.4, -99.1, 0.01));
    await t.fixtures.geofence(acct.id, 'Test depot', square(19.5, -99.2, 0.01), 'test');
    const travel = (vehicle: string, geofence: string) => ({
      vehicle, startTime: '01/05/2030 08:00', waypoints: [{ geofence, expectedArrival: '01/05/2030 09:00' }],
    });

    const crossed = await t.json('/api/v1/travels', { key: test, method: 'POST', body: travel('Test truck', 'Live depot') });
    expect(crossed.status).toBe(400);
    expect(crossed.body.error).toBe('Geofence not found');
    expect((await t.json('/api/v1/travels', { key: live, method: 'POST', body: travel('Live truck', 'Test depot') })).body.error).toBe('Geofence not found');

    const own = await t.json('/api/v1/travels', { key: test, method: 'POST', body: travel('Test truck', 'Test depot') });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.data.waypoints.map((w: { geofence: string }) => w.geofence)).toEqual(['Current position', 'Test depot']);
  });

  it('the geofence report of a key shows only its mode\'s geofences and answers 404 for the other mode\'s', async () => {
    const { account: acct, live, test } = await account();
    const liveTruck = await t.fixtures.device(acct.id, { name: 'Live truck' });
    const testTruck = await t.fixtures.device(acct.id, { name: 'Test truck', mode: 'test' });
    const liveGate = await t.fixtures.geofence(acct.id, 'Live gate', square(19.4, -99.1, 0.01));
    const testGate = await t.fixtures.geofence(acct.id, 'Test gate', square(19.6, -99.3, 0.01), 'test');
    await recordCrossingsThroughEngine(t.database, [
      { deviceId: liveTruck.id, geofenceId: liveGate.id, type: 'enter', at: new Date('2024-05-01T15:00:00Z') },
      { deviceId: testTruck.id, geofenceId: testGate.id, type: 'enter', at: new Date('2024-05-01T16:00:00Z') },
    ]);
    const report = (key: string, extra: Record<string, string> = {}) =>
      t.json(`/api/v1/reports/geofences?${new URLSearchParams({ from: '2024-05-01', to: '2024-05-01', ...extra })}`, { key });

    const testReport = await report(test);
    expect(testReport.body.data.summary.map((s: { geofenceName: string }) => s.geofenceName)).toEqual(['Test gate']);
    expect((await report(live)).body.data.summary.map((s: { geofenceName: string }) => s.geofenceName)).toEqual(['Live gate']);
    const other = await report(test, { geofenceIds: String(liveGate.id) });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe(`Geofence not found: ${liveGate.id}`);
    expect((await report(live, { geofenceIds: String(testGate.id) })).status).toBe(404);
    expect((await report(test, { geofenceIds: String(testGate.id) })).status).toBe(200);
  });
});

describe('data written before geofences had a mode', () => {
  it('a live geofence still waited for by an old travel of a test vehicle is not deleted, and the refusal names no travel of the other mode', async () => {
    const { account: acct, user, live } = await account();
    const testTruck = await t.fixtures.device(acct.id, { name: 'Test truck', mode: 'test', userIds: [user.id] });
    const depot = await t.fixtures.geofence(acct.id, 'Old depot', square(19.4, -99.1, 0.01));
    // What a test key could make before: a test vehicle's travel through the account's (now live) geofence.
    const travel = await t.database.db.insertInto('travels')
      .values({ account_id: acct.id, device_id: testTruck.id, created_by_user_id: user.id, start_time: new Date(Date.now() + 86_400_000) })
      .returning('id').executeTakeFirstOrThrow();
    await t.database.db.insertInto('travel_waypoints').values([
      { travel_id: travel.id, seq: 1, geofence_id: null, geofence_name: 'Current position', expected_arrival: new Date(Date.now() + 86_400_000) },
      { travel_id: travel.id, seq: 2, geofence_id: depot.id, geofence_name: 'Old depot', expected_arrival: new Date(Date.now() + 90_000_000) },
    ]).execute();

    const refused = await t.json(`/api/v1/geofences/${depot.id}`, { key: live, method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(`geofence ${depot.id} is a pending waypoint of an active travel; cancel the travel first`);
    expect(await stored(depot.id)).toBeDefined();
  });
});

describe('fleet geofence import --mode', () => {
  it('imports into the mode asked for, live by default, and refuses any other mode', async () => {
    const { account: acct, live, test } = await account();
    const dir = mkdtempSync(join(tmpdir(), 'fleetcore-geofence-modes-'));
    try {
      const file = join(dir, 'depots.geojson');
      writeFileSync(file, JSON.stringify({
        type: 'FeatureCollection',
        features: [{ type: 'Feature', properties: { name: 'Depot', radius: 200 }, geometry: { type: 'Point', coordinates: [-99.1, 19.4] } }],
      }));
      const accountArg = String(acct.id);
      const [asTest, asDefault, wrong] = await Promise.all([
        runFleet(['geofence', 'import', '--account', accountArg, '--mode', 'test', file, '--json'], t.database.env),
        runFleet(['geofence', 'import', '--account', accountArg, file, '--json'], t.database.env),
        runFleet(['geofence', 'import', '--account', accountArg, '--mode', 'sandbox', file], t.database.env),
      ]);
      expect(asTest.code, asTest.stderr).toBe(0);
      expect(asDefault.code, asDefault.stderr).toBe(0);
      expect(JSON.parse(asTest.stdout)).toEqual([expect.objectContaining({ name: 'Depot', mode: 'test' })]);
      expect(JSON.parse(asDefault.stdout)).toEqual([expect.objectContaining({ name: 'Depot', mode: 'live' })]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('--mode must be live or test, got "sandbox"');

      const names = async (key: string) => (await t.json('/api/v1/geofences', { key })).body.data.map((g: { id: number }) => g.id);
      expect(await names(test)).toEqual([JSON.parse(asTest.stdout)[0].id]);
      expect(await names(live)).toEqual([JSON.parse(asDefault.stdout)[0].id]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
