import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { encodeIdCursor } from '../api/pagination/id-cursor.ts';
import { vehicleView } from '../api/views/vehicle-view.ts';
import { VEHICLE_STATUSES, vehiclePage } from '../db/vehicles.ts';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import { silentLogger } from '../runtime/logger.ts';
import { teltonikaCodec8, teltonikaLogin } from '../simulators/teltonika-packets.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';
import { eventually } from './support/eventually.ts';
import { runFleet } from './support/fleet-command.ts';
import { square } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// The vehicles resource as an integrator uses it: the specification's cursor-paginated list (its
// paging properties while vehicles come, go and change name, on two API instances), one vehicle in
// detail, and registering, changing and deleting trackers, with a real tracker logging in over TCP
// right after its registration.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const VEHICLES = '/api/v1/vehicles';
const RECORD_KEYS = ['id', 'location', 'name', 'speed_kmh', 'status', 'updated_at'];

let imeiSequence = 0;
const newImei = () => `35${String(process.pid).slice(-5).padStart(5, '0')}${String(++imeiSequence).padStart(8, '0')}`;

const list = (key: string, query = '', app?: App) =>
  app
    ? Promise.resolve(app.request(`${VEHICLES}${query}`, { headers: { Authorization: `Bearer ${key}` } })).then(async (res: Response) => ({ status: res.status, body: (await res.json()) as any }))
    : t.json(`${VEHICLES}${query}`, { key });
const post = (key: string, body: unknown) => t.json(VEHICLES, { key, method: 'POST', body });
const patch = (key: string, imei: string, body: unknown) => t.json(`${VEHICLES}/${imei}`, { key, method: 'PATCH', body });
const remove = (key: string, imei: string) => t.json(`${VEHICLES}/${imei}`, { key, method: 'DELETE' });
const detail = (key: string, imei: string) => t.json(`${VEHICLES}/${encodeURIComponent(imei)}`, { key });

