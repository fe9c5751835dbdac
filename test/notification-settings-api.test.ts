import { createECDH, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// A user's own notification settings through the real HTTP app: their addresses and mute, the
// browsers subscribed for web push, and their scheduled report emails; each only their own.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const CHANNELS = '/api/v1/users/me/notification-channels';
const PUSH = '/api/v1/users/me/push-subscriptions';
const REPORTS = '/api/v1/users/me/report-subscriptions';

/** A browser's PushSubscription JSON, with a real P-256 key and a 16-byte secret. */
function browserSubscription(endpoint = `https://push.example.com/send/${randomBytes(8).toString('hex')}`) {
  const ecdh = createECDH('prime256v1');
  return { endpoint, expirationTime: null, keys: { p256dh: ecdh.generateKeys().toString('base64url'), auth: randomBytes(16).toString('base64url') } };
}

/** A user with a live key holding one unrelated permission, and a test-mode key. */
async function user() {
  const { account, user } = await t.fixtures.tenant('America/Mexico_City');
  const key = (await t.fixtures.key(user.id, { permissions: ['vehicles:read'] })).key;
  const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;
  return { account, user, key, testKey };
}

/** `dd/MM/yyyy HH:mm` as a UTC date. */
const parseDisplay = (s: string) => {
  const [, d, m, y, hh, mm] = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2})$/.exec(s)!;
  return new Date(Date.UTC(Number(y), Number(m) - 1, Number(d), Number(hh), Number(mm)));
};

