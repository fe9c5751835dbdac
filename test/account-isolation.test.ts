import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../api/auth/password-hash.ts';
import { appendEvents } from '../db/event-log.ts';
import { storeMedia } from '../db/media.ts';
import { setPasswordHash } from '../db/user-passwords.ts';
import { fanOutEvents } from '../db/webhook-deliveries.ts';
import { WRITE_CASES, type IsolationScope as Scope, type Request, type WriteAttempt } from './support/isolation-write-cases.ts';
import { documentedOperations, type OpenApiDocument } from './support/openapi-operations.ts';
import { scopeSnapshot } from './support/scope-snapshot.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * Two accounts with the same names for everything (account, user, vehicles, geofences, drivers), each
 * with vehicles, geofences, travels, drivers, webhooks, commands, keys, OAuth clients, events, trips,
 * positions and audit entries in both modes. Every GET operation of the API is walked with each of the
 * four keys: no answer may hold anything of the other account, nor of the key's other mode. Asking for
 * another scope's ids by their paths answers 404. Every write operation (POST, PUT, PATCH, DELETE) is
 * walked with each key against each other scope's objects (test/support/isolation-write-cases.ts):
 * answered as if they did not exist, and none of the other scope's rows written.
 */

let t: TestApp;
let doc: OpenApiDocument;
const scopes: Scope[] = [];

const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

