import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../db/event-log.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';
import { runFleet } from './support/fleet-command.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// Vehicle groups through the real HTTP app: what a group's users see follows its membership at once
// (the fleet-wide reads served from memory included), the direct grants stay, and the group API
// itself (names unique per account, members checked against the account, audited).

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const ADMIN = ['*', 'users:read', 'users:write', 'audit:read'];
const GROUPS = '/api/v1/groups';

async function fleet() {
  const account = await t.fixtures.account();
  const admin = await t.fixtures.user(account.id);
  const adminKey = (await t.fixtures.key(admin.id, { permissions: ADMIN })).key;
  const driver = await t.fixtures.user(account.id);
  const driverKey = (await t.fixtures.key(driver.id)).key;
  const other = await t.fixtures.user(account.id);
  const otherKey = (await t.fixtures.key(other.id)).key;
  const vehicles = [];
  for (const name of ['Alpha', 'Bravo', 'Charlie']) {
    const device = await t.fixtures.device(account.id, { name, userIds: [admin.id] });
    await t.fixtures.fix(device.id, { fixTime: new Date(Date.now() - 60_000), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 0, ignition: true });
    await appendEvents(t.database.db, [{
      type: 'vehicle.ignition.on', occurredAt: new Date(Date.now() - 60_000), deviceId: device.id,
      position: { lat: 19.4, lng: -99.1, speedKmh: 0, heading: null, fixTime: new Date(Date.now() - 60_000) }, dedupeKey: `groups:${device.id}`,
    }]);
    vehicles.push(device);
  }
  return { account, admin, adminKey, driver, driverKey, other, otherKey, vehicles };
}

/** The IMEIs a key sees in /devices/status, /vehicles and /events, each sorted. */
async function seen(key: string) {
  const status = await t.json('/api/v1/devices/status', { key });
  const vehicles = await t.json('/api/v1/vehicles?limit=500', { key });
  const events = await t.json('/api/v1/events?types=vehicle.ignition.on&limit=100', { key });
  expect([status.status, vehicles.status, events.status]).toEqual([200, 200, 200]);
  return {
    status: status.body.data.map((d: any) => d.deviceId).sort(),
    vehicles: vehicles.body.data.map((v: any) => v.id).sort(),
    events: events.body.data.map((e: any) => (e.data ?? e).vehicle.id).sort(),
  };
}
const all = (imeis: string[]) => ({ status: [...imeis].sort(), vehicles: [...imeis].sort(), events: [...imeis].sort() });

