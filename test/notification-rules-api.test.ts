import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { square } from '../simulators/fleet-records.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// Notification rules through the real HTTP app: what a rule may name (event kinds, the account's
// groups, geofences, vehicles and current users, per mode), its answers, its scope (account and
// mode), who may read and write it, the audit log, and its delivery log.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const RULES = '/api/v1/notification-rules';

/** An account with an owner (key holding * and audit:read), a viewer, a vehicle, a geofence and a group, in live mode, and a test-mode vehicle. */
async function account() {
  const acct = await t.fixtures.account();
  const owner = await t.fixtures.user(acct.id, 'America/Mexico_City');
  const key = (await t.fixtures.key(owner.id, { permissions: ['*', 'audit:read', 'users:write'] })).key;
  const testKey = (await t.fixtures.key(owner.id, { mode: 'test' })).key;
  const viewer = await t.fixtures.user(acct.id, 'Europe/Madrid');
  await t.database.db.updateTable('users').set({ role: 'viewer', name: 'Vera Viewer' }).where('id', '=', viewer.id).execute();
  const viewerKey = (await t.fixtures.key(viewer.id)).key;
  const vehicle = await t.fixtures.device(acct.id, { userIds: [owner.id] });
  const testVehicle = await t.fixtures.device(acct.id, { mode: 'test', userIds: [owner.id] });
  const geofence = await t.fixtures.geofence(acct.id, 'Depot', square(19.4, -99.1, 0.01));
  const testGeofence = await t.fixtures.geofence(acct.id, 'Test depot', square(19.4, -99.1, 0.01), 'test');
  const group = await t.json('/api/v1/groups', { key, method: 'POST', body: { name: `North ${acct.id}`, vehicle_ids: [vehicle.imei] } });
  expect(group.status).toBe(201);
  return { acct, owner, key, testKey, viewer, viewerKey, vehicle, testVehicle, geofence, testGeofence, groupId: group.body.data.id as number };
}

type Account = Awaited<ReturnType<typeof account>>;

const ruleBody = (a: Account, extra: Record<string, unknown> = {}) => ({
  name: 'Depot arrivals',
  events: ['vehicle.geofence.enter', 'vehicle.panic'],
  vehicles: { scope: 'list', vehicleIds: [a.vehicle.imei] },
  geofenceIds: [a.geofence.id],
  schedule: { days: [5, 1, 1], from: '08:00', to: '18:00' },
  minIntervalSeconds: 600,
  recipients: [{ userId: a.owner.id, channels: ['email', 'push'] }, { userId: a.viewer.id, channels: ['telegram'] }],
  ...extra,
});