async function ok(res: { status: number; body: any }, what: string) {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const PASSWORD = 'isolation password 1';

/** A session of the user, signed in with PASSWORD: its id, cookie and CSRF token. */
async function signIn(email: string): Promise<Scope['session']> {
  const res = await t.call('/api/v1/auth/sign-in', { method: 'POST', body: { email, password: PASSWORD } });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`sign-in of ${email}: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.data.session.id, cookie: res.headers.get('Set-Cookie')!.split(';')[0]!, csrf: body.data.csrfToken };
}

async function buildScope(
  account: 'A' | 'B', accountId: number, user: { id: number; email: string; session: Scope['session'] }, mode: 'live' | 'test', n: number,
): Promise<Scope> {
  const userId = user.id;
  const label = `${account}-${mode}`;
  const key = (await t.fixtures.key(userId, { mode, permissions: ['*', 'commands:write', 'keys:write', 'audit:read', 'users:read', 'users:write'] })).key;
  const call = (path: string, method = 'GET', body?: unknown) => t.json(`/api/v1${path}`, { key, method, body });
  const lat = `19.${n}0${n}0${n}1`;
  const lng = `-99.${n}1${n}1${n}2`;
  const imei = `35${String(accountId).padStart(6, '0')}${String(n).padStart(7, '0')}`;
  const vanImei = `36${String(accountId).padStart(6, '0')}${String(n).padStart(7, '0')}`;
  const plates = `PL-${label}-${accountId}`;
  const phone = `+52 55 ${n}${n}${n}${n} 0000`;
  const url = `http://127.0.0.1:9/isolation/${accountId}/${label}`;
  const only = {
    van: `Van ${label}-${accountId}`, vanImei, yard: `Yard ${label}-${accountId}`, identifier: `ONLY-${label}-${accountId}`, url, idempotencyKey: `order-${label}-${accountId}`,
  };

  // The scope's own geofence, named as every other scope's: created in the key's mode.
  const center = { lat: Number(`19.${n}9${n}9`), lng: Number(`-99.${n}8${n}8`) };
  const geofence = await ok(await call('/geofences', 'POST', { name: 'Depot', type: 'circle', center, radiusMeters: 300 }), `${label} geofence`);
  const yardCenter = { lat: Number(`18.${n}7${n}7`), lng: Number(`-98.${n}6${n}6`) };
  await ok(await call('/geofences', 'POST', { name: only.yard, type: 'circle', center: yardCenter, radiusMeters: 300 }), `${label} yard`);
  await ok(await call('/vehicles', 'POST', { imei, name: 'Truck 1', plates, protocol: 'teltonika' }), `${label} vehicle`);
  await ok(await call('/vehicles', 'POST', { imei: vanImei, name: only.van, plates: `${plates}-VAN`, protocol: 'teltonika' }), `${label} van`);
  const device = await t.database.db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow();
  const fixTime = new Date(Date.now() - 10 * 60_000);
  await t.fixtures.fix(device.id, { fixTime, valid: true, latitude: Number(lat), longitude: Number(lng), speedKmh: 0, ignition: true });
  await t.database.db.insertInto('positions').values({ device_id: device.id, fix_time: fixTime, valid: true, latitude: Number(lat), longitude: Number(lng), altitude: null, speed_kmh: 0, heading: null, satellites: null, ignition: true, attributes: '{}' }).execute();
  const ago = (m: number) => new Date(Date.now() - m * 60_000);
  await t.database.db.insertInto('trips').values({
    device_id: device.id, start_time: ago(120), end_time: ago(60), last_fix_time: ago(60), start_lat: Number(lat), start_lng: Number(lng), end_lat: Number(lat), end_lng: Number(lng),
    start_geofence: null, end_geofence: null, distance_m: 1000, driving_s: 600, idle_s: 0, overspeed_s: 0, max_speed_kmh: 40, harsh_events: 0, driver_id: null,
  }).execute();
  await appendEvents(t.database.db, [{
    type: 'vehicle.ignition.on', occurredAt: fixTime, deviceId: device.id,
    position: { lat: Number(lat), lng: Number(lng), speedKmh: 0, heading: null, fixTime }, dedupeKey: `isolation:${label}:${accountId}`,
  }]);

  const start = new Date(Date.now() + 86_400_000);
  const local = (d: Date) => `${String(d.getUTCDate()).padStart(2, '0')}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${d.getUTCFullYear()} 08:00`;
  const travel = await ok(await call('/travels', 'POST', { vehicle: 'Truck 1', startTime: local(start), waypoints: [{ geofence: 'Depot', expectedArrival: local(new Date(start.getTime() + 86_400_000)) }] }), `${label} travel`);
  const driver = await ok(await call('/drivers', 'POST', { name: 'Ana', identifier: 'KEY-1', phone }), `${label} driver`);
  await ok(await call(`/drivers/${driver.data.id}/assignment`, 'POST', { vehicleId: imei }), `${label} assignment`);
  await ok(await call('/drivers', 'POST', { name: 'Bea', identifier: only.identifier }), `${label} second driver`);
  const webhook = await ok(await call('/webhooks', 'POST', { url, events: ['*'] }), `${label} webhook`);
  const delivery = await ok(await call(`/webhooks/${webhook.data.id}/test`, 'POST'), `${label} ping`);
  const command = await ok(await call('/commands', 'POST', { deviceId: imei, type: 'siren_on', idempotencyKey: only.idempotencyKey }), `${label} command`);
  const minted = await ok(await call('/api-keys', 'POST', { name: 'minted', permissions: ['devices:read'] }), `${label} key`);
  const client = await ok(await call('/oauth-clients', 'POST', { name: 'partner', scopes: ['devices:read'] }), `${label} client`);
  const item = await ok(await call('/maintenance', 'POST', { vehicleId: imei, name: 'Oil change', kind: 'odometer', interval: 10_000, from: 0 }), `${label} maintenance`);
  await ok(await call(`/maintenance/${item.data.id}/services`, 'POST', { odometerKm: 0 }), `${label} service`);
  const group = await ok(await call('/groups', 'POST', { name: 'Depot group', vehicle_ids: [imei], user_ids: [userId] }), `${label} group`);
  const ruleName = `Rule ${label}-${accountId}`;
  const rule = await ok(await call('/notification-rules', 'POST', {
    name: ruleName, events: ['vehicle.geofence.*'], vehicles: { scope: 'groups', groupIds: [group.data.id] }, geofenceIds: [geofence.data.id], recipients: [{ userId, channels: ['email'] }],
  }), `${label} rule`);
  const report = await ok(await call('/users/me/report-subscriptions', 'POST', { frequency: 'daily', reports: ['trips'], time: '07:00' }), `${label} report`);
  const browser = await t.database.db.insertInto('push_subscriptions')
    .values({ user_id: userId, endpoint: `https://push.example.com/isolation/${label}-${accountId}`, p256dh: 'B', auth: 'a', user_agent: null }).returning('id').executeTakeFirstOrThrow();
  // A picture from the truck's tracker, its bytes carrying the scope's plates.
  const picture = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xfe, 0, 2 + plates.length]), Buffer.from(plates), Buffer.from([0xff, 0xd9])]);
  const { media } = await storeMedia(t.database.db, {
    deviceId: device.id, takenAt: null, contentType: 'image/jpeg', fileName: `photo-${label}.jpg`, sha256: createHash('sha256').update(picture).digest('hex'),
    protocol: 'meitrack', commandId: null, bytes: picture,
  });

  return {
    label, account, accountId, userId, email: user.email, session: user.session, mode, key, only, credentials: [minted.data.prefix, client.data.clientId],
    markers: [
      imei, vanImei, plates, lat, lng, url, phone, minted.data.prefix, client.data.clientId, String(center.lat), String(center.lng), String(yardCenter.lat), only.yard, only.identifier,
      media.sha256, ruleName,
    ],
    ids: {
      vehicle: imei, geofence: String(geofence.data.id), travel: String(travel.data.travelId), driver: String(driver.data.id), webhook: String(webhook.data.id),
      delivery: String(delivery.data.id), command: String(command.data.id), apiKey: String(minted.data.id), oauthClient: String(client.data.id),
      maintenance: String(item.data.id), media: media.id, group: String(group.data.id), user: String(userId),
      notificationRule: String(rule.data.id), reportSubscription: String(report.data.id), pushSubscription: String(browser.id),
    },
  };
}

