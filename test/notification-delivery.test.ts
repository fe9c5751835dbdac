import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import webpush from 'web-push';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appendEvents } from '../db/event-log.ts';
import type { NewEvent } from '../domain/events/event-payloads.ts';
import type { NotificationChannel } from '../domain/notifications/notification-rule.ts';
import { createChannels } from '../engine/notifications/channels/create-channels.ts';
import type { NotificationConfig } from '../engine/notifications/notification-config.ts';
import { buildReportEmail } from '../engine/notifications/report-email.ts';
import { startNotifications, type RunningNotifications } from '../engine/notifications/start-notifications.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startPushTestService, type PushTestService } from './support/push-test-service.ts';
import { startSmtpTestServer, type SmtpTestServer } from './support/smtp-test-server.ts';
import { until } from './support/eventually.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Notifications end to end below the HTTP API: events appended to the log, fan-out, the sending
// lanes, and real receivers on 127.0.0.1: an SMTP server (smtp-server, each message parsed with
// mailparser), a push service that checks the VAPID signature and decrypts the payload as RFC 8291
// says, and an SMS gateway that answers as slowly as the test wants. Retries wait 300 ms instead of
// the schedule's 10 s, 1 min, ...

let database: TestDatabase;
let smtp: SmtpTestServer;
let push: PushTestService;
let gateway: { server: Server; url: string; requests: string[]; hang: boolean };
let config: NotificationConfig;
let running: RunningNotifications | undefined;
let accountId: number;
let userId: number;
let otherUserId: number;
let device: { id: number; imei: string };
let hidden: { id: number; imei: string };
let sequence = 0;

const vapid = webpush.generateVAPIDKeys();

async function start(): Promise<RunningNotifications> {
  running = await startNotifications(database, silentLogger, createChannels(config, silentLogger), {
    concurrency: 4, retryDelaysMs: config.retryDelaysMs, timeoutMs: config.timeoutMs, pollMs: 50, deliveryRetentionMs: 86_400_000,
    publicUrl: 'https://fleet.example.com',
  }, {
    message: (d) => buildReportEmail(database.db, { accountId: d.accountId, userId: d.userId, reportSubscriptionId: d.report!.subscriptionId, periodStart: d.report!.periodStart, periodEnd: d.report!.periodEnd }),
    start: () => ({ close: async () => {} }),
  });
  return running;
}