describe('own notification channels', () => {
  it('reads the defaults with any credential, and changes with a live one only', async () => {
    const u = await user();
    const initial = await t.json(CHANNELS, { key: u.key });
    expect(initial.status).toBe(200);
    expect(initial.body.data).toEqual({
      email: null, effectiveEmail: u.user.email, telegramChatId: null, phone: null, muted: false, mutedUntil: null, pushSubscriptions: [],
      available: { email: false, push: false, telegram: false, sms: false }, vapidPublicKey: null,
    });
    expect((await t.json(CHANNELS, { key: u.testKey })).status).toBe(200);

    const patched = await t.json(CHANNELS, {
      key: u.key, method: 'PATCH', body: { email: 'alerts@example.com', telegramChatId: '-1001234567890', phone: '+5215512345678', mutedUntil: '2026-05-01T14:00:00Z' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({
      email: 'alerts@example.com', effectiveEmail: 'alerts@example.com', telegramChatId: '-1001234567890', phone: '+5215512345678', muted: false,
      mutedUntil: { local: '01/05/2026 08:00', utc: '01/05/2026 14:00' },
    });
    // Only the fields given change; empty clears.
    const cleared = await t.json(CHANNELS, { key: u.key, method: 'PATCH', body: { email: '', telegramChatId: '@fleet_alerts', muted: true, mutedUntil: null } });
    expect(cleared.body.data).toMatchObject({ email: null, effectiveEmail: u.user.email, telegramChatId: '@fleet_alerts', phone: '+5215512345678', muted: true, mutedUntil: null });

    const refused = await t.json(CHANNELS, { key: u.testKey, method: 'PATCH', body: { phone: '+34600000000' } });
    expect(refused.status).toBe(403);
    expectErrorEnvelope(refused.body, /test-mode key or token cannot change them; use a live key/);
    expect((await t.json(CHANNELS, { key: u.key })).body.data.phone).toBe('+5215512345678');
  });

  it('refuses addresses that are not ones', async () => {
    const u = await user();
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ phone: '5512345678' }, /phone must be an E\.164 number/],
      [{ phone: '+1234567' }, /phone must be an E\.164 number/],
      [{ phone: '+1234567890123456' }, /phone/],
      [{ telegramChatId: 'fleet' }, /telegramChatId must be a numeric chat id/],
      [{ telegramChatId: '12.5' }, /telegramChatId/],
      [{ email: 'nobody' }, /email must be an email address/],
      [{ email: `${'a'.repeat(250)}@example.com` }, /email/],
      [{ mutedUntil: 'tomorrow' }, /mutedUntil must be an ISO 8601/],
      [{ mutedUntil: '2026-05-01T14:00:00' }, /mutedUntil must be an ISO 8601/],
      [{ muted: 'yes' }, /muted/],
      [{ pager: '123' }, /pager/],
    ];
    for (const [body, error] of refusals) {
      const res = await t.json(CHANNELS, { key: u.key, method: 'PATCH', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    expect((await t.json(CHANNELS, { key: u.key })).body.data).toMatchObject({ email: null, telegramChatId: null, phone: null, muted: false });
  });

  it('tells which channels the server sends on and the VAPID key browsers subscribe with', async () => {
    const u = await user();
    const app = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: TEST_CONFIG,
      notifications: { available: { email: true, push: true, telegram: false, sms: true }, vapidPublicKey: 'BPublicKey', allowPrivatePushEndpoints: true },
    });
    const res = await app.request(CHANNELS, { headers: { Authorization: `Bearer ${u.key}` } });
    expect(((await res.json()) as any).data).toMatchObject({ available: { email: true, push: true, telegram: false, sms: true }, vapidPublicKey: 'BPublicKey' });
    // Where private endpoints are allowed, http:// is taken.
    const local = await app.request(PUSH, {
      method: 'POST', headers: { Authorization: `Bearer ${u.key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(browserSubscription('http://127.0.0.1:9/push/1')),
    });
    expect(local.status).toBe(201);
  });
});

describe('push subscriptions', () => {
  it('subscribes a browser, moves an endpoint subscribed again to its new user, and deletes only one\'s own', async () => {
    const a = await user();
    const b = await user();
    const browser = browserSubscription();
    const created = await t.json(PUSH, { key: a.key, method: 'POST', body: browser, headers: { 'User-Agent': 'Firefox/128.0' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.data.id;
    expect((await t.json(CHANNELS, { key: a.key })).body.data.pushSubscriptions).toEqual([{ id, userAgent: 'Firefox/128.0', createdAt: expect.any(Object) }]);

    // The same browser again, with new keys: the same subscription.
    const again = await t.json(PUSH, { key: a.key, method: 'POST', body: { ...browserSubscription(browser.endpoint) } });
    expect(again.body.data.id).toBe(id);
    const stored = await t.database.db.selectFrom('push_subscriptions').selectAll().where('endpoint', '=', browser.endpoint).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.p256dh).not.toBe(browser.keys.p256dh);

    // Another user signs in on that browser: it is theirs now, not a's.
    const moved = await t.json(PUSH, { key: b.key, method: 'POST', body: browserSubscription(browser.endpoint) });
    expect(moved.status).toBe(201);
    expect((await t.json(CHANNELS, { key: a.key })).body.data.pushSubscriptions).toEqual([]);
    expect((await t.json(CHANNELS, { key: b.key })).body.data.pushSubscriptions.map((s: any) => s.id)).toEqual([moved.body.data.id]);

    // a cannot delete b's.
    expect((await t.json(`${PUSH}/${moved.body.data.id}`, { key: a.key, method: 'DELETE' })).status).toBe(404);
    expect((await t.json(`${PUSH}/${moved.body.data.id}`, { key: b.testKey, method: 'DELETE' })).status).toBe(403);
    expect((await t.call(`${PUSH}/${moved.body.data.id}`, { key: b.key, method: 'DELETE' })).status).toBe(204);
    expect((await t.json(`${PUSH}/${moved.body.data.id}`, { key: b.key, method: 'DELETE' })).status).toBe(404);
    expect((await t.json(CHANNELS, { key: b.key })).body.data.pushSubscriptions).toEqual([]);
  });

  it('refuses endpoints that are not https and keys that are not a browser\'s', async () => {
    const u = await user();
    const good = browserSubscription();
    const refusals: Array<[unknown, RegExp]> = [
      [{ ...good, endpoint: 'http://push.example.com/send/1' }, /endpoint must be https:\/\/, not http:\/\//],
      [{ ...good, endpoint: 'https://127.0.0.1/push' }, /endpoint is at 127\.0\.0\.1, which notifications may not reach/],
      [{ ...good, endpoint: 'https://user:pw@push.example.com/x' }, /user name or password/],
      [{ ...good, endpoint: 'not a url' }, /endpoint is not a URL/],
      [{ ...good, endpoint: `https://push.example.com/${'x'.repeat(2048)}` }, /endpoint/],
      [{ ...good, keys: { ...good.keys, p256dh: randomBytes(65).toString('base64url') } }, /keys\.p256dh must be base64url of an uncompressed P-256 public key/],
      [{ ...good, keys: { ...good.keys, p256dh: `${good.keys.p256dh.slice(0, -4)}` } }, /keys\.p256dh/],
      [{ ...good, keys: { ...good.keys, auth: randomBytes(12).toString('base64url') } }, /keys\.auth must be base64url of 16 bytes/],
      [{ ...good, keys: { ...good.keys, auth: 'not base64!!!!!!!!!!!!' } }, /keys\.auth/],
      [{ endpoint: good.endpoint }, /keys is required/],
    ];
    for (const [body, error] of refusals) {
      const res = await t.json(PUSH, { key: u.key, method: 'POST', body });
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    const testMode = await t.json(PUSH, { key: u.testKey, method: 'POST', body: good });
    expect(testMode.status).toBe(403);
    expect((await t.json(CHANNELS, { key: u.key })).body.data.pushSubscriptions).toEqual([]);
  });

  it('takes at most 20 browsers per user', async () => {
    const u = await user();
    for (let i = 0; i < 20; i++) expect((await t.json(PUSH, { key: u.key, method: 'POST', body: browserSubscription() })).status).toBe(201);
    const res = await t.json(PUSH, { key: u.key, method: 'POST', body: browserSubscription() });
    expect(res.status).toBe(409);
    expectErrorEnvelope(res.body, /at most 20 browsers/);
  });
});

describe('report subscriptions', () => {
  it('are created with their next run, listed, changed (a new timing a new next run) and deleted', async () => {
    const { user: owner } = await t.fixtures.tenant('America/Mexico_City');
    const key = (await t.fixtures.key(owner.id, { permissions: ['reports:read', 'maintenance:read'] })).key;
    const before = Date.now();
    const daily = await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'daily', reports: ['geofences', 'trips', 'trips'], time: '07:00' } });
    expect(daily.status, JSON.stringify(daily.body)).toBe(201);
    expect(daily.body.data).toMatchObject({ frequency: 'daily', reports: ['trips', 'geofences'], time: '07:00', weekday: null, timezone: 'America/Mexico_City', enabled: true, lastRunAt: null });
    // Mexico City keeps UTC-6 all year: 07:00 there is 13:00 UTC, within the next day.
    expect(daily.body.data.nextRunAt.local).toMatch(/ 07:00$/);
    expect(daily.body.data.nextRunAt.utc).toMatch(/ 13:00$/);
    const next = parseDisplay(daily.body.data.nextRunAt.utc).getTime();
    expect(next).toBeGreaterThan(before - 60_000);
    expect(next).toBeLessThanOrEqual(before + 86_400_000);

    const weekly = await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'weekly', reports: ['maintenance'], time: '18:30', weekday: 5, timezone: 'Europe/Madrid' } });
    expect(weekly.status, JSON.stringify(weekly.body)).toBe(201);
    expect(weekly.body.data).toMatchObject({ frequency: 'weekly', reports: ['maintenance'], weekday: 5, timezone: 'Europe/Madrid' });
    // Its next run shows in the user's timezone (Mexico City): Friday 18:30 in Madrid is Friday 10:30 or 11:30 there.
    const weeklyUtc = parseDisplay(weekly.body.data.nextRunAt.utc);
    expect(weeklyUtc.getUTCDay()).toBe(5);
    expect(weeklyUtc.getTime() - before).toBeLessThanOrEqual(7 * 86_400_000);

    expect((await t.json(REPORTS, { key })).body.data.map((s: any) => s.id)).toEqual([daily.body.data.id, weekly.body.data.id]);

    const retimed = await t.json(`${REPORTS}/${daily.body.data.id}`, { key, method: 'PATCH', body: { time: '22:15' } });
    expect(retimed.status).toBe(200);
    expect(retimed.body.data).toMatchObject({ time: '22:15', nextRunAt: { local: expect.stringMatching(/ 22:15$/) } });
    const paused = await t.json(`${REPORTS}/${daily.body.data.id}`, { key, method: 'PATCH', body: { enabled: false } });
    expect(paused.body.data).toMatchObject({ enabled: false, nextRunAt: retimed.body.data.nextRunAt });
    const toWeekly = await t.json(`${REPORTS}/${daily.body.data.id}`, { key, method: 'PATCH', body: { frequency: 'weekly', weekday: 1 } });
    expect(toWeekly.body.data).toMatchObject({ frequency: 'weekly', weekday: 1 });
    expect(parseDisplay(toWeekly.body.data.nextRunAt.local).getUTCDay()).toBe(1);
    const toDaily = await t.json(`${REPORTS}/${daily.body.data.id}`, { key, method: 'PATCH', body: { frequency: 'daily' } });
    expect(toDaily.body.data).toMatchObject({ frequency: 'daily', weekday: null });

    expect((await t.call(`${REPORTS}/${weekly.body.data.id}`, { key, method: 'DELETE' })).status).toBe(204);
    expect((await t.json(`${REPORTS}/${weekly.body.data.id}`, { key, method: 'DELETE' })).status).toBe(404);
    expect((await t.json(REPORTS, { key })).body.data.map((s: any) => s.id)).toEqual([daily.body.data.id]);
  });

  it('refuses bad timings, reports the key may not read, another user\'s subscription, and more than 10', async () => {
    const { account, user: owner } = await t.fixtures.tenant('UTC');
    const key = (await t.fixtures.key(owner.id, { permissions: ['reports:read'] })).key;
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ frequency: 'weekly', reports: ['trips'], time: '07:00' }, /weekday is needed for a weekly report/],
      [{ frequency: 'daily', reports: ['trips'], time: '07:00', weekday: 2 }, /weekday goes only with a weekly report/],
      [{ frequency: 'daily', reports: ['trips'], time: '7:00' }, /time must be HH:mm/],
      [{ frequency: 'daily', reports: ['trips'], time: '24:00' }, /time must be HH:mm/],
      [{ frequency: 'daily', reports: ['speeding'], time: '07:00' }, /reports/],
      [{ frequency: 'daily', reports: [], time: '07:00' }, /reports/],
      [{ frequency: 'hourly', reports: ['trips'], time: '07:00' }, /frequency/],
      [{ frequency: 'weekly', reports: ['trips'], time: '07:00', weekday: 8 }, /weekday/],
      [{ frequency: 'daily', reports: ['trips'], time: '07:00', timezone: 'Moon/Base' }, /timezone must be an IANA time zone/],
    ];
    for (const [body, error] of refusals) {
      const res = await t.json(REPORTS, { key, method: 'POST', body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    const maintenance = await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'daily', reports: ['trips', 'maintenance'], time: '07:00' } });
    expect(maintenance.status).toBe(403);
    expectErrorEnvelope(maintenance.body, /lacks the maintenance:read permission, which the maintenance report needs/);
    const noReports = (await t.fixtures.key(owner.id, { permissions: ['vehicles:read'] })).key;
    expectErrorEnvelope((await t.json(REPORTS, { key: noReports, method: 'POST', body: { frequency: 'daily', reports: ['trips'], time: '07:00' } })).body, /lacks the reports:read permission/);
    // A user's own list and removal need no permission.
    expect((await t.json(REPORTS, { key: noReports })).status).toBe(200);

    const mine = (await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'daily', reports: ['trips'], time: '07:00' } })).body.data;
    const colleague = await t.fixtures.user(account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    expect((await t.json(`${REPORTS}/${mine.id}`, { key: colleagueKey, method: 'PATCH', body: { time: '08:00' } })).status).toBe(404);
    expect((await t.json(`${REPORTS}/${mine.id}`, { key: colleagueKey, method: 'DELETE' })).status).toBe(404);
    expect((await t.json(REPORTS, { key: colleagueKey })).body.data).toEqual([]);
    // The other mode's are apart.
    const testKey = (await t.fixtures.key(owner.id, { mode: 'test' })).key;
    expect((await t.json(REPORTS, { key: testKey })).body.data).toEqual([]);
    expect((await t.json(`${REPORTS}/${mine.id}`, { key: testKey, method: 'DELETE' })).status).toBe(404);

    for (let i = 1; i < 10; i++) expect((await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'daily', reports: ['trips'], time: '07:00' } })).status).toBe(201);
    const full = await t.json(REPORTS, { key, method: 'POST', body: { frequency: 'daily', reports: ['trips'], time: '07:00' } });
    expect(full.status).toBe(409);
    expectErrorEnvelope(full.body, /at most 10 report subscriptions/);
  });
});