beforeAll(async () => {
  t = await startTestApp();
  doc = (await (await t.call('/api/v1/openapi.json')).json()) as OpenApiDocument;
  let n = 1;
  for (const account of ['A', 'B'] as const) {
    const acct = await t.fixtures.account('Acme Logistics');
    const user = await t.fixtures.user(acct.id);
    await t.database.db.updateTable('users').set({ name: 'Dispatch' }).where('id', '=', user.id).execute();
    await setPasswordHash(t.database.db, user.id, await hashPassword(PASSWORD));
    const signedIn = { id: user.id, email: user.email, session: await signIn(user.email) };
    for (const mode of ['live', 'test'] as const) scopes.push(await buildScope(account, acct.id, signedIn, mode, n++));
  }
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** The path of a GET operation for a scope's ids. */
function pathFor(path: string, ids: Scope['ids']): string {
  const idFor: Record<string, keyof Scope['ids']> = {
    '/devices/{deviceId}/status': 'vehicle', '/geofences/{id}': 'geofence', '/travels/{id}': 'travel', '/vehicles/{id}': 'vehicle',
    '/vehicles/{id}/positions': 'vehicle', '/vehicles/{id}/accumulators': 'vehicle', '/drivers/{id}': 'driver', '/webhooks/{id}': 'webhook', '/webhooks/{id}/deliveries': 'webhook',
    '/commands/{id}': 'command', '/maintenance/{id}': 'maintenance', '/maintenance/{id}/services': 'maintenance', '/media/{id}': 'media',
    '/groups/{id}': 'group', '/users/{id}': 'user', '/notification-rules/{id}': 'notificationRule', '/notification-rules/{id}/deliveries': 'notificationRule',
  };
  let filled = path.replace('{deliveryId}', ids.delivery!);
  const kind = path === '/webhooks/{id}/deliveries/{deliveryId}' ? 'webhook' : idFor[path];
  if (kind) filled = filled.replace(/\{\w+\}/, ids[kind]!);
  const query: Record<string, string> = {
    '/reports/geofences': `?from=${yesterday}&to=${tomorrow}`,
    '/reports/trips': `?from=${yesterday}&to=${tomorrow}`,
    '/vehicles/{id}/positions': `?from=${yesterday}&to=${tomorrow}`,
    '/events': '?limit=200',
    '/commands': '?limit=500',
    '/audit': '?limit=500',
    '/api-keys': '?limit=100',
    '/vehicles': '?limit=500',
    '/media': `?vehicleId=${ids.vehicle}`,
  };
  return filled + (query[path] ?? '');
}

/** What a scope must never see: the other account's everything, and its own account's other mode. */
function forbiddenFor(scope: Scope): string[] {
  return scopes.filter((s) => s !== scope).flatMap((s) => s.markers);
}

/** The whole answer as text; a stream is read for a moment (it replays the log first). */
async function answerText(res: Response): Promise<string> {
  if (!/event-stream/.test(res.headers.get('content-type') ?? '')) return res.text();
  const reader = res.body!.getReader();
  let text = '';
  const until = Date.now() + 800;
  while (Date.now() < until) {
    const chunk = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 200))]);
    if (chunk && 'value' in chunk && chunk.value) text += new TextDecoder().decode(chunk.value);
    if (chunk && 'done' in chunk && chunk.done) break;
  }
  await reader.cancel();
  return text;
}