/** Every page of the list, following next_cursor; `between` runs after each page (rows changing). */
async function pageThrough(key: string, query: string, limit: number, options: { between?: (page: number) => Promise<void>; apps?: Array<App | undefined> } = {}) {
  const pages: any[][] = [];
  let cursor: string | null = null;
  const apps = options.apps ?? [undefined];
  for (;;) {
    const sep = query ? '&' : '?';
    const { status, body } = await list(key, `${query}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, apps[pages.length % apps.length]);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['data', 'has_more', 'next_cursor']);
    expect(body.data.length).toBeLessThanOrEqual(limit);
    pages.push(body.data);
    if (!body.has_more) {
      expect(body.next_cursor).toBeNull();
      return pages;
    }
    expect(body.data.length).toBe(limit);
    expect(typeof body.next_cursor).toBe('string');
    cursor = body.next_cursor;
    await options.between?.(pages.length);
    if (pages.length > 1000) throw new Error('paging does not end');
  }
}

/** A deterministic generator, so a failing paging run can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

describe('GET /vehicles: the record and the envelope', () => {
  it('gives exactly the specification\'s record, with status and updated_at as GET /devices/status says', async () => {
    const { account, key } = await t.fixtures.tenant();
    const now = Date.now();
    const make = (name: string) => t.fixtures.device(account.id, { name });
    const moving = await make('A moving');
    const stopped = await make('B stopped');
    const off = await make('C off');
    const stale = await make('D stale');
    await make('E never reported');
    const fix = (lat: number, lng: number, extra: object) => ({ fixTime: new Date(now - 30_000), valid: true, latitude: lat, longitude: lng, ...extra });
    await t.fixtures.fix(moving.id, fix(19.4326, -99.1332, { speedKmh: 42.6, ignition: true }));
    await t.fixtures.fix(stopped.id, fix(19.4, -99.2, { speedKmh: 0, ignition: true }));
    await t.fixtures.fix(off.id, fix(19.41, -99.21, { speedKmh: 1.2, ignition: false }));
    await t.fixtures.fix(stale.id, { ...fix(19.42, -99.22, { speedKmh: 60, ignition: true }), fixTime: new Date(now - 3 * 3_600_000) }, new Date(now - 3 * 3_600_000));

    const { status, body } = await list(key);
    expect(status).toBe(200);
    expect(body).toMatchObject({ has_more: false, next_cursor: null });
    for (const record of body.data) expect(Object.keys(record).sort()).toEqual(RECORD_KEYS);
    expect(body.data.map((v: any) => [v.name, v.status, v.speed_kmh, v.location])).toEqual([
      ['A moving', 'moving', 43, { lat: 19.4326, lng: -99.1332 }],
      ['B stopped', 'stopped', 0, { lat: 19.4, lng: -99.2 }],
      ['C off', 'off', 1, { lat: 19.41, lng: -99.21 }],
      ['D stale', 'inactive', 60, { lat: 19.42, lng: -99.22 }],
      ['E never reported', 'inactive', null, null],
    ]);
    expect(body.data[4].updated_at).toBeNull();

    const devices = await t.json('/api/v1/devices/status', { key });
    const byImei = new Map(devices.body.data.map((d: any) => [d.deviceId, d]));
    for (const v of body.data) {
      const d = byImei.get(v.id) as any;
      expect(d, v.id).toBeDefined();
      expect(v.status).toBe(d.status.toLowerCase());
      expect(v.updated_at).toBe(d.lastReportUtc);
      expect(v.speed_kmh).toBe(d.speedKmh);
      expect(v.name).toBe(d.name);
    }
  });

  it('pages 50 by default, up to 500, and refuses other limits', async () => {
    const { account, key } = await t.fixtures.tenant();
    await t.database.db
      .insertInto('devices')
      .values(Array.from({ length: 55 }, (_, i) => ({ account_id: account.id, imei: newImei(), name: `Fleet ${String(i).padStart(2, '0')}`, plates: '', mode: 'live' as const })))
      .execute();
    const user = (await t.database.db.selectFrom('users').select('id').where('account_id', '=', account.id).executeTakeFirstOrThrow()).id;
    await sql`INSERT INTO user_device_grants (user_id, device_id) SELECT ${user}, id FROM devices WHERE account_id = ${account.id}`.execute(t.database.db);

    const first = await list(key);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.has_more).toBe(true);
    const rest = await list(key, `?cursor=${first.body.next_cursor}`);
    expect(rest.body.data.map((v: any) => v.name)).toEqual(['Fleet 50', 'Fleet 51', 'Fleet 52', 'Fleet 53', 'Fleet 54']);
    expect(rest.body).toMatchObject({ has_more: false, next_cursor: null });
    const all = await list(key, '?limit=500');
    expect(all.body.data).toHaveLength(55);
    expect(all.body.data.map((v: any) => v.name)).toEqual([...first.body.data, ...rest.body.data].map((v: any) => v.name));
    const exact = await list(key, '?limit=55');
    expect(exact.body).toMatchObject({ has_more: false, next_cursor: null });

    for (const bad of ['0', '501', '-1', '1.5', 'ten', '', '1e9', '99999999999999999999']) {
      const res = await list(key, `?limit=${bad}`);
      expect(res.status, bad).toBe(400);
      expectErrorEnvelope(res.body, /limit/);
    }
  });
});

describe('GET /vehicles: filters', () => {
  it('filters by status (one or several, any case) and by q on name or plates, case-insensitively', async () => {
    const { account, key } = await t.fixtures.tenant();
    const now = Date.now();
    const make = (name: string, plates: string) => t.fixtures.device(account.id, { name, plates });
    const camion = await make('Camión Norte', 'QRO-100-A');
    const van = await make('Van 50%', 'cdmx_77');
    const truck = await make('Truck 7', 'QRO-200-B');
    await make('Trailer', 'NL-300');
    await t.fixtures.fix(camion.id, { fixTime: new Date(now - 10_000), valid: true, latitude: 1, longitude: 1, speedKmh: 80, ignition: true });
    await t.fixtures.fix(van.id, { fixTime: new Date(now - 10_000), valid: true, latitude: 1, longitude: 1, speedKmh: 0, ignition: true });
    await t.fixtures.fix(truck.id, { fixTime: new Date(now - 10_000), valid: true, latitude: 1, longitude: 1, speedKmh: 0, ignition: false });

    const names = async (query: string) => {
      const res = await list(key, query);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((v: any) => v.name);
    };
    expect(await names('?status=moving')).toEqual(['Camión Norte']);
    expect(await names('?status=stopped')).toEqual(['Van 50%']);
    expect(await names('?status=off')).toEqual(['Truck 7']);
    expect(await names('?status=inactive')).toEqual(['Trailer']);
    expect(await names('?status=Moving,%20off')).toEqual(['Camión Norte', 'Truck 7']);
    expect(await names('?status=moving,stopped,off,inactive')).toHaveLength(4);

    expect(await names('?q=CAMIÓN')).toEqual(['Camión Norte']);
    expect(await names('?q=qro')).toEqual(['Camión Norte', 'Truck 7']);
    expect(await names('?q=qro&status=off')).toEqual(['Truck 7']);
    // Wildcards of LIKE are plain characters here.
    expect(await names(`?q=${encodeURIComponent('50%')}`)).toEqual(['Van 50%']);
    expect(await names('?q=%25')).toEqual(['Van 50%']);
    expect(await names('?q=x_7')).toEqual(['Van 50%']);
    expect(await names('?q=_')).toEqual(['Van 50%']);
    expect(await names('?q=nothing%20like%20it')).toEqual([]);
    expect(await names('?q=')).toHaveLength(4);

    for (const [query, error] of [
      ['?status=parked', /status: unknown value "parked"/],
      ['?status=', /status must list at least one value/],
      ['?status=,', /status must list at least one value/],
      [`?q=${'x'.repeat(101)}`, /q must be at most 100 characters/],
      ['?q=a%00b', /NUL/],
    ] as const) {
      const res = await list(key, query);
      expect(res.status, query).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
  });

  it('filters by status in SQL exactly as the records are classified, at the thresholds\' edges', async () => {
    const { account, user } = await t.fixtures.tenant();
    const base = Date.parse('2030-01-01T12:00:00.000Z');
    const states: Array<[string, { at?: number; speedKmh?: number | null; ignition?: boolean | null }]> = [
      ['never', {}],
      ['at 30 min, at 5 km/h', { at: base - 30 * 60_000, speedKmh: 5, ignition: false }],
      ['30 min + 1 ms', { at: base - 30 * 60_000 - 1, speedKmh: 50, ignition: true }],
      ['just under 5', { at: base - 1_000, speedKmh: 4.999999, ignition: true }],
      ['5.1 exactly', { at: base - 1_000, speedKmh: 5.1, ignition: null }],
      ['no speed, ignition on', { at: base - 1_000, speedKmh: null, ignition: true }],
      ['no speed, no ignition', { at: base - 1_000, speedKmh: null, ignition: null }],
      ['stopped, ignition off', { at: base - 1_000, speedKmh: 0, ignition: false }],
      ['fast', { at: base - 29 * 60_000, speedKmh: 120, ignition: true }],
      ['report in the future', { at: base + 60_000, speedKmh: 0, ignition: true }],
    ];
    for (const [name, s] of states) {
      const device = await t.fixtures.device(account.id, { name });
      if (s.at !== undefined) {
        await t.fixtures.fix(device.id, { fixTime: new Date(s.at), valid: true, latitude: 0, longitude: 0, speedKmh: s.speedKmh, ignition: s.ignition }, new Date(s.at));
      }
    }
    const scope = { accountId: account.id, userId: user.id, mode: 'live' as const };
    const grid: Array<[number, DeviceStatusThresholds]> = [
      [base, { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }],
      [base, { inactiveAfterMinutes: 30, movingSpeedKmh: 5.1 }],
      [base + 1, { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }],
      [base - 1, { inactiveAfterMinutes: 30, movingSpeedKmh: 4.999999 }],
      [base + 60_000, { inactiveAfterMinutes: 0.5, movingSpeedKmh: 0 }],
      [base - 120_000, { inactiveAfterMinutes: 1, movingSpeedKmh: 120.000001 }],
    ];
    const seen = new Set<string>();
    for (const [at, thresholds] of grid) {
      const now = new Date(at);
      const all = await vehiclePage(t.database.db, scope, { limit: 100, now, thresholds });
      const classified = new Map(all.map((row) => [row.name, vehicleView(row, now, thresholds).status]));
      for (const status of VEHICLE_STATUSES) {
        const filtered = await vehiclePage(t.database.db, scope, { limit: 100, now, thresholds, statuses: [status] });
        const expected = [...classified].filter(([, s]) => s === status).map(([n]) => n);
        expect(filtered.map((r) => r.name), `${status} at ${now.toISOString()} with ${JSON.stringify(thresholds)}`).toEqual(expected);
        if (expected.length > 0) seen.add(status);
      }
    }
    // The grid puts vehicles in every status, so each filter was compared on something.
    expect([...seen].sort()).toEqual([...VEHICLE_STATUSES].sort());
    const edge = await vehiclePage(t.database.db, scope, { limit: 100, now: new Date(base), thresholds: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 } });
    const at = (name: string) => vehicleView(edge.find((r) => r.name === name)!, new Date(base), { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }).status;
    expect([at('at 30 min, at 5 km/h'), at('30 min + 1 ms'), at('just under 5'), at('no speed, no ignition')]).toEqual(['moving', 'inactive', 'stopped', 'off']);
  });
});

describe('GET /vehicles: keyset paging', () => {
  it('concatenates its pages into the whole list, whatever the page size', async () => {
    const { account, key } = await t.fixtures.tenant();
    const random = prng(7);
    for (let i = 0; i < 23; i++) {
      await t.fixtures.device(account.id, { name: `${String.fromCharCode(65 + Math.floor(random() * 6))}-${Math.floor(random() * 1000)}-${i}`, plates: i % 3 === 0 ? 'QRO' : 'NL' });
    }
    const whole = (await list(key, '?limit=500')).body.data.map((v: any) => v.id);
    expect(whole).toHaveLength(23);
    for (const limit of [1, 2, 5, 22, 23, 24]) {
      const pages = await pageThrough(key, '', limit);
      expect(pages.flat().map((v: any) => v.id), `limit ${limit}`).toEqual(whole);
    }
    const filtered = (await list(key, '?q=qro&limit=500')).body.data.map((v: any) => v.id);
    expect(filtered).toHaveLength(8);
    expect((await pageThrough(key, '?q=qro', 3)).flat().map((v: any) => v.id)).toEqual(filtered);
  });

  it('returns no vehicle twice and skips none while vehicles are added, renamed and deleted, on two API processes', async () => {
    // A second app on the same database: the cursor holds no server state, so either continues it.
    const other = createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG });
    for (const seed of [1, 2, 3, 4, 5]) {
      const { account, key } = await t.fixtures.tenant();
      const random = prng(seed);
      const letter = () => String.fromCharCode(65 + Math.floor(random() * 26));
      const name = () => `${letter()}${letter()} ${Math.floor(random() * 100)}`;
      const used = new Set<string>();
      const freshName = () => {
        for (;;) {
          const n = name();
          if (!used.has(n)) {
            used.add(n);
            return n;
          }
        }
      };
      const initial: Array<{ imei: string; name: string }> = [];
      for (let i = 0; i < 30; i++) initial.push(await t.fixtures.device(account.id, { name: freshName() }));
      const renamed = new Set<string>();
      const deleted = new Set<string>();
      const added = new Set<string>();
      const alive = () => initial.filter((d) => !deleted.has(d.imei));

      const between = async () => {
        for (let k = 0; k < 3; k++) {
          const roll = random();
          if (roll < 0.4) {
            added.add((await t.fixtures.device(account.id, { name: freshName() })).imei);
          } else if (roll < 0.7) {
            const victim = alive()[Math.floor(random() * alive().length)]!;
            renamed.add(victim.imei);
            const res = await patch(key, victim.imei, { name: freshName() });
            expect(res.status).toBe(200);
          } else if (alive().length > 5) {
            const victim = alive()[Math.floor(random() * alive().length)]!;
            deleted.add(victim.imei);
            expect((await remove(key, victim.imei)).status).toBe(200);
          }
        }
      };
      const pages = await pageThrough(key, '', 4, { between, apps: [undefined, other] });
      const seen = pages.flat();
      const keys = seen.map((v: any) => `${v.name}\u0000${v.id}`);
      expect(new Set(keys).size, `seed ${seed}: a (name, id) twice`).toBe(keys.length);
      const count = new Map<string, number>();
      for (const v of seen) count.set(v.id, (count.get(v.id) ?? 0) + 1);
      for (const [imei, n] of count) if (n > 1) expect(renamed.has(imei), `seed ${seed}: ${imei} seen ${n} times without a rename`).toBe(true);
      const throughout = initial.filter((d) => !deleted.has(d.imei) && !renamed.has(d.imei));
      for (const d of throughout) expect(count.get(d.imei), `seed ${seed}: ${d.name} skipped`).toBe(1);
      for (const imei of count.keys()) expect(initial.some((d) => d.imei === imei) || added.has(imei), `seed ${seed}: ${imei} is not a vehicle of this key`).toBe(true);
      // Each seed really changed rows mid-paging.
      expect(renamed.size + deleted.size + added.size, `seed ${seed}`).toBeGreaterThan(5);
    }
  }, 120_000);

  it('gives the same pages from two API processes, and each continues the other\'s cursor', async () => {
    const { account, key } = await t.fixtures.tenant();
    for (let i = 0; i < 9; i++) await t.fixtures.device(account.id, { name: `Unit ${i}` });
    const other = createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG });
    const one = await pageThrough(key, '', 2);
    const two = await pageThrough(key, '', 2, { apps: [other] });
    const alternating = await pageThrough(key, '', 2, { apps: [other, undefined] });
    const ids = (pages: any[][]) => pages.map((p) => p.map((v: any) => v.id));
    expect(ids(two)).toEqual(ids(one));
    expect(ids(alternating)).toEqual(ids(one));
    const first = await list(key, '?limit=4');
    const fromOther = await list(key, `?limit=4&cursor=${first.body.next_cursor}`, other);
    expect(fromOther.body.next_cursor).toBe((await list(key, `?limit=4&cursor=${first.body.next_cursor}`)).body.next_cursor);
  });

  it('refuses a damaged or edited cursor, one of another list, user or mode, and one sent with other filters', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    for (let i = 0; i < 5; i++) await t.fixtures.device(account.id, { name: `Rig ${i}`, plates: 'QRO' });
    const cursor = (await list(key, '?limit=2')).body.next_cursor as string;
    const filteredCursor = (await list(key, '?limit=2&status=inactive&q=rig')).body.next_cursor as string;
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as string[];
    expect(decoded[3]).toBe('Rig 1');
    const reencode = (text: string) => Buffer.from(text).toString('base64url');
    const edited = (at: number, value: string) => reencode(JSON.stringify(decoded.map((v, i) => (i === at ? value : v))));
    const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
    // A colleague's cursor, and one of the same user's test-mode list: other lists.
    const colleague = await t.fixtures.user(account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    await t.fixtures.device(account.id, { name: 'Rig shared', userIds: [user.id, colleague.id] });
    await t.fixtures.device(account.id, { name: 'Rig shared 2', userIds: [colleague.id] });
    const colleagueCursor = (await list(colleagueKey, '?limit=1')).body.next_cursor as string;
    const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;
    for (let i = 0; i < 2; i++) await t.fixtures.device(account.id, { name: `Test rig ${i}`, mode: 'test', userIds: [user.id] });
    const testCursor = (await list(testKey, '?limit=1')).body.next_cursor as string;
    const refused: Array<[string, RegExp]> = [
      [flipped, /cursor/],
      // The position edited, structure kept: the checksum no longer holds.
      [edited(3, 'Rig 0'), /cursor/],
      [edited(4, '000000000000000'), /cursor/],
      [edited(0, 'drivers'), /cursor/],
      [colleagueCursor, /cursor is not one this list returned/],
      [testCursor, /cursor is not one this list returned/],
      [cursor.slice(0, -3), /cursor/],
      ['not a cursor!', /cursor/],
      ['x'.repeat(5000), /cursor/],
      [encodeIdCursor('webhooks', '12'), /cursor/],
      [Buffer.from('e1:desc:99').toString('base64url'), /cursor/],
      [reencode(JSON.stringify(['vehicles', 'x', 'Rig 1', '35000000000000\u0000'])), /cursor/],
      [reencode(JSON.stringify([...decoded.slice(0, 5), 1])), /cursor/],
      [reencode(JSON.stringify(decoded.slice(0, 5))), /cursor/],
      [reencode(JSON.stringify({ list: 'vehicles' })), /cursor/],
      [reencode('[]'), /cursor/],
      [filteredCursor, /other filters/],
    ];
    for (const [bad, error] of refused) {
      const res = await list(key, `?limit=2&cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad.slice(0, 60)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    // The same filters (in any order and case) take their own cursor back.
    const again = await list(key, `?limit=2&q=rig&status=INACTIVE&cursor=${filteredCursor}`);
    expect(again.status).toBe(200);
    expect(again.body.data.map((v: any) => v.name)).toEqual(['Rig 2', 'Rig 3']);
  });
});

