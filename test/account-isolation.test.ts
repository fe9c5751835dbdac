import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../db/event-log.ts';
import { documentedOperations, type OpenApiDocument } from './support/openapi-operations.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * Two accounts with the same names for everything (account, user, vehicles, geofences, drivers), each
 * with vehicles, travels, drivers, webhooks, commands, keys, OAuth clients, events, trips, positions
 * and audit entries in both modes. Every GET operation of the API is walked with each of the four
 * keys: no answer may hold anything of the other account, nor of the key's other mode (geofences
 * alone belong to the account, so both modes of it see them). Asking for another scope's ids by
 * their paths answers 404.
 */

interface Scope {
  label: string;
  account: 'A' | 'B';
  mode: 'live' | 'test';
  key: string;
  /** Strings found only in this scope's data (IMEI, plates, coordinates, URL, phone, key prefix, client id). */
  markers: string[];
  /** The ids its paths take. */
  ids: Record<string, string>;
}

let t: TestApp;
let doc: OpenApiDocument;
const scopes: Scope[] = [];
/** Markers of each account's geofences: the account's, seen by both its modes. */
const accountMarkers: Record<'A' | 'B', string[]> = { A: [], B: [] };

const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

async function ok(res: { status: number; body: any }, what: string) {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function buildScope(account: 'A' | 'B', accountId: number, userId: number, mode: 'live' | 'test', n: number): Promise<Scope> {
  const label = `${account}-${mode}`;
  const key = (await t.fixtures.key(userId, { mode, permissions: ['*', 'commands:write', 'keys:write'] })).key;
  const call = (path: string, method = 'GET', body?: unknown) => t.json(`/api/v1${path}`, { key, method, body });
  const lat = `19.${n}0${n}0${n}1`;
  const lng = `-99.${n}1${n}1${n}2`;
  const imei = `35${String(accountId).padStart(6, '0')}${String(n).padStart(7, '0')}`;
  const plates = `PL-${label}-${accountId}`;
  const phone = `+52 55 ${n}${n}${n}${n} 0000`;
  const url = `http://127.0.0.1:9/isolation/${accountId}/${label}`;

  await ok(await call('/vehicles', 'POST', { imei, name: 'Truck 1', plates, protocol: 'teltonika' }), `${label} vehicle`);
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
  const webhook = await ok(await call('/webhooks', 'POST', { url, events: ['*'] }), `${label} webhook`);
  const delivery = await ok(await call(`/webhooks/${webhook.data.id}/test`, 'POST'), `${label} ping`);
  const command = await ok(await call('/commands', 'POST', { deviceId: imei, type: 'siren_on' }), `${label} command`);
  const minted = await ok(await call('/api-keys', 'POST', { name: 'minted', permissions: ['devices:read'] }), `${label} key`);
  const client = await ok(await call('/oauth-clients', 'POST', { name: 'partner', scopes: ['devices:read'] }), `${label} client`);

  return {
    label, account, mode, key,
    markers: [imei, plates, lat, lng, url, phone, minted.data.prefix, client.data.clientId],
    ids: {
      deviceId: imei, vehicle: imei, travel: String(travel.data.travelId), driver: String(driver.data.id), webhook: String(webhook.data.id),
      delivery: String(delivery.data.id), command: String(command.data.id),
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
    // The account's geofence: one, seen by both modes.
    const geoKey = (await t.fixtures.key(user.id, { permissions: ['geofences:write'] })).key;
    const center = { lat: Number(`19.${n}9${n}9`), lng: Number(`-99.${n}8${n}8`) };
    const geofence = await ok(await t.json('/api/v1/geofences', { key: geoKey, method: 'POST', body: { name: 'Depot', type: 'circle', center, radiusMeters: 300 } }), `${account} geofence`);
    accountMarkers[account].push(String(center.lat), String(center.lng));
    for (const mode of ['live', 'test'] as const) {
      const scope = await buildScope(account, acct.id, user.id, mode, n++);
      scope.ids.geofence = String(geofence.data.id);
      scopes.push(scope);
    }
  }
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** The path of a GET operation for a scope's ids; undefined when it takes an id the scope has no kind of. */
function pathFor(path: string, ids: Record<string, string>): string {
  const idFor: Record<string, string> = {
    '/devices/{deviceId}/status': 'deviceId', '/geofences/{id}': 'geofence', '/travels/{id}': 'travel', '/vehicles/{id}': 'vehicle',
    '/vehicles/{id}/positions': 'vehicle', '/drivers/{id}': 'driver', '/webhooks/{id}': 'webhook', '/webhooks/{id}/deliveries': 'webhook',
    '/commands/{id}': 'command',
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
  };
  return filled + (query[path] ?? '');
}

/** What a scope must never see: the other account's everything, and its own account's other mode. */
function forbiddenFor(scope: Scope): string[] {
  const other = scopes.filter((s) => s !== scope && (s.account !== scope.account || s.mode !== scope.mode));
  const foreignAccount = scope.account === 'A' ? 'B' : 'A';
  return [...other.flatMap((s) => s.markers), ...accountMarkers[foreignAccount]];
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
        expect(res.status, `${scope.label} GET ${path}: ${text.slice(0, 300)}`).toBe(200);
        for (const marker of forbidden) if (text.includes(marker)) leaks.push(`${scope.label} GET ${path} shows ${marker}`);
      }
    }
    expect(leaks).toEqual([]);
  }, 120_000);

  it('show each key its own data where it has some, so the walk above saw real answers', async () => {
    const mustShow = ['/devices/status', '/vehicles', '/vehicles/{id}', '/vehicles/{id}/positions', '/reports/trips', '/drivers', '/drivers/{id}', '/webhooks', '/commands', '/commands/{id}', '/events', '/api-keys', '/oauth-clients', '/audit'];
    for (const scope of scopes) {
      for (const path of mustShow) {
        const res = await t.call(`/api/v1${pathFor(path, scope.ids)}`, { key: scope.key });
        const text = await res.text();
        expect(scope.markers.some((m) => text.includes(m)), `${scope.label} GET ${path} shows none of its own data: ${text.slice(0, 300)}`).toBe(true);
      }
      const geofences = await (await t.call('/api/v1/geofences', { key: scope.key })).text();
      expect(accountMarkers[scope.account].some((m) => geofences.includes(m))).toBe(true);
    }
  });

  it('answer 404 to a key asking for another scope\'s objects by id', async () => {
    const opened: string[] = [];
    for (const scope of scopes) {
      for (const other of scopes.filter((s) => s !== scope)) {
        for (const op of gets().filter((o) => o.path.includes('{'))) {
          // Geofences belong to the account: its other mode sees them by design.
          if (op.path === '/geofences/{id}' && other.account === scope.account) continue;
          const path = pathFor(op.path, other.ids);
          const res = await t.call(`/api/v1${path}`, { key: scope.key });
          if (res.status !== 404) opened.push(`${scope.label} GET ${path} (of ${other.label}): ${res.status}`);
        }
      }
    }
    expect(opened).toEqual([]);
  }, 120_000);
});
