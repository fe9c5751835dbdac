import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startChatGatewayTestServer, type ChatGatewayTestServer } from './support/chat-gateway-test-server.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, stopServing, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { driveThrough } from './support/scripted-tracker.ts';
import { servedApi } from './support/served-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from './support/smtp-test-server.ts';

/**
 * Notifications as a fleet manager sets them up: `fleet serve` configured by its environment (SMTP,
 * the Telegram Bot API, an SMS gateway, each played by a local server), a rule and the user's own
 * addresses made through the REST API, and a tracker on a real socket driving through a geofence.
 */

let fresh: FreshDatabase;
let server: Serving;
let smtp: SmtpTestServer;
let chat: ChatGatewayTestServer;
let key: string;
let trackerPort: number;
let imei: string;
let email: string;
let env: Record<string, string>;

const api = servedApi(() => server.url, () => key);
const AIRPORT = { lat: 40.49, lng: -3.57 };

beforeAll(async () => {
  smtp = await startSmtpTestServer();
  chat = await startChatGatewayTestServer();
  chat.telegram.chats.add('424242');
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant('Europe/Madrid');
  email = user.email;
  key = (await make.key(user.id)).key;
  imei = (await make.device(account.id, { userIds: [user.id], name: 'Truck 12', protocol: 'teltonika' })).imei;
  await setup.close();
  trackerPort = await freePort();
  env = {
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort), PUBLIC_URL: 'https://fleet.example.com',
    SMTP_URL: smtp.url, SMTP_FROM: 'Fleet <fleet@example.test>',
    TELEGRAM_BOT_TOKEN: chat.telegram.token, TELEGRAM_API_URL: chat.url,
    SMS_URL: `${chat.url}/sms/send?to={phone}&text={message}`,
    NOTIFICATION_RETRY_S: '3,3,3', REPORT_CHECK_S: '1', GEOFENCE_POLL_MS: '100',
  };
  server = await serve(env);
}, 180_000);

/** The engine takes a new geofence in at its next look at the change log (GEOFENCE_POLL_MS, 100 ms here). */
const geofencesTakenIn = () => new Promise((r) => setTimeout(r, 1_000));

/** Runs `work` on the fleet's database, through the running server on the embedded default. */
async function withDatabase<T>(work: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'share' });
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
}

afterAll(async () => {
  await stopServing(server);
  await fresh?.destroy();
  await smtp?.close();
  await chat?.close();
});