describe('visibility, modes and permissions', () => {
  it('lists only the vehicles granted to the key\'s user, of the key\'s mode', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const colleague = await t.fixtures.user(account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;
    const stranger = await t.fixtures.tenant();
    await t.fixtures.device(account.id, { name: 'Mine', userIds: [user.id] });
    await t.fixtures.device(account.id, { name: 'Shared', userIds: [user.id, colleague.id] });
    await t.fixtures.device(account.id, { name: 'Theirs', userIds: [colleague.id] });
    const testRig = await t.fixtures.device(account.id, { name: 'Mine', mode: 'test', userIds: [user.id] });
    const foreign = await t.fixtures.device(stranger.account.id, { name: 'Foreign' });

    const names = async (k: string) => (await list(k)).body.data.map((v: any) => v.name);
    expect(await names(key)).toEqual(['Mine', 'Shared']);
    expect(await names(colleagueKey)).toEqual(['Shared', 'Theirs']);
    expect((await list(testKey)).body.data.map((v: any) => v.id)).toEqual([testRig.imei]);
    expect(await names(stranger.key)).toEqual(['Foreign']);

    for (const [k, imei] of [[key, foreign.imei], [key, testRig.imei], [testKey, foreign.imei], [stranger.key, testRig.imei], [key, '000000000000000']] as const) {
      for (const res of [await detail(k, imei), await patch(k, imei, { name: 'Stolen' }), await remove(k, imei)]) {
        expect(res.status).toBe(404);
        expectErrorEnvelope(res.body, 'Vehicle not found or no access');
      }
    }
    expect((await detail(stranger.key, foreign.imei)).body.data.name).toBe('Foreign');
  });

  it('needs vehicles:read to read and vehicles:write to change', async () => {
    const { account, user } = await t.fixtures.tenant();
    const device = await t.fixtures.device(account.id, { name: 'Guarded' });
    const reader = (await t.fixtures.key(user.id, { permissions: ['vehicles:read'] })).key;
    const devicesOnly = (await t.fixtures.key(user.id, { permissions: ['devices:read', 'vehicles:write'] })).key;
    expect((await list(reader)).status).toBe(200);
    expect((await detail(reader, device.imei)).status).toBe(200);
    for (const res of [await post(reader, { imei: newImei(), name: 'Nope' }), await patch(reader, device.imei, { name: 'Nope' }), await remove(reader, device.imei)]) {
      expect(res.status).toBe(403);
      expectErrorEnvelope(res.body, 'This API key lacks the vehicles:write permission');
    }
    for (const res of [await list(devicesOnly), await detail(devicesOnly, device.imei)]) {
      expect(res.status).toBe(403);
      expectErrorEnvelope(res.body, 'This API key lacks the vehicles:read permission');
    }
  });
});