const gets = () => documentedOperations(doc).filter((o) => o.method === 'get' && o.path !== '/openapi.json');

describe('two accounts with the same names, each in both modes', () => {
  it('are walked over every GET operation the document lists', () => {
    expect(gets().length).toBeGreaterThanOrEqual(24);
  });

  it('show each key only its own account and mode', async () => {
    const leaks: string[] = [];
    for (const scope of scopes) {
      const forbidden = forbiddenFor(scope);
      for (const op of gets()) {
        const path = pathFor(op.path, scope.ids);
        const res = await t.call(`/api/v1${path}`, { key: scope.key, headers: op.path === '/events/stream' ? { 'Last-Event-ID': '0' } : {} });
        const text = await answerText(res);
        // The session's own endpoints answer a key 400 (not a session).
        expect(res.status, `${scope.label} GET ${path}: ${text.slice(0, 300)}`).toBe(op.path.startsWith('/auth/') ? 400 : 200);
        for (const marker of forbidden) if (text.includes(marker)) leaks.push(`${scope.label} GET ${path} shows ${marker}`);
      }
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it('show each account\'s signed-in session only its account\'s live data, over every GET operation', async () => {
    const leaks: string[] = [];
    for (const scope of scopes.filter((s) => s.mode === 'live')) {
      // A session manages its user's keys and OAuth clients of both modes: the user's test-mode ones
      // are its own on those lists (and only there).
      const ownTestCredentials = scopes.filter((s) => s.account === scope.account && s.userId === scope.userId && s !== scope).flatMap((s) => s.credentials);
      for (const op of gets()) {
        const path = pathFor(op.path, scope.ids);
        const credentialList = /^\/(api-keys|oauth-clients)(\/|$)/.test(op.path);
        const forbidden = forbiddenFor(scope).filter((m) => !(credentialList && ownTestCredentials.includes(m)));
        const headers: Record<string, string> = { Cookie: scope.session.cookie, ...(op.path === '/events/stream' ? { 'Last-Event-ID': '0' } : {}) };
        const res = await t.call(`/api/v1${path}`, { headers });
        const text = await answerText(res);
        expect(res.status, `${scope.account}'s session GET ${path}: ${text.slice(0, 300)}`).toBe(200);
        for (const marker of forbidden) if (text.includes(marker)) leaks.push(`${scope.account}'s session GET ${path} shows ${marker}`);
      }
      const own = await (await t.call('/api/v1/vehicles?limit=500', { headers: { Cookie: scope.session.cookie } })).text();
      expect(own, `${scope.account}'s session sees its live vehicle`).toContain(scope.ids.vehicle);
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it('show each key its own data where it has some, so the walk above saw real answers', async () => {
    const mustShow = [
      '/devices/status', '/vehicles', '/vehicles/{id}', '/vehicles/{id}/positions', '/vehicles/{id}/accumulators', '/geofences', '/geofences/{id}', '/reports/trips', '/drivers', '/drivers/{id}',
      '/webhooks', '/commands', '/commands/{id}', '/events', '/api-keys', '/oauth-clients', '/audit', '/maintenance', '/maintenance/{id}', '/media', '/media/{id}',
      '/groups', '/groups/{id}', '/notification-rules', '/notification-rules/{id}',
    ];
    for (const scope of scopes) {
      for (const path of mustShow) {
        const res = await t.call(`/api/v1${pathFor(path, scope.ids)}`, { key: scope.key });
        const text = await res.text();
        expect(scope.markers.some((m) => text.includes(m)), `${scope.label} GET ${path} shows none of its own data: ${text.slice(0, 300)}`).toBe(true);
      }
    }
  });

  it('answer 404 to a key asking for another scope\'s objects by id', async () => {
    const opened: string[] = [];
    for (const scope of scopes) {
      for (const other of scopes.filter((s) => s !== scope)) {
        for (const op of gets().filter((o) => o.path.includes('{'))) {
          // The account's users are the same in both its modes.
          if (op.path === '/users/{id}' && other.accountId === scope.accountId) continue;
          const path = pathFor(op.path, other.ids);
          const res = await t.call(`/api/v1${path}`, { key: scope.key });
          if (res.status !== 404) opened.push(`${scope.label} GET ${path} (of ${other.label}): ${res.status}`);
        }
      }
    }
    expect(opened).toEqual([]);
  }, 120_000);
});

const WRITE_METHODS = ['post', 'put', 'patch', 'delete'];
const writes = () => documentedOperations(doc).filter((o) => WRITE_METHODS.includes(o.method));

async function send(key: string, request: Request): Promise<{ status: number; text: string; body: any }> {
  // A session's cookie counts only on a request with no key.
  const res = await t.call(`/api/v1${request.path}`, { key: request.headers?.Cookie ? undefined : key, method: request.method, body: request.body, headers: request.headers });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: compared as text.
  }
  return { status: res.status, text, body };
}

/** An answer's error with its ids and numbers left out: at another scope's object and at none, the same. */
const errorOf = (answer: { body: any; text: string }) => String(answer.body?.error ?? answer.text).replace(/\d+/g, '#');

/** The top-level parts of two snapshots that differ: what a write changed. */
function changedParts(before: string, after: string): string[] {
  const a = JSON.parse(before) as Record<string, unknown>;
  const b = JSON.parse(after) as Record<string, unknown>;
  return Object.keys({ ...a, ...b }).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/** What is wrong with the answer to one attempt, and (for one that creates) removes what it made. */
async function judge(attacker: Scope, victim: Scope, attempt: WriteAttempt): Promise<string[]> {
  const wrong: string[] = [];
  const answer = await send(attacker.key, attempt);
  if (answer.status !== attempt.status) wrong.push(`answered ${answer.status} (expected ${attempt.status}): ${answer.text.slice(0, 200)}`);
  // What the request carried may come back (a name, a URL); nothing else of the victim may.
  const sent = JSON.stringify([attempt.path, attempt.body ?? null]);
  for (const marker of victim.markers) if (!sent.includes(marker) && answer.text.includes(marker)) wrong.push(`shows ${marker}`);
  if (attempt.nowhere) {
    const nowhere = await send(attacker.key, { method: attempt.method, ...attempt.nowhere });
    if (nowhere.status !== answer.status) wrong.push(`answered ${answer.status}, but ${nowhere.status} for nothing there: ${answer.text.slice(0, 200)}`);
    else if (answer.status >= 400 && errorOf(answer) !== errorOf(nowhere)) wrong.push(`told apart from nothing there: "${answer.body?.error}" vs "${nowhere.body?.error}"`);
    if (attempt.undo && nowhere.status < 300) await send(attacker.key, attempt.undo(nowhere.body.data));
  } else if (attempt.error !== undefined && answer.body?.error !== attempt.error) {
    wrong.push(`said "${answer.body?.error}" instead of only "${attempt.error}"`);
  }
  if (attempt.undo && answer.status < 300) await send(attacker.key, attempt.undo(answer.body.data));
  return wrong;
}

describe('every write operation, with each key at each other scope\'s objects', () => {
  it('has a case for every write operation the document lists, and none for one it does not', () => {
    const ids = writes().map((o) => o.id);
    expect(ids.filter((id) => !(id in WRITE_CASES)), 'write operations without a case in test/support/isolation-write-cases.ts').toEqual([]);
    expect(Object.keys(WRITE_CASES).filter((id) => !ids.includes(id)), 'cases of operations the document does not list').toEqual([]);
    expect(ids.length).toBeGreaterThanOrEqual(26);
  });

  it('is answered as if the object did not exist, and writes nothing of the other scope', async () => {
    const found: string[] = [];
    let attempts = 0;
    for (const attacker of scopes) {
      for (const victim of scopes.filter((s) => s !== attacker)) {
        let before = await scopeSnapshot(t.database.db, victim.accountId, victim.mode);
        for (const op of writes()) {
          for (const attempt of WRITE_CASES[op.id]?.(attacker, victim) ?? []) {
            attempts++;
            const where = `${attacker.label} at ${victim.label}: ${op.id}, ${attempt.what}`;
            for (const wrong of await judge(attacker, victim, attempt)) found.push(`${where}: ${wrong}`);
            const after = await scopeSnapshot(t.database.db, victim.accountId, victim.mode);
            if (after !== before) found.push(`${where}: wrote the victim's ${changedParts(before, after).join(', ')}`);
            before = after;
          }
        }
      }
    }
    expect(found).toEqual([]);
    expect(attempts).toBeGreaterThanOrEqual(12 * 30);
  }, 600_000);
});

describe('two users of one account with different vehicle groups', () => {
  // In account A, live: Ana's group holds one van, Ben's another; Ana is also granted a third van
  // directly. Each van has a fix, a position in the history, a trip and an event; Ana and Ben each have
  // a webhook. Each must see their own group's van (and Ana her direct grant) over every GET operation
  // (status, vehicles, history, events, reports, their webhook's deliveries), nothing of the other's,
  // and 404 for the other's van and webhook by id.
  interface Member { name: string; key: string; van: string; vanName: string; markers: string[]; webhook: string; delivery: string; events: string[] }
  const members: Member[] = [];
  let direct = '';

  beforeAll(async () => {
    const a = scopes.find((s) => s.label === 'A-live')!;
    const admin = (path: string, method = 'GET', body?: unknown) => t.json(`/api/v1${path}`, { key: a.key, method, body });
    for (const [n, name] of [[7, 'Ana'], [8, 'Ben'], [9, 'Direct']] as const) {
      const imei = `37${String(a.accountId).padStart(6, '0')}${String(n).padStart(7, '0')}`;
      const vanName = `Group van ${name}-${a.accountId}`;
      await ok(await admin('/vehicles', 'POST', { imei, name: vanName, plates: `GV-${name}-${a.accountId}` }), `${name} van`);
      const device = await t.database.db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow();
      let member: Member | undefined;
      if (name !== 'Direct') {
        const user = await t.fixtures.user(a.accountId);
        const key = (await t.fixtures.key(user.id, { mode: 'live', permissions: ['*', 'commands:write'] })).key;
        await ok(await admin('/groups', 'POST', { name: `Group of ${name}`, vehicle_ids: [imei], user_ids: [user.id] }), `${name} group`);
        // Registered before the van's event, so the event is the webhook's to deliver.
        const webhook = await ok(await t.json('/api/v1/webhooks', { key, method: 'POST', body: { url: `http://127.0.0.1:9/group/${name}`, events: ['*'] } }), `${name} webhook`);
        member = { name, key, van: imei, vanName, markers: [imei, vanName, `GV-${name}-${a.accountId}`], webhook: String(webhook.data.id), delivery: '', events: [] };
        members.push(member);
      } else {
        direct = imei;
      }
      const fixTime = new Date(Date.now() - 5 * 60_000);
      const [lat, lng] = [Number(`20.${n}1${n}1${n}`), Number(`-100.${n}2${n}2${n}`)];
      await t.fixtures.fix(device.id, { fixTime, valid: true, latitude: lat, longitude: lng, speedKmh: 0, ignition: true });
      await t.database.db.insertInto('positions').values({
        device_id: device.id, fix_time: fixTime, valid: true, latitude: lat, longitude: lng, altitude: null, speed_kmh: 0, heading: null, satellites: null, ignition: true, attributes: '{}',
      }).execute();
      const ago = (m: number) => new Date(Date.now() - m * 60_000);
      await t.database.db.insertInto('trips').values({
        device_id: device.id, start_time: ago(90), end_time: ago(30), last_fix_time: ago(30), start_lat: lat, start_lng: lng, end_lat: lat, end_lng: lng,
        start_geofence: null, end_geofence: null, distance_m: 2000, driving_s: 900, idle_s: 0, overspeed_s: 0, max_speed_kmh: 50, harsh_events: 0, driver_id: null,
      }).execute();
      await appendEvents(t.database.db, [{
        type: 'vehicle.ignition.on', occurredAt: fixTime, deviceId: device.id,
        position: { lat, lng, speedKmh: 0, heading: null, fixTime }, dedupeKey: `isolation:group:${name}:${a.accountId}`,
      }]);
      member?.markers.push(String(lat), String(lng));
    }
    // What the webhook worker does first: each event becomes a delivery to every webhook whose user sees its vehicle.
    await fanOutEvents(t.database.db, 100_000, 60_000);
    for (const member of members) {
      const device = await t.database.db.selectFrom('devices').select('id').where('imei', '=', member.van).executeTakeFirstOrThrow();
      member.events = (await t.database.db.selectFrom('events').select('id').where('device_id', '=', device.id).execute()).map((e) => String(e.id));
      const deliveries = await ok(await t.json(`/api/v1/webhooks/${member.webhook}/deliveries`, { key: member.key }), `${member.name} deliveries`);
      member.delivery = String(deliveries.data[0]?.id ?? '');
    }
  }, 60_000);

  it('each sees its own group\'s vehicle and nothing of the other\'s, over every GET operation', async () => {
    const a = scopes.find((s) => s.label === 'A-live')!;
    const leaks: string[] = [];
    for (const member of members) {
      const other = members.find((m) => m !== member)!;
      const ids = { ...a.ids, vehicle: member.van, webhook: member.webhook, delivery: member.delivery };
      for (const op of gets()) {
        const path = pathFor(op.path, ids);
        const res = await t.call(`/api/v1${path}`, { key: member.key, headers: op.path === '/events/stream' ? { 'Last-Event-ID': '0' } : {} });
        const text = await answerText(res);
        for (const marker of other.markers) if (text.includes(marker)) leaks.push(`${member.name} GET ${path} shows ${marker}`);
      }
      const range = `from=${yesterday}&to=${tomorrow}`;
      const mustShow = [
        '/devices/status', '/vehicles?limit=500', '/events?limit=200', `/vehicles/${member.van}`, `/devices/${member.van}/status`,
        `/vehicles/${member.van}/positions?${range}`, `/reports/trips?${range}`,
      ];
      for (const path of mustShow) {
        const text = await (await t.call(`/api/v1${path}`, { key: member.key })).text();
        if (!text.includes(member.van) && !member.markers.slice(3).some((m) => text.includes(m))) leaks.push(`${member.name} GET ${path} does not show its group's vehicle`);
      }
      // Its webhook is sent its own van's events, and none of the other's.
      const delivered = ((await t.json(`/api/v1/webhooks/${member.webhook}/deliveries?limit=100`, { key: member.key })).body.data as any[]).map((d) => d.eventId);
      if (!member.events.every((e) => delivered.includes(e))) leaks.push(`${member.name}'s webhook was not sent its van's events ${member.events} (sent ${delivered})`);
      for (const e of other.events) if (delivered.includes(e)) leaks.push(`${member.name}'s webhook was sent ${other.name}'s event ${e}`);
      for (const op of gets().filter((o) => o.path.includes('{id}') || o.path.includes('{deviceId}'))) {
        const otherPath = ({
          '/vehicles/{id}': `/vehicles/${other.van}`, '/vehicles/{id}/positions': `/vehicles/${other.van}/positions?${range}`, '/vehicles/{id}/accumulators': `/vehicles/${other.van}/accumulators`,
          '/devices/{deviceId}/status': `/devices/${other.van}/status`, '/webhooks/{id}': `/webhooks/${other.webhook}`, '/webhooks/{id}/deliveries': `/webhooks/${other.webhook}/deliveries`,
          '/webhooks/{id}/deliveries/{deliveryId}': `/webhooks/${other.webhook}/deliveries/${other.delivery}`,
        } as Record<string, string>)[op.path];
        if (!otherPath) continue;
        const res = await t.call(`/api/v1${otherPath}`, { key: member.key });
        if (res.status !== 404) leaks.push(`${member.name} GET ${otherPath} (${other.name}'s): ${res.status}`);
      }
    }
    expect(members.map((m) => [m.name, m.events.length > 0, m.delivery !== ''])).toEqual([['Ana', true, true], ['Ben', true, true]]);
    expect(leaks).toEqual([]);
  }, 120_000);

  it('adds a direct grant to what a group gives, and takes the group\'s vehicle away when the group lets go', async () => {
    const a = scopes.find((s) => s.label === 'A-live')!;
    const [ana, ben] = members;
    const anaUser = (await t.json('/api/v1/groups', { key: a.key })).body.data.find((g: any) => g.name === 'Group of Ana');
    await ok(await t.json(`/api/v1/vehicles/${direct}`, { key: a.key, method: 'PATCH', body: { user_ids: anaUser.user_ids } }), 'direct grant');
    const seen = async (key: string) => ((await t.json('/api/v1/vehicles?limit=500', { key })).body.data as any[]).map((v) => v.id).sort();
    expect(await seen(ana!.key)).toEqual([ana!.van, direct].sort());
    expect(await seen(ben!.key)).toEqual([ben!.van]);
    await ok(await t.json(`/api/v1/groups/${anaUser.id}`, { key: a.key, method: 'PATCH', body: { vehicle_ids: [] } }), 'empty group');
    expect(await seen(ana!.key)).toEqual([direct]);
    expect((await t.call(`/api/v1/vehicles/${ana!.van}`, { key: ana!.key })).status).toBe(404);
    await ok(await t.json(`/api/v1/groups/${anaUser.id}`, { key: a.key, method: 'PATCH', body: { vehicle_ids: [ana!.van] } }), 'group again');
  });
});