describe('notifications from a served fleet', () => {
  it('tells the user by email, Telegram and SMS when their truck enters the airport zone', async () => {
    const channels = await api('/users/me/notification-channels', { method: 'PATCH', body: { telegramChatId: '424242', phone: '+34600111222' } });
    expect(channels.status, JSON.stringify(channels.body)).toBe(200);
    const me = (await api('/users/me')).body.data;
    const geofence = await api('/geofences', { method: 'POST', body: { name: 'Airport', type: 'circle', center: AIRPORT, radiusMeters: 800 } });
    expect(geofence.status, JSON.stringify(geofence.body)).toBe(201);
    const created = await api('/notification-rules', {
      method: 'POST',
      body: {
        name: 'Airport arrivals', events: ['vehicle.geofence.enter'], vehicles: { scope: 'list', vehicleIds: [imei] },
        geofenceIds: [geofence.body.data.id], recipients: [{ userId: me.id, channels: ['email', 'telegram', 'sms'] }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ruleId = created.body.data.id;
    await geofencesTakenIn();
    await driveThrough(trackerPort, imei, AIRPORT);

    await eventually(async () => smtp.received.length, (n) => expect(n).toBe(1), 30_000);
    const mail = smtp.received[0]!;
    expect(mail.to).toEqual([email]);
    expect(mail.mail.subject).toBe('Truck 12: entered Airport');
    expect(mail.mail.text).toContain(`https://fleet.example.com/console#/vehicles/${imei}`);
    await eventually(async () => [chat.telegram.messages.length, chat.sms.requests.length], (n) => expect(n).toEqual([1, 1]), 30_000);
    expect(chat.telegram.messages[0]).toMatchObject({ chat_id: '424242', text: expect.stringContaining('Truck 12: entered Airport') });
    expect(chat.sms.requests[0]!.query).toMatchObject({ to: '+34600111222', text: expect.stringContaining('Truck 12: entered Airport') });

    // The rule's delivery log says the same; the exit was not asked for.
    await eventually(async () => (await api(`/notification-rules/${ruleId}/deliveries`)).body.data,
      (rows: any[]) => expect(rows.map((r) => [r.channel, r.status]).sort()).toEqual([['email', 'succeeded'], ['sms', 'succeeded'], ['telegram', 'succeeded']]), 30_000);
  }, 120_000);

  it('sends a message once when the server restarts while it waits for a retry', async () => {
    const me = (await api('/users/me')).body.data;
    const geofence = await api('/geofences', { method: 'POST', body: { name: 'Depot South', type: 'circle', center: { lat: 40.3, lng: -3.7 }, radiusMeters: 800 } });
    const created = await api('/notification-rules', {
      method: 'POST',
      body: { name: 'Depot', events: ['vehicle.geofence.exit'], geofenceIds: [geofence.body.data.id], vehicles: { scope: 'all' }, recipients: [{ userId: me.id, channels: ['email'] }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const ruleId = created.body.data.id;
    const before = smtp.received.length;
    smtp.refuseNext(451, 1);
    await geofencesTakenIn();
    await driveThrough(trackerPort, imei, { lat: 40.3, lng: -3.7 });
    // The first attempt was refused; the retry waits 3 s in the database.
    await eventually(async () => (await api(`/notification-rules/${ruleId}/deliveries`)).body.data,
      (rows: any[]) => expect(rows).toMatchObject([{ status: 'pending', attempts: 1 }]), 30_000);
    await stopServing(server);
    server = await serve(env);
    await eventually(async () => (await api(`/notification-rules/${ruleId}/deliveries`)).body.data,
      (rows: any[]) => expect(rows).toMatchObject([{ status: 'succeeded', attempts: 2 }]), 30_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const mails = smtp.received.slice(before);
    expect(mails.map((m) => m.mail.subject)).toEqual(['Truck 12: left Depot South']);
  }, 120_000);

  it('emails a daily report with its CSV files at the time the user chose', async () => {
    const subscribed = await api('/users/me/report-subscriptions', { method: 'POST', body: { frequency: 'daily', reports: ['trips', 'geofences', 'maintenance'], time: '07:00' } });
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201);
    const before = smtp.received.length;
    // Seven o'clock has come: the run that was due tomorrow is due now.
    await withDatabase((db) => db.updateTable('report_subscriptions').set({ next_run_at: new Date(Date.now() - 1_000) }).where('id', '=', subscribed.body.data.id).execute());
    await eventually(async () => smtp.received.length, (n) => expect(n).toBe(before + 1), 30_000);
    const { mail, to } = smtp.received[before]!;
    expect(to).toEqual([email]);
    expect(mail.subject).toMatch(/^Fleet summary, \d\d\/\d\d\/\d{4}$/);
    expect(mail.attachments.map((a) => a.filename).sort()).toEqual([
      expect.stringMatching(/^geofences-.*\.csv$/), 'maintenance-due.csv', expect.stringMatching(/^trips-.*\.csv$/),
    ]);
    const trips = mail.attachments.find((a) => a.filename!.startsWith('trips-'))!.content.toString('utf8');
    expect(trips).toContain('deviceName');
    expect(mail.html).toContain('Truck 12');
    const next = (await api('/users/me/report-subscriptions')).body.data[0];
    expect(next.lastRunAt).not.toBeNull();
  }, 120_000);
});