describe('GET /vehicles/{id}', () => {
  it('adds plates, protocol, speed limit, the current driver, an unknown driver key and the users', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const colleague = await t.fixtures.user(account.id);
    const created = await post(key, { imei: newImei(), name: 'Detailed', plates: 'DET-1', protocol: 'gt06', speed_limit_kmh: 90, user_ids: [colleague.id] });
    expect(created.status).toBe(201);
    const imei = created.body.data.id;
    const bare = (await detail(key, imei)).body.data;
    expect(bare).toEqual({
      id: imei, name: 'Detailed', status: 'inactive', speed_kmh: null, location: null, updated_at: null,
      plates: 'DET-1', protocol: 'gt06', speed_limit_kmh: 90, fuel_tank_litres: null, driver: null, unknown_driver_identifier: null, unknown_driver_seen_at: null,
      user_ids: [user.id, colleague.id].sort((a, b) => a - b), groups: [], address: null, odometer_km: null, engine_hours: null,
    });

    // Drivers and assignments as the drivers' engine part writes them (their API is its own resource).
    const db = t.database.db;
    const device = await db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow();
    const driver = (id: string, name: string) => db.insertInto('drivers').values({ account_id: account.id, mode: 'live', name, identifier: id }).returning('id').executeTakeFirstOrThrow();
    const before = await driver(`OLD-${imei}`, 'Former Driver');
    const now = await driver(`NOW-${imei}`, 'Ana López');
    await db.insertInto('driver_assignments').values([
      { driver_id: before.id, device_id: device.id, since: new Date('2024-05-01T08:00:00Z'), until: new Date('2024-05-01T09:00:00Z'), source: 'telemetry' },
      { driver_id: now.id, device_id: device.id, since: new Date('2024-05-01T09:00:00Z'), until: null, source: 'manual' },
    ]).execute();
    await db.updateTable('devices').set({ unknown_driver_identifier: '01A2B3C4D5E6F701', unknown_driver_seen_at: new Date('2024-05-01T10:00:00Z') }).where('id', '=', device.id).execute();
    await t.fixtures.fix(device.id, { fixTime: new Date(), valid: true, latitude: 19.5, longitude: -99.1, speedKmh: 12.4, ignition: true });

    const { status, body } = await detail(key, imei);
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({
      status: 'moving', speed_kmh: 12, location: { lat: 19.5, lng: -99.1 },
      driver: { id: now.id, name: 'Ana López', identifier: `NOW-${imei}`, since: '2024-05-01T09:00:00.000Z' },
      unknown_driver_identifier: '01A2B3C4D5E6F701', unknown_driver_seen_at: '2024-05-01T10:00:00.000Z',
    });
    const fromList = (await list(key, `?q=Detailed`)).body.data[0];
    expect(Object.fromEntries(RECORD_KEYS.map((k) => [k, body.data[k]]))).toEqual(fromList);

    await db.updateTable('driver_assignments').set({ until: new Date('2024-05-01T11:00:00Z') }).where('driver_id', '=', now.id).execute();
    expect((await detail(key, imei)).body.data.driver).toBeNull();
  });

  it('answers 400 for an id no IMEI can be, and 404 for one nobody has', async () => {
    const { key } = await t.fixtures.tenant();
    const long = await detail(key, '9'.repeat(65));
    expect(long.status).toBe(400);
    expectErrorEnvelope(long.body);
    const nul = await t.json(`${VEHICLES}/35%00123`, { key });
    expect(nul.status).toBe(400);
    expectErrorEnvelope(nul.body, /NUL/);
    const odd = await detail(key, 'no such vehicle');
    expect(odd.status).toBe(404);
    expectErrorEnvelope(odd.body, 'Vehicle not found or no access');
  });
});