describe('vehicle groups', () => {
  it('a vehicle added to a group shows at once to its users in status, vehicles and events, and goes when removed', async () => {
    const f = await fleet();
    const [a, b, c] = f.vehicles;
    expect(await seen(f.driverKey)).toEqual(all([]));
    // Prime the fleet-wide reads served from memory, so a stale copy would show.
    expect(await seen(f.otherKey)).toEqual(all([]));

    const created = await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: ' North ', vehicle_ids: [a!.imei], user_ids: [f.driver.id] } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'North', vehicle_ids: [a!.imei], user_ids: [f.driver.id] });
    const groupId = created.body.data.id;
    expect(await seen(f.driverKey)).toEqual(all([a!.imei]));
    expect(await seen(f.otherKey)).toEqual(all([]));

    const added = await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey, method: 'PATCH', body: { vehicle_ids: [a!.imei, b!.imei] } });
    expect(added.status).toBe(200);
    expect(added.body.data.vehicle_ids).toEqual([a!.imei, b!.imei].sort());
    expect(await seen(f.driverKey)).toEqual(all([a!.imei, b!.imei]));
    expect((await t.json(`/api/v1/vehicles/${b!.imei}`, { key: f.driverKey })).body.data.groups).toEqual([{ id: groupId, name: 'North' }]);
    expect((await t.json(`/api/v1/vehicles/${c!.imei}`, { key: f.driverKey })).status).toBe(404);

    // A direct grant and the group together: the vehicle once, and it stays when the group lets go.
    const granted = await t.json(`/api/v1/vehicles/${a!.imei}`, { key: f.adminKey, method: 'PATCH', body: { user_ids: [f.driver.id] } });
    expect(granted.body.data).toMatchObject({ user_ids: [f.admin.id, f.driver.id], groups: [{ id: groupId, name: 'North' }] });
    expect(await seen(f.driverKey)).toEqual(all([a!.imei, b!.imei]));

    const removed = await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey, method: 'PATCH', body: { vehicle_ids: [] } });
    expect(removed.body.data.vehicle_ids).toEqual([]);
    expect(await seen(f.driverKey)).toEqual(all([a!.imei]));

    await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey, method: 'PATCH', body: { vehicle_ids: [b!.imei, c!.imei] } });
    expect(await seen(f.driverKey)).toEqual(all([a!.imei, b!.imei, c!.imei]));
    const ungranted = await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey, method: 'PATCH', body: { user_ids: [f.other.id] } });
    expect(ungranted.body.data.user_ids).toEqual([f.other.id]);
    expect(await seen(f.driverKey)).toEqual(all([a!.imei]));
    expect(await seen(f.otherKey)).toEqual(all([b!.imei, c!.imei]));

    expect((await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey, method: 'DELETE' })).body).toMatchObject({ data: { id: groupId, deleted: true } });
    expect(await seen(f.otherKey)).toEqual(all([]));
    expect((await t.json(`${GROUPS}/${groupId}`, { key: f.adminKey })).status).toBe(404);

    const audit = await t.json('/api/v1/audit?action=vehicle_group.*', { key: f.adminKey });
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    expect(audit.body.data.map((e: any) => e.action)).toEqual([
      'vehicle_group.deleted', 'vehicle_group.updated', 'vehicle_group.updated', 'vehicle_group.updated', 'vehicle_group.updated', 'vehicle_group.created',
    ]);
  });

  it('lists and reads groups; names are unique per account; members must belong to the account; users:* guard it', async () => {
    const f = await fleet();
    const g = await fleet();
    const first = await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: 'South' } });
    expect(first.status).toBe(201);
    expect((await t.json(GROUPS, { key: g.adminKey, method: 'POST', body: { name: 'South' } })).status).toBe(201);
    const dup = await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: 'South' } });
    expectErrorEnvelope(dup.body);
    expect(dup.status).toBe(409);
    await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: 'East', user_ids: [f.driver.id] } });
    const list = await t.json(GROUPS, { key: f.adminKey });
    expect(list.body.data.map((x: any) => x.name)).toEqual(['East', 'South']);

    const foreignVehicle = await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: 'X', vehicle_ids: [g.vehicles[0]!.imei] } });
    expect(foreignVehicle.status).toBe(400);
    expect(foreignVehicle.body.error).toMatch(/vehicle_ids/);
    const foreignUser = await t.json(`${GROUPS}/${first.body.data.id}`, { key: f.adminKey, method: 'PATCH', body: { user_ids: [g.driver.id] } });
    expect(foreignUser.status).toBe(400);
    expect((await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: '' } })).status).toBe(400);
    expect((await t.json(GROUPS, { key: f.adminKey, method: 'POST', body: { name: 'Y', extra: 1 } })).status).toBe(400);
    expect((await t.json(`${GROUPS}/abc`, { key: f.adminKey })).status).toBe(400);
    // Another account's group is not found.
    expect((await t.json(`${GROUPS}/${first.body.data.id}`, { key: g.adminKey })).status).toBe(404);
    expect((await t.json(`${GROUPS}/${first.body.data.id}`, { key: g.adminKey, method: 'DELETE' })).status).toBe(404);
    // '*' does not cover the named-only users:read / users:write.
    expect((await t.json(GROUPS, { key: f.driverKey })).status).toBe(403);
    expect((await t.json(GROUPS, { key: f.driverKey, method: 'POST', body: { name: 'Z' } })).status).toBe(403);
  });
});

describe('fleet group', () => {
  it('creates a group, adds a vehicle and grants it, and the user sees the vehicle through the API', async () => {
    const f = await fleet();
    const env = t.database.env;
    const created = await runFleet(['group', 'create', '--account', String(f.account.id), '--name', 'Yard', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const group = JSON.parse(created.stdout);
    const added = await runFleet(['group', 'add-vehicle', '--group', String(group.id), '--imei', f.vehicles[1]!.imei, '--json'], env);
    expect(added.code, added.stderr).toBe(0);
    const granted = await runFleet(['group', 'grant', '--group', String(group.id), '--user', f.driver.email, '--json'], env);
    expect(granted.code, granted.stderr).toBe(0);
    expect(JSON.parse(granted.stdout)).toMatchObject({ name: 'Yard', vehicleIds: [f.vehicles[1]!.imei], userIds: [f.driver.id] });
    expect(await seen(f.driverKey)).toEqual(all([f.vehicles[1]!.imei]));
    const unknown = await runFleet(['group', 'add-vehicle', '--group', String(group.id), '--imei', '000000000000000'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/vehicle_ids: no live vehicle/);
  }, 120_000);
});
