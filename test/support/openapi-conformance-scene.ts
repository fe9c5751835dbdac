import { createHash } from 'node:crypto';
import { PERMISSIONS, type Permission } from '../../domain/access/permissions.ts';
import { acknowledgeCommand, failCommand, markCommandSent, queueCommand, type NewCommand } from '../../db/commands.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { recordDeviceAddress } from '../../db/addresses.ts';
import { insertOauthClient } from '../../db/oauth-clients.ts';
import { storeMedia } from '../../db/media.ts';
import { TravelStatus, type Device } from '../../db/schema.ts';
import { recordCrossingsThroughEngine } from './engine-crossings.ts';
import { square } from '../../simulators/fleet-records.ts';
import type { TestApp } from './test-app.ts';

/** One tenant whose data makes every nullable field of every answer come out both null and not null. */
export interface ConformanceScene {
  /** Per permission: a key holding only it, and a key holding every other permission. */
  only: Record<Permission, string>;
  allBut: Record<Permission, string>;
  expired: string;
  devices: Record<'reporting' | 'bare' | 'silent' | 'spare' | 'dispatch' | 'route', Device>;
  geofences: { warehouse: number; polanco: number; spare: number };
  travels: { inProgress: number; scheduled: number; cancelled: number; toCancel: number };
  /** `subscriber`: a key with webhooks:write and events:read; `full`: a key whose user has WEBHOOKS_PER_USER webhooks (20). */
  webhooks: { main: number; disabled: number; toDelete: number; receiver: string; subscriber: string; full: string };
  deliveries: { failed: string; succeeded: string };
  /** IMEIs: a vehicle with every detail field set (driver, unknown driver key, protocol, limit), one to delete. */
  vehicles: { detailed: string; toDelete: string };
  /** Driver ids: with trips (a rating), assigned (to the detailed vehicle), free, assigned to unassign, one to delete. */
  drivers: { rated: number; assigned: number; free: number; toUnassign: number; toDelete: number };
  /** Command ids of the detailed vehicle: answered, failed, sent and awaiting its answer, queued to cancel. */
  commands: { acknowledged: string; failed: string; sent: string; toCancel: string };
  /** A picture from the detailed vehicle's tracker, answering its acknowledged command; its bytes and SHA-256. */
  media: { id: string; bytes: Buffer; sha256: string };
  /** A key and an OAuth client of the scene's user, to revoke. */
  credentials: { keyToRevoke: number; clientToRevoke: number };
  /**
   * Users of the account: one to change, one to remove, and the sole owner of another account with a key (its last owner);
   * `testKey`: a test-mode key of the scene's user holding users:read and users:write, which changes no user.
   */
  users: { member: number; toRemove: number; ownerEmail: string; loneOwner: number; loneOwnerKey: string; testKey: string };
  /** Maintenance item ids: one on the detailed vehicle with a service, one on a vehicle with no reading, one to delete. */
  maintenance: { serviced: number; bare: number; toDelete: number };
  /** Vehicle group ids: one holding the detailed vehicle and the scene's user, one to delete. */
  groups: { main: number; toDelete: number };
  notifications: NotificationScene;
}

/**
 * Notifications of the scene's user and account: a rule with deliveries (one sent, one pending), one to
 * delete; the user's own addresses, a browser and report emails (one sent before, one to delete); and keys
 * of users at each limit (200 rules in another account, 20 browsers, 10 report emails).
 */
export interface NotificationScene {
  userId: number;
  rule: number;
  ruleToDelete: number;
  pushToDelete: number;
  report: number;
  reportToDelete: number;
  /** notifications:write of an account with 200 rules, and its user. */
  rulesFullKey: string;
  rulesFullUser: number;
  /** Any live key of a user with 20 browsers subscribed. */
  pushFullKey: string;
  /** reports:read of a user with 10 report emails. */
  reportsFullKey: string;
}