describe('POST /vehicles', () => {
  it('registers in the key\'s account and mode, visible to the key\'s user and the users named', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const colleague = await t.fixtures.user(account.id);
    const outsider = await t.fixtures.user(account.id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    const outsiderKey = (await t.fixtures.key(outsider.id)).key;
    const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;

    const imei = newImei();
    const { status, body } = await post(key, { imei, name: '  Van 3  ', plates: 'VAN-3', protocol: 'teltonika', user_ids: [colleague.id, colleague.id] });
    expect(status).toBe(201);
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({ id: imei, name: 'Van 3', plates: 'VAN-3', protocol: 'teltonika', speed_limit_kmh: null, status: 'inactive', user_ids: [user.id, colleague.id].sort((a, b) => a - b) });
    const row = await t.database.db.selectFrom('devices').selectAll().where('imei', '=', imei).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_id: account.id, mode: 'live' });
    expect((await list(colleagueKey)).body.data.map((v: any) => v.id)).toEqual([imei]);
    expect((await list(outsiderKey)).body.data).toEqual([]);
    // The detailed endpoints see it at once.
    expect((await t.json(`/api/v1/devices/${imei}/status`, { key })).body.data).toMatchObject({ deviceId: imei, name: 'Van 3', status: 'Inactive' });

    const testImei = newImei();
    const testRig = await post(testKey, { imei: testImei, name: 'Van 3' });
    expect(testRig.status).toBe(201);
    expect((await t.database.db.selectFrom('devices').select('mode').where('imei', '=', testImei).executeTakeFirstOrThrow()).mode).toBe('test');
    expect((await list(testKey)).body.data.map((v: any) => v.id)).toEqual([testImei]);
    expect((await list(key)).body.data.map((v: any) => v.id)).toEqual([imei]);
  });

  it('refuses a taken IMEI (in any account) or name (in the account and mode) with 409', async () => {
    const { key } = await t.fixtures.tenant();
    const other = await t.fixtures.tenant();
    const imei = newImei();
    expect((await post(key, { imei, name: 'First' })).status).toBe(201);
    const sameImei = await post(other.key, { imei, name: 'Elsewhere' });
    expect(sameImei.status).toBe(409);
    expectErrorEnvelope(sameImei.body, `a device with IMEI ${imei} already exists`);
    const sameName = await post(key, { imei: newImei(), name: 'First' });
    expect(sameName.status).toBe(409);
    expectErrorEnvelope(sameName.body, /named "First" already exists/);
    expect((await post(other.key, { imei: newImei(), name: 'First' })).status).toBe(201);
  });

  it('says what is wrong with a body, and never answers 500', async () => {
    const { key } = await t.fixtures.tenant();
    const stranger = await t.fixtures.tenant();
    const cases: Array<[unknown, RegExp]> = [
      [{}, /imei is required/],
      [{ imei: newImei() }, /name is required/],
      [{ imei: 'has space', name: 'x' }, /imei must be 1 to 32/],
      [{ imei: '1'.repeat(33), name: 'x' }, /imei must be 1 to 32/],
      [{ imei: 358000000000001, name: 'x' }, /imei must be a string/],
      [{ imei: newImei(), name: '   ' }, /name must not be empty/],
      [{ imei: newImei(), name: 'n'.repeat(201) }, /at most 200/],
      [{ imei: newImei(), name: 'a\u0000b' }, /NUL/],
      [{ imei: newImei(), name: 'x', plates: 'p\u0000' }, /NUL/],
      [{ imei: newImei(), name: 'x', plates: 'p'.repeat(41) }, /plates must be at most 40/],
      [{ imei: newImei(), name: 'x', protocol: 'carrier-pigeon' }, /protocol/],
      [{ imei: newImei(), name: 'x', speed_limit_kmh: 0 }, /speed_limit_kmh must be above 0/],
      [{ imei: newImei(), name: 'x', speed_limit_kmh: 1e9 }, /at most 1000/],
      [{ imei: newImei(), name: 'x', speed_limit_kmh: '90' }, /speed_limit_kmh must be a number/],
      [{ imei: newImei(), name: 'x', fuel_tank_litres: 0 }, /fuel_tank_litres must be above 0/],
      [{ imei: newImei(), name: 'x', fuel_tank_litres: 20_000 }, /fuel_tank_litres must be at most 10000/],
      [{ imei: newImei(), name: 'x', user_ids: [stranger.user.id] }, new RegExp(`user ${stranger.user.id} does not belong`)],
      [{ imei: newImei(), name: 'x', user_ids: [0] }, /user_ids/],
      [{ imei: newImei(), name: 'x', user_ids: [99999999999] }, /user_ids/],
      [{ imei: newImei(), name: 'x', user_ids: 'all' }, /user_ids/],
      [{ imei: newImei(), name: 'x', mode: 'test' }, /mode/],
      [{ imei: newImei(), name: 'x', userIds: [1] }, /userIds/],
      [[], /expected object/],
    ];
    for (const [body, error] of cases) {
      const res = await post(key, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    const broken = await t.json(VEHICLES, { key, method: 'POST', body: '{"imei": ' });
    expect(broken.status).toBe(400);
    const text = await t.json(VEHICLES, { key, method: 'POST', body: 'imei=1', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await list(key)).body.data).toEqual([]);
  });

  it('creates the same rows as `fleet device add`', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const viaApi = await post(key, { imei: newImei(), name: 'Via API', plates: 'SAME-1', protocol: 'teltonika', speed_limit_kmh: 80 });
    expect(viaApi.status).toBe(201);
    const cliImei = newImei();
    const run = await runFleet(
      ['device', 'add', '--account', String(account.id), '--imei', cliImei, '--name', 'Via CLI', '--plates', 'SAME-1', '--users', String(user.id), '--protocol', 'teltonika', '--speed-limit', '80', '--json'],
      t.database.env,
    );
    expect(run.code, run.stderr).toBe(0);

    const db = t.database.db;
    const device = (imei: string) => db.selectFrom('devices').selectAll().where('imei', '=', imei).executeTakeFirstOrThrow();
    const [api, cli] = [await device(viaApi.body.data.id), await device(cliImei)];
    const comparable = ({ id, imei, name, created_at, ...rest }: typeof api) => rest;
    expect(comparable(api)).toEqual(comparable(cli));
    // Every table that holds rows per device holds the same rows for both.
    const tables = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns
      WHERE column_name = 'device_id' AND table_schema = current_schema() ORDER BY table_name`.execute(db);
    expect(tables.rows.map((r) => r.table_name)).toContain('device_states');
    for (const { table_name } of tables.rows) {
      const rows = async (id: number) =>
        (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table_name)} WHERE device_id = ${id}`.execute(db)).rows.map(({ device_id, ...rest }) => rest);
      expect(await rows(api.id), table_name).toEqual(await rows(cli.id));
    }
    const state = await db.selectFrom('device_states').selectAll().where('device_id', '=', api.id).executeTakeFirstOrThrow();
    expect(state).toMatchObject({ fix_time: null, last_report_at: null, latitude: null });
  }, 120_000);
});