beforeAll(async () => {
  database = await openTestDatabase();
  smtp = await startSmtpTestServer();
  push = await startPushTestService();
  const requests: string[] = [];
  gateway = { requests, hang: false } as never;
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    if (gateway.hang) return; // answered by nobody: the channel's timeout ends it
    res.writeHead(200).end('OK');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.server = server;
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/send?to={phone}&text={message}`;
  config = {
    email: { url: smtp.url, from: 'Fleet <fleet@example.test>', requireTls: false },
    push: { publicKey: vapid.publicKey, privateKey: vapid.privateKey, subject: 'mailto:ops@example.test', allowPrivate: true },
    sms: { url: gateway.url, contentType: 'application/x-www-form-urlencoded' },
    retryDelaysMs: [300, 300, 300], timeoutMs: 1_500, concurrency: 4, deliveryRetentionMs: 86_400_000, reportCheckMs: 60_000,
  };
  const make = fixtures(database.db);
  const tenant = await make.tenant('Europe/Madrid');
  accountId = tenant.account.id;
  userId = tenant.user.id;
  otherUserId = (await make.user(accountId, 'UTC')).id;
  device = await make.device(accountId, { name: 'Truck 7', plates: 'ABC-123', userIds: [userId, otherUserId] });
  hidden = await make.device(accountId, { name: 'Hidden van', userIds: [userId] });
  await start();
});

afterAll(async () => {
  await running?.close();
  await smtp?.close();
  await push?.close();
  await new Promise<void>((r) => (gateway?.server ? gateway.server.close(() => r()) : r()));
  await database?.destroy();
});

beforeEach(async () => {
  // Each case starts with no rules and no pending deliveries of an earlier one.
  await database.db.deleteFrom('notification_deliveries').execute();
  await database.db.deleteFrom('notification_rules').execute();
  await database.db.deleteFrom('notification_channels').execute();
  await database.db.deleteFrom('push_subscriptions').execute();
  smtp.received.length = 0;
  push.received.length = 0;
  gateway.requests.length = 0;
  gateway.hang = false;
});

async function rule(over: Partial<{ events: string[]; recipients: Array<{ userId: number; channels: NotificationChannel[] }>; schedule: object | null; timezone: string; minIntervalS: number; deviceIds: number[] }> = {}) {
  return database.db.insertInto('notification_rules').values({
    account_id: accountId, mode: 'live', created_by: userId, name: `rule ${++sequence}`, events: over.events ?? ['vehicle.geofence.*', 'vehicle.alarm', 'vehicle.panic'],
    vehicle_scope: over.deviceIds ? 'list' : 'all', device_ids: over.deviceIds ?? [], geofence_ids: null,
    schedule: over.schedule ? JSON.stringify(over.schedule) : null, timezone: over.timezone ?? 'UTC', min_interval_s: over.minIntervalS ?? 0,
    recipients: JSON.stringify(over.recipients ?? [{ userId, channels: ['email'] }]),
  }).returning('id').executeTakeFirstOrThrow();
}

async function logEvent(extra: Partial<NewEvent> = {}): Promise<string> {
  const event: NewEvent = {
    type: 'vehicle.geofence.enter', occurredAt: new Date(), deviceId: device.id,
    position: { lat: 40.4168, lng: -3.7038, speedKmh: 31, heading: 90, fixTime: new Date(), address: 'Calle Mayor 1, Madrid' },
    data: { geofence: { id: 1, name: 'Airport' } }, dedupeKey: `notify-test-${process.pid}-${++sequence}`, ...extra,
  };
  const [id] = await database.db.transaction().execute((trx) => appendEvents(trx, [event]));
  running?.wake();
  return id!;
}

const deliveries = () => database.db.selectFrom('notification_deliveries').selectAll().orderBy('id').execute();
/** Lets fan-out and the lanes run a few rounds, for the cases that check nothing was sent. */
const settle = () => new Promise((r) => setTimeout(r, 600));

describe('notifications for people', () => {
  it('emails the vehicle, what happened, the local time, the address and a link', async () => {
    await rule();
    const eventId = await logEvent({ occurredAt: new Date('2026-11-27T22:15:00Z') });
    await until(() => smtp.received.length === 1);
    const { mail, to } = smtp.received[0]!;
    const user = await database.db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(to).toEqual([user.email]);
    expect(mail.subject).toBe('Truck 7: entered Airport');
    expect(mail.text).toContain('When: 27/11/2026 23:15 CET');
    expect(mail.text).toContain('Where: Calle Mayor 1, Madrid');
    expect(mail.text).toContain(`https://fleet.example.com/console#/vehicles/${device.imei}`);
    expect(mail.html).toContain('<strong>Truck 7</strong>');
    await until(async () => (await deliveries())[0]?.status === 'succeeded');
    expect(await deliveries()).toMatchObject([{ channel: 'email', user_id: userId, event_id: Number(eventId), status: 'succeeded', attempts: 1 }]);
  });

  it('sends an email to the user\'s own address when they set one, and nothing to a muted user', async () => {
    await rule({ recipients: [{ userId, channels: ['email'] }, { userId: otherUserId, channels: ['email'] }] });
    await database.db.insertInto('notification_channels').values([{ user_id: userId, email: 'duty@example.test' }, { user_id: otherUserId, muted: true }]).execute();
    await logEvent();
    await until(() => smtp.received.length === 1);
    await settle();
    expect(smtp.received.map((m) => m.to)).toEqual([['duty@example.test']]);
  });

  it('mutes a user until the time they gave, and logs why a recipient without an address was not told', async () => {
    await rule({ recipients: [{ userId, channels: ['email'] }, { userId: otherUserId, channels: ['sms', 'push'] }] });
    await database.db.insertInto('notification_channels').values({ user_id: userId, muted_until: new Date(Date.now() + 3_600_000) }).execute();
    await logEvent();
    await until(async () => (await deliveries()).filter((d) => d.status === 'failed').length === 2);
    await settle();
    expect(smtp.received).toHaveLength(0);
    expect((await deliveries()).map((d) => [d.user_id, d.channel, d.last_error])).toEqual([
      [otherUserId, 'sms', 'the recipient has no phone number'],
      [otherUserId, 'push', 'the recipient has no browser subscribed to notifications'],
    ]);
    // Past the time they gave, they are told again.
    await database.db.updateTable('notification_channels').set({ muted_until: new Date(Date.now() - 1_000) }).where('user_id', '=', userId).execute();
    await logEvent();
    await until(() => smtp.received.length === 1);
  });

  it('tells nobody of a vehicle they may not see', async () => {
    await rule({ recipients: [{ userId: otherUserId, channels: ['email'] }] });
    await logEvent({ deviceId: hidden.id });
    await settle();
    expect(smtp.received).toHaveLength(0);
    expect(await deliveries()).toHaveLength(0);
  });

  it('does not fire a night rule by day, and does at night', async () => {
    await rule({ schedule: { days: [1, 2, 3, 4, 5, 6, 7], from: '22:00', to: '06:00' }, timezone: 'Europe/Madrid' });
    await logEvent({ occurredAt: new Date('2026-11-27T11:00:00Z') });
    await settle();
    expect(smtp.received).toHaveLength(0);
    await logEvent({ occurredAt: new Date('2026-11-27T23:30:00Z') });
    await until(() => smtp.received.length === 1);
  });

  it('notifies once per vehicle within the minimum interval under a burst of alarms', async () => {
    await rule({ events: ['vehicle.alarm'], minIntervalS: 600 });
    const start = Date.now();
    // Some in one transaction, some in their own, so fan-out sees them in one batch and across batches.
    const burst: NewEvent[] = Array.from({ length: 15 }, (_, i) => ({
      type: 'vehicle.alarm', occurredAt: new Date(start + i * 1000), deviceId: device.id, data: { alarm: 'vibration' }, dedupeKey: `burst-${process.pid}-${++sequence}`,
    }));
    const [firstId] = await database.db.transaction().execute((trx) => appendEvents(trx, burst));
    running?.wake();
    for (let i = 0; i < 5; i++) await logEvent({ type: 'vehicle.alarm', occurredAt: new Date(start + (20 + i) * 1000), data: { alarm: 'vibration' } });
    await until(() => smtp.received.length === 1);
    await settle();
    expect(smtp.received).toHaveLength(1);
    // The first alarm of the burst is the one told.
    expect(await deliveries()).toMatchObject([{ event_id: Number(firstId) }]);
    // Past the interval it notifies again.
    await logEvent({ type: 'vehicle.alarm', occurredAt: new Date(start + 601_000), data: { alarm: 'vibration' } });
    await until(() => smtp.received.length === 2);
  });

  it('sends an event once per recipient and channel however many rules take it', async () => {
    await rule();
    await rule({ events: ['vehicle.geofence.enter'] });
    await logEvent();
    await until(() => smtp.received.length === 1);
    await settle();
    expect(smtp.received).toHaveLength(1);
  });

  it('retries a refused message, and a restart mid-retry sends it once', async () => {
    await rule();
    smtp.refuseNext(451, 1);
    await logEvent();
    await until(async () => (await deliveries())[0]?.attempts === 1);
    const [first] = await deliveries();
    expect(first).toMatchObject({ status: 'pending', attempts: 1 });
    expect(first!.last_error).toMatch(/451/);
    // The engine stops before the retry is due, and a new one takes over from the database.
    await running!.close();
    await start();
    await until(() => smtp.received.length === 1);
    await until(async () => (await deliveries())[0]?.status === 'succeeded');
    await settle();
    expect(smtp.received).toHaveLength(1);
    expect(await deliveries()).toMatchObject([{ status: 'succeeded', attempts: 2 }]);
  });

  it('fails a message its server refuses for good, without retrying', async () => {
    await rule();
    smtp.refuseNext(550, 1);
    await logEvent();
    await until(async () => (await deliveries())[0]?.status === 'failed');
    await settle();
    expect(await deliveries()).toMatchObject([{ status: 'failed', attempts: 1 }]);
    expect(smtp.received).toHaveLength(0);
  });

  it('pushes to each of the user\'s browsers, signed with VAPID and encrypted as RFC 8291 says', async () => {
    const browsers = [push.subscription({ applicationServerKey: vapid.publicKey }), push.subscription({ applicationServerKey: vapid.publicKey })];
    for (const s of browsers) await database.db.insertInto('push_subscriptions').values({ user_id: userId, endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth }).execute();
    await rule({ events: ['vehicle.panic'], recipients: [{ userId, channels: ['push'] }] });
    await logEvent({ type: 'vehicle.panic', data: { alarm: 'sos' } });
    await until(() => push.received.length === 2);
    expect(push.refused).toEqual([]);
    expect(push.received.map((r) => r.endpoint).sort()).toEqual(browsers.map((b) => b.endpoint).sort());
    const payload = JSON.parse(push.received[0]!.payload);
    expect(payload).toEqual({ title: 'Truck 7: PANIC: the SOS button was pressed', body: expect.stringContaining('Calle Mayor 1, Madrid'), url: `https://fleet.example.com/console#/vehicles/${device.imei}` });
    expect(push.received[0]!.claims.sub).toBe('mailto:ops@example.test');
  });

  it('forgets a browser whose subscription is gone', async () => {
    const browser = push.subscription({ applicationServerKey: vapid.publicKey });
    await database.db.insertInto('push_subscriptions').values({ user_id: userId, endpoint: browser.endpoint, p256dh: browser.keys.p256dh, auth: browser.keys.auth }).execute();
    push.unsubscribe(browser.endpoint);
    await rule({ recipients: [{ userId, channels: ['push'] }] });
    await logEvent();
    await until(async () => (await deliveries())[0]?.status === 'failed');
    expect(await database.db.selectFrom('push_subscriptions').select('id').where('endpoint', '=', browser.endpoint).execute()).toEqual([]);
  });

  it('holds up no other channel when one is slow', async () => {
    gateway.hang = true;
    await database.db.insertInto('notification_channels').values({ user_id: userId, phone: '+34600000001' }).execute();
    await rule({ recipients: [{ userId, channels: ['sms', 'email'] }] });
    const sent = Date.now();
    // More SMS than the lane has room for, all hanging until the gateway's timeout.
    for (let i = 0; i < 6; i++) await logEvent();
    await until(() => smtp.received.length === 6);
    expect(Date.now() - sent).toBeLessThan(config.timeoutMs);
    expect(gateway.requests.length).toBeGreaterThan(0);
    expect(gateway.requests[0]).toContain('to=%2B34600000001');
  });

  it('records why a channel the server has not configured could not be used', async () => {
    await database.db.insertInto('notification_channels').values({ user_id: userId, telegram_chat_id: '123456' }).execute();
    await rule({ recipients: [{ userId, channels: ['telegram'] }] });
    await logEvent();
    await until(async () => (await deliveries())[0]?.status === 'failed');
    expect((await deliveries())[0]!.last_error).toMatch(/Telegram is not configured on this server/);
  });
});