async function buildNotificationScene(t: TestApp, accountId: number, userId: number, groupId: number, geofenceId: number): Promise<NotificationScene> {
  const db = t.database.db;
  const recipients = JSON.stringify([{ userId, channels: ['email', 'push'] }]);
  const rule = (name: string, account = accountId) => db.insertInto('notification_rules')
    .values({
      account_id: account, mode: 'live', created_by: userId, name, events: ['vehicle.geofence.*'], vehicle_scope: 'groups', group_ids: [groupId], geofence_ids: [geofenceId],
      schedule: JSON.stringify({ days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' }), timezone: 'America/Mexico_City', recipients,
    })
    .returning('id').executeTakeFirstOrThrow();
  const main = (await rule('Depot arrivals')).id;
  const sent = mx('2026-03-02 09:04');
  await db.insertInto('notification_deliveries').values([
    { account_id: accountId, rule_id: main, user_id: userId, channel: 'email', event_id: 1, event_type: 'vehicle.geofence.enter', status: 'succeeded', attempts: 1, last_attempt_at: sent, delivered_at: sent },
    { account_id: accountId, rule_id: main, user_id: userId, channel: 'push', push_subscription_id: 1, event_id: 1, event_type: 'vehicle.geofence.enter', last_error: 'push service answered 503' },
  ]).execute();
  const ruleToDelete = (await rule('Old rule')).id;
  const crowded = await t.fixtures.tenant();
  await db.insertInto('notification_rules').values(Array.from({ length: 200 }, (_, i) => ({
    account_id: crowded.account.id, mode: 'live' as const, name: `Rule ${i}`, events: ['vehicle.panic'], vehicle_scope: 'all' as const, timezone: 'UTC',
    recipients: JSON.stringify([{ userId: crowded.user.id, channels: ['email'] }]),
  }))).execute();
  const rulesFullKey = (await t.fixtures.key(crowded.user.id, { permissions: ['notifications:write'] })).key;

  await db.insertInto('notification_channels').values({ user_id: userId, telegram_chat_id: '123456789', phone: '+5215512345678', muted_until: mx('2030-01-01 08:00') }).execute();
  const browser = (user: number, n: number) => ({ user_id: user, endpoint: `https://push.example.com/scene/${user}/${n}`, p256dh: 'BScene', auth: 'scene', user_agent: n === 0 ? null : 'Firefox/128.0' });
  const pushToDelete = (await db.insertInto('push_subscriptions').values([browser(userId, 0), browser(userId, 1)]).returning('id').execute())[1]!.id;
  const pushy = await t.fixtures.user(accountId);
  await db.insertInto('push_subscriptions').values(Array.from({ length: 20 }, (_, i) => browser(pushy.id, i))).execute();
  const pushFullKey = (await t.fixtures.key(pushy.id, { permissions: ['devices:read'] })).key;

  const report = (user: number, lastRunAt: Date | null = null) => ({
    account_id: accountId, user_id: user, mode: 'live' as const, frequency: 'daily' as const, reports: ['trips'], local_time: '07:00', weekday: null,
    timezone: 'America/Mexico_City', next_run_at: mx('2030-01-01 07:00'), last_run_at: lastRunAt,
  });
  const [mainReport, reportToDelete] = await db.insertInto('report_subscriptions').values([report(userId, mx('2026-03-02 07:00')), report(userId)]).returning('id').execute();
  const reader = await t.fixtures.user(accountId);
  await db.insertInto('report_subscriptions').values(Array.from({ length: 10 }, () => report(reader.id))).execute();
  const reportsFullKey = (await t.fixtures.key(reader.id, { permissions: ['reports:read'] })).key;
  return { userId, rule: main, ruleToDelete, pushToDelete, report: mainReport!.id, reportToDelete: reportToDelete!.id, rulesFullKey, rulesFullUser: crowded.user.id, pushFullKey, reportsFullKey };
}

/** A Mexico City wall-clock time (UTC-6 all year since 2022) as an instant. */
const mx = (local: string) => new Date(`${local}:00-06:00`);

export const travelBody = (vehicle: string) => ({
  vehicle,
  startTime: '01/05/2030 08:00',
  waypoints: [
    { geofence: 'Warehouse North', expectedArrival: '01/05/2030 09:30' },
    { geofence: 'Customer Polanco', expectedArrival: '01/05/2030 11:00' },
  ],
});

export async function buildConformanceScene(t: TestApp): Promise<ConformanceScene> {
  const { account, user, key: full } = await t.fixtures.tenant();
  const keyWith = async (permissions: string[]) => (await t.fixtures.key(user.id, { permissions })).key;
  const only = {} as Record<Permission, string>;
  const allBut = {} as Record<Permission, string>;
  for (const permission of PERMISSIONS) {
    only[permission] = await keyWith([permission]);
    allBut[permission] = await keyWith(PERMISSIONS.filter((p) => p !== permission));
  }
  const expired = (await t.fixtures.key(user.id, { expiresAt: new Date(Date.now() - 60_000) })).key;

  const device = (name: string) => t.fixtures.device(account.id, { name });
  const devices = {
    reporting: await device('Reporting truck'),
    bare: await device('Bare fix truck'),
    silent: await device('Silent truck'),
    spare: await device('Spare truck'),
    dispatch: await device('Dispatch truck'),
    route: await device('Route truck'),
  };
  const now = Date.now();
  await t.fixtures.fix(devices.reporting.id, {
    fixTime: new Date(now - 60_000), valid: true, latitude: 19.4326, longitude: -99.1332, altitude: 2240,
    speedKmh: 42.4, heading: 359.6, satellites: 11, ignition: true, motion: true, odometerKm: 12345.67,
    powerVoltage: 12.62, backupVoltage: 4.05, signalStrength: 23, connectionType: '4G',
  });
  // The address as the engine's address keeper writes it, after the commit.
  await recordDeviceAddress(t.database.db, { deviceId: devices.reporting.id, latitude: 19.4326, longitude: -99.1332 }, 'Av. Juárez 1, Centro, CDMX');
  await t.fixtures.fix(devices.bare.id, { fixTime: new Date(now - 2 * 3_600_000), valid: true, latitude: 19.4, longitude: -99.2 });

  const warehouse = (await t.fixtures.geofence(account.id, 'Warehouse North', square(19.5, -99.1, 0.01))).id;
  const polanco = (await t.fixtures.geofence(account.id, 'Customer Polanco', { kind: 'circle', lat: 19.43, lng: -99.19, radiusMeters: 300 })).id;
  const spare = (await t.fixtures.geofence(account.id, 'Spare yard', { kind: 'circle', lat: 19.35, lng: -99.15, radiusMeters: 150 })).id;
  // A visit that ended and one still open on 1 May 2024, written by the engine from fixes.
  await recordCrossingsThroughEngine(t.database, [
    { deviceId: devices.route.id, geofenceId: warehouse, type: 'enter', at: mx('2024-05-01T08:00') },
    { deviceId: devices.route.id, geofenceId: warehouse, type: 'exit', at: mx('2024-05-01T09:10') },
    { deviceId: devices.route.id, geofenceId: polanco, type: 'enter', at: mx('2024-05-01T10:00') },
  ]);

  const create = async (vehicle: Device) => {
    const res = await t.json('/api/v1/travels', { key: full, method: 'POST', body: travelBody(vehicle.name) });
    if (res.status !== 200) throw new Error(`scene: travel for ${vehicle.name} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.travelId as number;
  };
  const travels = {
    inProgress: await create(devices.reporting),
    scheduled: await create(devices.bare),
    cancelled: await create(devices.silent),
    toCancel: await create(devices.dispatch),
  };
  const cancelled = await t.call(`/api/v1/travels/${travels.cancelled}`, { key: full, method: 'DELETE' });
  if (cancelled.status !== 200) throw new Error(`scene: cancelling travel ${travels.cancelled} answered ${cancelled.status}`);

  // What the engine writes as the vehicle goes: started, waypoint 1 reached, a late live ETA for
  // waypoint 2, none yet for waypoint 3.
  const db = t.database.db;
  const started = new Date('2030-05-01T14:02:00Z');
  await db.updateTable('travels').set({ status: TravelStatus.InProgress, started_at: started }).where('id', '=', travels.inProgress).execute();
  const waypoint = (seq: number) => db.updateTable('travel_waypoints').where('travel_id', '=', travels.inProgress).where('seq', '=', seq);
  await waypoint(1).set({ status: 'completed', arrived_at: started }).execute();
  await waypoint(2).set({ estimated_arrival: new Date('2030-05-01T15:47:00Z'), estimated_at: started }).execute();

  // Trips and stops as the engine's segmenter writes them, in the last hours: a finished trip with a
  // driver between two stops, then a trip still in progress (every nullable field both ways).
  const sceneDriver = await db.insertInto('drivers').values({ account_id: account.id, mode: 'live', name: 'Ana Trip', identifier: 'SCENE-TRIP-KEY' }).returning('id').executeTakeFirstOrThrow();
  const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  const trip = (start: number, end: number | null, last: number, driverId: number | null) => ({
    device_id: devices.spare.id, start_time: ago(start), end_time: end === null ? null : ago(end), last_fix_time: ago(last),
    start_lat: 19.5, start_lng: -99.1, end_lat: 19.43, end_lng: -99.19, start_geofence: end ? 'Warehouse North' : null, end_geofence: end ? 'Customer Polanco' : null,
    distance_m: 12_345, driving_s: 2_400, idle_s: 180, overspeed_s: 0, max_speed_kmh: 72, harsh_events: 1, driver_id: driverId,
  });
  await db.insertInto('trips').values([trip(180, 130, 130, sceneDriver.id), trip(30, null, 1, null)]).execute();
  const stop = (start: number, end: number | null, last: number) => ({
    device_id: devices.spare.id, start_time: ago(start), end_time: end === null ? null : ago(end), last_fix_time: ago(last), lat: 19.43, lng: -99.19, geofence: end ? 'Customer Polanco' : null, engine_idle_s: 60,
  });
  await db.insertInto('stops').values([stop(130, 30, 30), stop(240, null, 200)]).execute();

  // The reporting truck's history in the last hours: a fix with every field, a bare one, an invalid one.
  const fixAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  await db.insertInto('positions').values([
    { device_id: devices.reporting.id, fix_time: fixAgo(30), valid: true, latitude: 19.43, longitude: -99.13, altitude: 2240, speed_kmh: 42.4, heading: 90, satellites: 11, ignition: true, attributes: JSON.stringify({ odometer: 12_345_670, rssi: 23 }) },
    { device_id: devices.reporting.id, fix_time: fixAgo(20), valid: true, latitude: 19.44, longitude: -99.14, altitude: null, speed_kmh: null, heading: null, satellites: null, ignition: null, attributes: '{}' },
    { device_id: devices.reporting.id, fix_time: fixAgo(10), valid: false, latitude: 0, longitude: 0, altitude: null, speed_kmh: null, heading: null, satellites: null, ignition: null, attributes: '{}' },
  ]).execute();

  // Webhooks pointing at a port nothing listens on: nothing is delivered during the run (no worker runs).
  const receiver = 'http://127.0.0.1:9/hooks';
  const hook = async (events: string[]) => {
    const res = await t.json('/api/v1/webhooks', { key: full, method: 'POST', body: { url: receiver, events, description: 'conformance' } });
    if (res.status !== 201) throw new Error(`scene: webhook answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as number;
  };
  const subscriber = await keyWith(['webhooks:write', 'events:read']);
  const busy = await t.fixtures.user(account.id);
  await db.insertInto('webhooks').values(Array.from({ length: 20 }, () => ({ account_id: account.id, user_id: busy.id, mode: 'live' as const, url: receiver, events: ['*'], description: null, secret: 'whsec_scene' }))).execute();
  const atLimit = (await t.fixtures.key(busy.id, { permissions: ['webhooks:write', 'events:read'] })).key;
  const webhooks = { main: await hook(['vehicle.geofence.*']), disabled: await hook(['*']), toDelete: await hook(['vehicle.panic']), receiver, subscriber, full: atLimit };
  await db.updateTable('webhooks').set({ enabled: false, disabled_reason: 'the receiver answered 410 Gone', disabled_at: new Date() }).where('id', '=', webhooks.disabled).execute();
  const delivery = async (status: 'failed' | 'succeeded') => {
    const row = await db
      .insertInto('webhook_deliveries')
      .values({ webhook_id: webhooks.main, event_id: null, event_type: 'webhook.test', payload: JSON.stringify({ id: 'test_0', type: 'webhook.test', timestamp: started.toISOString(), data: {} }), status, attempts: 1, last_attempt_at: started, last_status_code: status === 'failed' ? 500 : 200, last_error: status === 'failed' ? 'HTTP 500' : null, last_duration_ms: 12 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('webhook_delivery_attempts').values({ delivery_id: row.id, attempt: 1, attempted_at: started, status_code: status === 'failed' ? 500 : 200, error: null, duration_ms: 12 }).execute();
    return String(row.id);
  };
  const deliveries = { failed: await delivery('failed'), succeeded: await delivery('succeeded') };

  // Vehicles registered through the API; the detailed one with a fix, a current driver and an unknown driver key.
  const vehicle = async (imei: string, name: string, extra: object = {}) => {
    const res = await t.json('/api/v1/vehicles', { key: full, method: 'POST', body: { imei, name, ...extra } });
    if (res.status !== 201) throw new Error(`scene: vehicle ${name} answered ${res.status} ${JSON.stringify(res.body)}`);
    return (await db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow()).id;
  };
  const detailedImei = `35${String(account.id).padStart(13, '0')}`;
  const detailedId = await vehicle(detailedImei, 'Detailed truck', { plates: 'DET-001', protocol: 'teltonika', speed_limit_kmh: 90, fuel_tank_litres: 80, user_ids: [user.id] });
  await t.fixtures.fix(detailedId, { fixTime: new Date(now - 30_000), valid: true, latitude: 19.44, longitude: -99.14, speedKmh: 37.6, ignition: true });
  await recordDeviceAddress(db, { deviceId: detailedId, latitude: 19.44, longitude: -99.14 }, 'Calzada de Tlalpan 100, CDMX');
  const vehicleDriver = await db.insertInto('drivers').values({ account_id: account.id, mode: 'live', name: 'Vera Scene', identifier: 'SCENE-VEHICLE-KEY' }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('driver_assignments').values({ driver_id: vehicleDriver.id, device_id: detailedId, since: new Date(now - 3_600_000), until: null, source: 'manual' }).execute();
  await db.updateTable('devices').set({ unknown_driver_identifier: '01A2B3C4D5E6F701', unknown_driver_seen_at: new Date(now - 600_000) }).where('id', '=', detailedId).execute();
  // An installer's odometer and engine hours, so its figures are never null.
  await db.insertInto('vehicle_baselines').values({
    device_id: detailedId, odometer_km: 120_000, odometer_set_at: new Date(now - 600_000), engine_hours: 3_500, engine_set_at: new Date(now - 600_000),
  }).execute();
  const toDeleteImei = `36${String(account.id).padStart(13, '0')}`;
  await vehicle(toDeleteImei, 'Scrap truck');

  // Maintenance: an oil change on the detailed vehicle (120,000 km by its baseline) serviced at
  // 120,000 km, an engine-hours item on a vehicle that never reported, a calendar item to delete.
  const item = async (body: object) => {
    const res = await t.json('/api/v1/maintenance', { key: full, method: 'POST', body });
    if (res.status !== 201) throw new Error(`scene: maintenance item answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as number;
  };
  const maintenance = {
    serviced: await item({ vehicleId: detailedImei, name: 'Oil change', kind: 'odometer', interval: 10_000, from: 110_000 }),
    bare: await item({ vehicleId: devices.silent.imei, name: 'Service', kind: 'engineHours', interval: 500, from: 0 }),
    toDelete: await item({ vehicleId: detailedImei, name: 'Inspection', kind: 'calendar', interval: 180, from: '2026-01-15' }),
  };
  const serviced = await t.json(`/api/v1/maintenance/${maintenance.serviced}/services`, { key: full, method: 'POST', body: { performedOn: '2026-01-15', engineHours: 3_400 } });
  if (serviced.status !== 201) throw new Error(`scene: service answered ${serviced.status} ${JSON.stringify(serviced.body)}`);

  // Drivers besides the two above: one free with a phone, one assigned to unassign, one to delete.
  const newDriver = async (name: string, identifier: string, phone: string | null = null) =>
    (await db.insertInto('drivers').values({ account_id: account.id, mode: 'live', name, identifier, phone }).returning('id').executeTakeFirstOrThrow()).id;
  const drivers = {
    rated: sceneDriver.id, assigned: vehicleDriver.id,
    free: await newDriver('Fay Scene', 'SCENE-FREE-KEY', '+52 55 0000 0001'),
    toUnassign: await newDriver('Uma Scene', 'SCENE-UNASSIGN-KEY'),
    toDelete: await newDriver('Del Scene', 'SCENE-DELETE-KEY'),
  };
  await db.insertInto('driver_assignments').values({ driver_id: drivers.toUnassign, device_id: devices.bare.id, since: new Date(now - 7_200_000), until: null, source: 'telemetry' }).execute();

  // Commands of the detailed vehicle as delivery leaves them: one answered (sent by a named key from an
  // address), one failed unanswered, one sent and awaiting, one queued to cancel.
  const commandKey = await t.fixtures.key(user.id, { permissions: ['commands:write'] });
  const command = async (issued: Partial<NewCommand> = {}) =>
    (await queueCommand(db, {
      accountId: account.id, deviceId: detailedId, apiKeyId: null, userId: user.id, type: 'siren_on', params: {}, text: null,
      idempotencyKey: null, expiresAt: new Date(now + 86_400_000), ...issued,
    })).command.id;
  const acknowledged = await command({ apiKeyId: commandKey.id, requestedFrom: '203.0.113.9', type: 'engine_resume', idempotencyKey: 'scene-ack' });
  await markCommandSent(db, acknowledged);
  await acknowledgeCommand(db, acknowledged, 'DOUT1:1 Timeout:INFINITY');
  const failed = await command({ maxAttempts: 1 });
  await markCommandSent(db, failed);
  await failCommand(db, failed, 'no answer within 30 s, 1 of 1 attempts');
  const sent = await command();
  await markCommandSent(db, sent);
  const commands = { acknowledged, failed, sent, toCancel: await command() };
  const pictureBytes = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x53, 0x43, 0xff, 0xd9]);
  const pictureSha = createHash('sha256').update(pictureBytes).digest('hex');
  const picture = await storeMedia(db, {
    deviceId: detailedId, takenAt: new Date(now - 60_000), contentType: 'image/jpeg', fileName: 'camera_picture.jpg', sha256: pictureSha,
    protocol: 'meitrack', commandId: null, bytes: pictureBytes,
  });
  const media = { id: picture.media.id, bytes: pictureBytes, sha256: pictureSha };

  const keyToRevoke = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).id;
  const client = await insertOauthClient(db, { clientId: `fcc_scene_${account.id}`, secretHash: 'x', userId: user.id, mode: 'live', name: 'scene', scopes: ['devices:read'], expiresAt: null });
  await recordAudit(db, { kind: 'cli', accountId: account.id, mode: 'live', userId: user.id, remoteAddress: null }, {
    action: 'oauth_client.created', targetType: 'oauth_client', targetId: String(client.id), details: { clientId: client.client_id },
  });
  const credentials = { keyToRevoke, clientToRevoke: client.id };
  const group = (name: string) => db.insertInto('vehicle_groups').values({ account_id: account.id, mode: 'live', name }).returning('id').executeTakeFirstOrThrow();
  const mainGroup = await group('North depot');
  await db.insertInto('vehicle_group_devices').values({ group_id: mainGroup.id, device_id: detailedId }).execute();
  await db.insertInto('user_vehicle_groups').values({ group_id: mainGroup.id, user_id: user.id }).execute();
  const groups = { main: mainGroup.id, toDelete: (await group('Old depot')).id };

  const member = await t.fixtures.user(account.id);
  const toRemove = await t.fixtures.user(account.id);
  await db.updateTable('users').set({ role: 'viewer' }).where('id', 'in', [member.id, toRemove.id]).execute();
  const lone = await t.fixtures.tenant();
  const loneOwnerKey = (await t.fixtures.key(lone.user.id, { permissions: ['users:write'] })).key;
  const testKey = (await t.fixtures.key(user.id, { mode: 'test', permissions: ['users:read', 'users:write'] })).key;
  const users = { member: member.id, toRemove: toRemove.id, ownerEmail: user.email, loneOwner: lone.user.id, loneOwnerKey, testKey };

  const notifications = await buildNotificationScene(t, account.id, user.id, groups.main, warehouse);

  return { notifications, users, groups, media, maintenance, credentials, commands, only, allBut, expired, devices, geofences: { warehouse, polanco, spare }, travels, webhooks, deliveries, vehicles: { detailed: detailedImei, toDelete: toDeleteImei }, drivers };
}