describe('notification rules', () => {
  it('are created, listed, read, changed and deleted, each change audited', async () => {
    const a = await account();
    const created = await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const rule = created.body.data;
    expect(rule).toMatchObject({
      name: 'Depot arrivals', events: ['vehicle.geofence.enter', 'vehicle.panic'], vehicles: { scope: 'list', vehicleIds: [a.vehicle.imei] },
      geofenceIds: [a.geofence.id], schedule: { days: [1, 5], from: '08:00', to: '18:00' }, timezone: 'America/Mexico_City', minIntervalSeconds: 600,
      recipients: [
        { userId: a.owner.id, name: null, email: a.owner.email, channels: ['email', 'push'] },
        { userId: a.viewer.id, name: 'Vera Viewer', email: a.viewer.email, channels: ['telegram'] },
      ],
      enabled: true,
    });
    expect(rule.createdAt).toEqual({ local: expect.stringMatching(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/), utc: expect.stringMatching(/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/) });

    expect(await t.json(`${RULES}/${rule.id}`, { key: a.key })).toMatchObject({ status: 200, body: { data: rule } });

    const second = await t.json(RULES, { key: a.key, method: 'POST', body: { name: 'Panics', events: ['vehicle.panic'], vehicles: { scope: 'all' }, recipients: [{ userId: a.owner.id, channels: ['sms'] }], timezone: 'Europe/Madrid', enabled: false } });
    expect(second.status).toBe(201);
    expect(second.body.data).toMatchObject({ vehicles: { scope: 'all' }, geofenceIds: null, schedule: null, timezone: 'Europe/Madrid', minIntervalSeconds: 0, enabled: false });

    const page1 = await t.json(`${RULES}?limit=1`, { key: a.key });
    expect(page1.body).toMatchObject({ data: [{ id: rule.id }], has_more: true, next_cursor: expect.any(String) });
    const page2 = await t.json(`${RULES}?limit=1&cursor=${page1.body.next_cursor}`, { key: a.key });
    expect(page2.body).toMatchObject({ data: [{ id: second.body.data.id }], has_more: false, next_cursor: null });

    const patched = await t.json(`${RULES}/${rule.id}`, {
      key: a.key, method: 'PATCH', body: { name: 'Depot, any vehicle of the group', vehicles: { scope: 'groups', groupIds: [a.groupId] }, geofenceIds: null, schedule: null, events: ['vehicle.geofence.*'] },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'Depot, any vehicle of the group', vehicles: { scope: 'groups', groupIds: [a.groupId] }, geofenceIds: null, schedule: null, events: ['vehicle.geofence.*'], minIntervalSeconds: 600 });
    expect(patched.body.data.vehicles.vehicleIds).toBeUndefined();

    const removed = await t.call(`${RULES}/${rule.id}`, { key: a.key, method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect((await t.json(`${RULES}/${rule.id}`, { key: a.key })).status).toBe(404);
    expect((await t.json(`${RULES}/${rule.id}`, { key: a.key, method: 'DELETE' })).status).toBe(404);

    const audit = await t.json('/api/v1/audit?action=notification_rule.*', { key: a.key });
    expect(audit.status).toBe(200);
    expect(audit.body.data.map((e: any) => [e.action, e.target])).toEqual([
      ['notification_rule.deleted', { type: 'notification_rule', id: String(rule.id) }],
      ['notification_rule.updated', { type: 'notification_rule', id: String(rule.id) }],
      ['notification_rule.created', { type: 'notification_rule', id: String(second.body.data.id) }],
      ['notification_rule.created', { type: 'notification_rule', id: String(rule.id) }],
    ]);
  });

  it('refuses what a rule may not name, saying which field and which id', async () => {
    const a = await account();
    const other = await t.fixtures.tenant();
    const otherVehicle = await t.fixtures.device(other.account.id);
    const removed = await t.fixtures.user(a.acct.id);
    await t.database.db.updateTable('users').set({ removed_at: new Date() }).where('id', '=', removed.id).execute();
    const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
      ['an unknown kind', { events: ['vehicle.flying'] }, /^events: .*vehicle\.flying/],
      ['vehicle.position', { events: ['vehicle.position'] }, /^events: vehicle\.position cannot be notified/],
      ['no event', { events: [' '] }, /^events: at least one event kind/],
      ['a schedule time that is not HH:mm', { schedule: { days: [1], from: '8:00', to: '18:00' } }, /^schedule: "8:00" is not a time of day/],
      ['a schedule day that is not a weekday', { schedule: { days: [0], from: '08:00', to: '18:00' } }, /^schedule: 0 is not an ISO weekday/],
      ['an unknown timezone', { timezone: 'Mars/Olympus' }, /timezone must be an IANA time zone/],
      ['an unknown group', { vehicles: { scope: 'groups', groupIds: [a.groupId, 999999] } }, /^vehicles\.groupIds: no live group 999999 in this account$/],
      ['groupIds with scope all', { vehicles: { scope: 'all', groupIds: [a.groupId] } }, /vehicles\.groupIds goes only with scope "groups"/],
      ['an empty list', { vehicles: { scope: 'list', vehicleIds: [] } }, /vehicles\.vehicleIds must name at least one vehicle/],
      ['another account\'s vehicle', { vehicles: { scope: 'list', vehicleIds: [otherVehicle.imei] } }, new RegExp(`^vehicles\\.vehicleIds: no live vehicle "${otherVehicle.imei}" in this account$`)],
      ['a vehicle of the other mode', { vehicles: { scope: 'list', vehicleIds: [a.testVehicle.imei] } }, /^vehicles\.vehicleIds: no live vehicle/],
      ['an unknown geofence', { geofenceIds: [a.geofence.id, 999999] }, /^geofenceIds: no live geofence 999999 in this account$/],
      ['a geofence of the other mode', { geofenceIds: [a.testGeofence.id] }, new RegExp(`^geofenceIds: no live geofence ${a.testGeofence.id} in this account$`)],
      ['an unknown user', { recipients: [{ userId: 999999, channels: ['email'] }] }, /^recipients: user 999999 is not a user of this account$/],
      ['another account\'s user', { recipients: [{ userId: other.user.id, channels: ['email'] }] }, new RegExp(`^recipients: user ${other.user.id} is not a user of this account$`)],
      ['a removed user', { recipients: [{ userId: removed.id, channels: ['email'] }] }, new RegExp(`^recipients: user ${removed.id} is not a user of this account$`)],
      ['no recipient', { recipients: [] }, /recipients/],
      ['no recipient with a channel', { recipients: [{ userId: a.owner.id, channels: [] }] }, /^recipients: at least one recipient needs a channel/],
      ['an unknown channel', { recipients: [{ userId: a.owner.id, channels: ['pigeon'] }] }, /recipients\.0\.channels\.0/],
      ['a negative interval', { minIntervalSeconds: -1 }, /minIntervalSeconds/],
      ['an unknown field', { colour: 'red' }, /colour/],
    ];
    for (const [what, change, error] of refusals) {
      const res = await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a, change) });
      expect(res.status, what).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    const rule = (await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) })).body.data;
    const patch = await t.json(`${RULES}/${rule.id}`, { key: a.key, method: 'PATCH', body: { recipients: [{ userId: other.user.id, channels: ['email'] }] } });
    expect(patch.status).toBe(400);
    expect((await t.json(`${RULES}/${rule.id}`, { key: a.key })).body.data.recipients).toHaveLength(2);
    // Nothing refused was stored.
    expect((await t.json(RULES, { key: a.key })).body.data).toHaveLength(1);
  });

  it('are the account\'s and the mode\'s: another account\'s or the other mode\'s rule is not found', async () => {
    const a = await account();
    const other = await t.fixtures.tenant();
    const rule = (await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) })).body.data;
    for (const key of [other.key, a.testKey]) {
      expect((await t.json(`${RULES}/${rule.id}`, { key })).status).toBe(404);
      expect((await t.json(`${RULES}/${rule.id}`, { key, method: 'PATCH', body: { name: 'x' } })).status).toBe(404);
      expect((await t.json(`${RULES}/${rule.id}/deliveries`, { key })).status).toBe(404);
      expect((await t.json(`${RULES}/${rule.id}`, { key, method: 'DELETE' })).status).toBe(404);
      expect((await t.json(RULES, { key })).body.data).toEqual([]);
    }
    // A test-mode rule names test-mode vehicles and geofences.
    const testRule = await t.json(RULES, {
      key: a.testKey, method: 'POST',
      body: ruleBody(a, { vehicles: { scope: 'list', vehicleIds: [a.testVehicle.imei] }, geofenceIds: [a.testGeofence.id] }),
    });
    expect(testRule.status, JSON.stringify(testRule.body)).toBe(201);
    expect((await t.json(RULES, { key: a.key })).body.data.map((r: any) => r.id)).toEqual([rule.id]);
    expect((await t.json(`${RULES}/${rule.id}`, { key: a.key })).status).toBe(200);
  });

  it('a viewer reads the rules and changes none; a key needs notifications:read and notifications:write', async () => {
    const a = await account();
    const rule = (await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) })).body.data;
    expect((await t.json(RULES, { key: a.viewerKey })).body.data.map((r: any) => r.id)).toEqual([rule.id]);
    expect((await t.json(`${RULES}/${rule.id}/deliveries`, { key: a.viewerKey })).status).toBe(200);
    const lacksWrite = /^This API key lacks the notifications:write permission/;
    for (const [method, path, body] of [['POST', RULES, ruleBody(a)], ['PATCH', `${RULES}/${rule.id}`, { name: 'x' }], ['DELETE', `${RULES}/${rule.id}`, undefined]] as const) {
      const res = await t.json(path, { key: a.viewerKey, method, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expectErrorEnvelope(res.body, lacksWrite);
    }
    const reader = (await t.fixtures.key(a.owner.id, { permissions: ['notifications:read'] })).key;
    expect((await t.json(RULES, { key: reader })).status).toBe(200);
    expectErrorEnvelope((await t.json(RULES, { key: reader, method: 'POST', body: ruleBody(a) })).body, lacksWrite);
    const none = (await t.fixtures.key(a.owner.id, { permissions: ['vehicles:read', 'events:read'] })).key;
    expectErrorEnvelope((await t.json(RULES, { key: none })).body, /^This API key lacks the notifications:read permission/);
    // The rule is unchanged.
    expect((await t.json(`${RULES}/${rule.id}`, { key: a.key })).body.data.name).toBe('Depot arrivals');
  });

  it('refuses a rule beyond the account\'s limit with 409', async () => {
    const a = await account();
    const values = Array.from({ length: 200 }, (_, i) => ({
      account_id: a.acct.id, mode: 'live' as const, name: `Rule ${i}`, events: ['vehicle.panic'], vehicle_scope: 'all' as const, timezone: 'UTC',
      recipients: JSON.stringify([{ userId: a.owner.id, channels: ['email'] }]),
    }));
    await t.database.db.insertInto('notification_rules').values(values).execute();
    const res = await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) });
    expect(res.status).toBe(409);
    expectErrorEnvelope(res.body, /at most 200 notification rules/);
    // The other mode has its own.
    expect((await t.json(RULES, { key: a.testKey, method: 'POST', body: ruleBody(a, { vehicles: { scope: 'all' }, geofenceIds: null }) })).status).toBe(201);
  });

  it('lists a rule\'s deliveries newest first, a page at a time', async () => {
    const a = await account();
    const rule = (await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a) })).body.data;
    const other = (await t.json(RULES, { key: a.key, method: 'POST', body: ruleBody(a, { name: 'Other' }) })).body.data;
    const db = t.database.db;
    const attempted = new Date('2026-03-02T15:04:00Z');
    const rows = await db.insertInto('notification_deliveries').values([
      { account_id: a.acct.id, rule_id: rule.id, user_id: a.owner.id, channel: 'email', event_id: 5001, event_type: 'vehicle.panic', status: 'succeeded', attempts: 1, last_attempt_at: attempted, delivered_at: attempted },
      { account_id: a.acct.id, rule_id: rule.id, user_id: a.viewer.id, channel: 'telegram', event_id: 5001, event_type: 'vehicle.panic', status: 'failed', attempts: 6, last_attempt_at: attempted, last_error: 'chat not found' },
      { account_id: a.acct.id, rule_id: rule.id, user_id: a.owner.id, channel: 'push', push_subscription_id: 77, event_id: 5002, event_type: 'vehicle.geofence.enter', next_attempt_at: new Date('2026-03-02T15:10:00Z') },
      { account_id: a.acct.id, rule_id: other.id, user_id: a.owner.id, channel: 'email', event_id: 5003, event_type: 'vehicle.panic' },
    ]).returning('id').execute();
    const ids = rows.map((r) => String(r.id));

    const first = await t.json(`${RULES}/${rule.id}/deliveries?limit=2`, { key: a.key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect(first.body.data).toEqual([
      {
        id: ids[2], channel: 'push', recipient: { userId: a.owner.id, name: null, email: a.owner.email }, event: { id: '5002', type: 'vehicle.geofence.enter' },
        status: 'pending', attempts: 0, lastError: null, lastAttemptAt: null, nextAttemptAt: { local: '02/03/2026 09:10', utc: '02/03/2026 15:10' }, deliveredAt: null,
        createdAt: expect.objectContaining({ local: expect.any(String) }),
      },
      {
        id: ids[1], channel: 'telegram', recipient: { userId: a.viewer.id, name: 'Vera Viewer', email: a.viewer.email }, event: { id: '5001', type: 'vehicle.panic' },
        status: 'failed', attempts: 6, lastError: 'chat not found', lastAttemptAt: { local: '02/03/2026 09:04', utc: '02/03/2026 15:04' }, nextAttemptAt: null, deliveredAt: null,
        createdAt: expect.any(Object),
      },
    ]);
    const second = await t.json(`${RULES}/${rule.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, { key: a.key });
    expect(second.body).toMatchObject({ data: [{ id: ids[0], status: 'succeeded', deliveredAt: { utc: '02/03/2026 15:04' } }], has_more: false, next_cursor: null });
    // A cursor of another list is refused.
    const wrong = await t.json(`${RULES}/${rule.id}/deliveries?cursor=${Buffer.from('notification-rules:5').toString('base64url')}`, { key: a.key });
    expect(wrong.status).toBe(400);
    // Deleting the rule drops its log.
    await t.call(`${RULES}/${rule.id}`, { key: a.key, method: 'DELETE' });
    expect(await db.selectFrom('notification_deliveries').select('id').where('rule_id', '=', rule.id).execute()).toEqual([]);
  });
});