describe('a tracker registered through the API', () => {
  let ingest: TestIngest;
  beforeAll(async () => {
    ingest = await startTestIngest(t.database);
  });
  afterAll(async () => {
    await ingest?.close();
  });

  it('is accepted by the running ingest at its first login right after POST, and its fix shows in the list', async () => {
    const { key } = await t.fixtures.tenant();
    const imei = newImei();
    expect((await post(key, { imei, name: 'Fresh tracker', protocol: 'teltonika' })).status).toBe(201);
    const tracker = await scriptedTracker(ingest.port, imei);
    try {
      const time = await tracker.report({ latitude: 19.4326, longitude: -99.1332, speedKmh: 55 });
      const { body } = await list(key);
      expect(body.data).toEqual([{ id: imei, name: 'Fresh tracker', status: 'moving', speed_kmh: 55, location: { lat: 19.4326, lng: -99.1332 }, updated_at: expect.any(String) }]);
      expect(Date.parse(body.data[0].updated_at)).toBeGreaterThanOrEqual(time.getTime() - 1_000);
    } finally {
      tracker.close();
    }
  });

  it('is accepted within seconds when it had been refused as unknown just before', async () => {
    const { key } = await t.fixtures.tenant();
    const imei = newImei();
    const early = await rawTracker(ingest.port);
    early.send(teltonikaLogin(imei));
    expect([...(await early.read(1))]).toEqual([0]);
    early.end();
    expect((await post(key, { imei, name: 'Late registration' })).status).toBe(201);
    const started = Date.now();
    const tracker = await eventually(
      () => scriptedTracker(ingest.port, imei).catch((error: Error) => error),
      (result) => expect(result).not.toBeInstanceOf(Error),
      15_000,
    );
    // The ingest remembers an unknown IMEI for 5 s (ingest/device-registry.ts).
    expect(Date.now() - started).toBeLessThan(7_000);
    (tracker as Exclude<typeof tracker, Error>).close();
  }, 30_000);

  it('stops being stored once deleted: its next frame is not acknowledged, and nothing is written', async () => {
    const { key } = await t.fixtures.tenant();
    const imei = newImei();
    expect((await post(key, { imei, name: 'Soon gone' })).status).toBe(201);
    const deviceId = (await t.database.db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow()).id;
    const tracker = await rawTracker(ingest.port);
    try {
      tracker.send(teltonikaLogin(imei));
      expect([...(await tracker.read(1))]).toEqual([1]);
      const frame = (latitude: number) => teltonikaCodec8([{ time: new Date(), latitude, longitude: 10, speedKmh: 30, heading: 0, satellites: 8, ignition: true }]);
      tracker.send(frame(10));
      expect(await tracker.read(4)).toHaveLength(4);
      expect((await remove(key, imei)).status).toBe(200);
      tracker.send(frame(10.1));
      expect(await tracker.read(4)).toHaveLength(0);
      expect(await tracker.closedByServer()).toBe(true);
    } finally {
      tracker.end();
    }
    for (const table of ['positions', 'device_states', 'ingest_dead_letters'] as const) {
      const rows = await t.database.db.selectFrom(table).select('device_id').where('device_id', '=', deviceId).execute();
      expect(rows, table).toEqual([]);
    }
  }, 30_000);
});

describe('PATCH /vehicles/{id}', () => {
  it('changes only the fields given, and replaces the users while keeping the key\'s own', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const [ana, ben] = [await t.fixtures.user(account.id), await t.fixtures.user(account.id)];
    const stranger = await t.fixtures.tenant();
    const imei = newImei();
    await post(key, { imei, name: 'Before', plates: 'OLD', protocol: 'gt06', speed_limit_kmh: 70, user_ids: [ana.id] });
    const ids = (...u: number[]) => u.sort((a, b) => a - b);

    const renamed = await patch(key, imei, { name: 'After', plates: 'NEW' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'After', plates: 'NEW', protocol: 'gt06', speed_limit_kmh: 70, user_ids: ids(user.id, ana.id) });
    const tank = await patch(key, imei, { fuel_tank_litres: 82.5 });
    expect(tank.body.data).toMatchObject({ name: 'After', speed_limit_kmh: 70, fuel_tank_litres: 82.5 });
    const cleared = await patch(key, imei, { protocol: null, speed_limit_kmh: null, fuel_tank_litres: null });
    expect(cleared.body.data).toMatchObject({ name: 'After', protocol: null, speed_limit_kmh: null, fuel_tank_litres: null });
    const regranted = await patch(key, imei, { user_ids: [ben.id] });
    expect(regranted.body.data.user_ids).toEqual(ids(user.id, ben.id));
    expect((await patch(key, imei, { user_ids: [] })).body.data.user_ids).toEqual([user.id]);
    const unchanged = await patch(key, imei, {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data).toMatchObject({ name: 'After', plates: 'NEW', user_ids: [user.id] });

    await post(key, { imei: newImei(), name: 'Taken' });
    const taken = await patch(key, imei, { name: 'Taken' });
    expect(taken.status).toBe(409);
    expectErrorEnvelope(taken.body, /named "Taken" already exists/);
    const foreign = await patch(key, imei, { user_ids: [ana.id, stranger.user.id] });
    expect(foreign.status).toBe(400);
    expectErrorEnvelope(foreign.body, new RegExp(`user ${stranger.user.id} does not belong`));
    expect((await detail(key, imei)).body.data.user_ids).toEqual([user.id]);
    for (const [body, error] of [[{ imei: newImei() }, /imei/], [{ name: '' }, /name must not be empty/], [{ speed_limit_kmh: -1 }, /above 0/], [{ name: 42 }, /name must be a string/]] as const) {
      const res = await patch(key, imei, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expectErrorEnvelope(res.body, error);
    }
    expect((await detail(key, imei)).body.data).toMatchObject({ id: imei, name: 'After' });
  });
});

describe('DELETE /vehicles/{id}', () => {
  it('is refused while a travel is Scheduled or In progress, then deletes the vehicle and its history', async () => {
    const { account, key } = await t.fixtures.tenant();
    await t.fixtures.geofence(account.id, 'Depot', square(19.5, -99.1, 0.01));
    const imei = newImei();
    await post(key, { imei, name: 'Busy truck' });
    const deviceId = (await t.database.db.selectFrom('devices').select('id').where('imei', '=', imei).executeTakeFirstOrThrow()).id;
    await t.fixtures.fix(deviceId, { fixTime: new Date(Date.now() - 60_000), valid: true, latitude: 19.4, longitude: -99.1 });
    await sql`INSERT INTO positions (device_id, fix_time, valid, latitude, longitude) VALUES (${deviceId}, now() - interval '1 minute', true, 19.4, -99.1)`.execute(t.database.db);
    const travel = await t.json('/api/v1/travels', {
      key, method: 'POST', body: { vehicle: 'Busy truck', startTime: '01/05/2030 08:00', waypoints: [{ geofence: 'Depot', expectedArrival: '01/05/2030 09:00' }] },
    });
    expect(travel.status).toBe(200);
    const travelId = travel.body.data.travelId;

    const refused = await remove(key, imei);
    expect(refused.status).toBe(409);
    expectErrorEnvelope(refused.body, `vehicle ${imei} has active travel ${travelId} (Scheduled); cancel it first`);
    await t.database.db.updateTable('travels').set({ status: 1 }).where('id', '=', travelId).execute();
    expectErrorEnvelope((await remove(key, imei)).body, /\(In progress\)/);
    expect((await detail(key, imei)).status).toBe(200);

    expect((await t.json(`/api/v1/travels/${travelId}`, { key, method: 'DELETE' })).status).toBe(200);
    const deleted = await remove(key, imei);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ success: true, data: { id: imei, deleted: true } });
    expect((await detail(key, imei)).status).toBe(404);
    expect((await remove(key, imei)).status).toBe(404);
    expect((await list(key)).body.data).toEqual([]);
    // Nothing is left of it anywhere but in the event log (positions have no foreign key to cascade).
    const tables = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns
      WHERE column_name = 'device_id' AND table_schema = current_schema() AND table_name <> 'events' ORDER BY table_name`.execute(t.database.db);
    expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(['positions', 'device_states', 'travels', 'user_devices']));
    for (const { table_name } of tables.rows) {
      const rows = await sql`SELECT 1 FROM ${sql.table(table_name)} WHERE device_id = ${deviceId}`.execute(t.database.db);
      expect(rows.rows, table_name).toEqual([]);
    }
    // The IMEI is free again.
    expect((await post(key, { imei, name: 'Busy truck' })).status).toBe(201);
  });
});
