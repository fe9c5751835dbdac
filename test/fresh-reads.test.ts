import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatestStateReads, MAX_AGE_MS } from '../api/fresh-reads/latest-state-reads.ts';
import { vehicleListPage } from '../api/fresh-reads/vehicle-list-page.ts';
import type { AccessScope } from '../db/access-scope.ts';
import { vehiclePage, VEHICLE_STATUSES, type VehicleStatus } from '../db/vehicles.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import { eventually } from './support/eventually.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

/**
 * GET /devices/status and GET /vehicles answer from a read at most a second old, shared by the
 * requests of one API process. These tests hold that cache to the database: pages cut in memory are
 * the pages the database would return, row for row, and what changes shows within the second (or at
 * once when it was written through the same API).
 */
const NAMES = [
  'Truck 1', 'truck 1', 'Truck 10', 'Truck 2', 'TRUCK 3', 'Álamo', 'alamo', 'Zeta', 'zeta', '_under', ' spaced', 'Ñandú', 'ñu', 'Éclair',
  'Van-7', 'Van 7', 'van.8', 'O\'Brien', 'Ørsted', 'Straße', 'STRASSE', 'İstanbul', '東京', 'Bus', 'bus', 'Bus 1', 'bus 10', 'a', 'B', 'c',
];
const thresholds = TEST_CONFIG.deviceStatus;

let t: TestApp;
let key: string;
let scope: AccessScope;

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant();
  key = tenant.key;
  scope = { accountId: tenant.account.id, userId: tenant.user.id, mode: 'live' };
  const random = seededRandom(42);
  const now = Date.now();
  for (const [i, name] of NAMES.entries()) {
    const device = await t.fixtures.device(tenant.account.id, { name, plates: `P-${i}${i % 3 === 0 ? 'x' : 'Y'}`, userIds: [tenant.user.id] });
    if (i % 7 === 6) continue; // never reported
    const lastReport = new Date(now - (i % 5 === 4 ? 3 * 3_600_000 : random() * 600_000));
    await t.fixtures.fix(device.id, {
      fixTime: lastReport, valid: true, latitude: 19 + random(), longitude: -99 - random(), speedKmh: i % 4 === 0 ? 0 : random() * 80, ignition: i % 3 !== 1,
    }, lastReport);
  }
  // Another user's vehicle in the same account: never in this user's list.
  const other = await t.fixtures.user(tenant.account.id);
  await t.fixtures.device(tenant.account.id, { name: 'Not mine', userIds: [other.id] });
}, 180_000);

afterAll(async () => {
  await t?.close();
});

describe('a page cut from the latest list', () => {
  const queries: Array<{ statuses?: VehicleStatus[]; q?: string; limit: number }> = [
    { limit: 50 }, { limit: 1 }, { limit: 7 }, { limit: 500 },
    { statuses: ['moving'], limit: 5 }, { statuses: ['stopped', 'off'], limit: 4 }, { statuses: ['inactive'], limit: 50 }, { statuses: [], limit: 10 },
    { q: 'truck', limit: 3 }, { q: 'T', limit: 6 }, { q: 'p-1', limit: 50 }, { q: 'Y', limit: 4 }, { q: 'nomatch', limit: 5 },
    { q: 'bus', statuses: ['moving', 'stopped'], limit: 2 },
  ];

  it('is the page the database returns, row for row, through every cursor of every query', async () => {
    const reads = new LatestStateReads(t.database.db, thresholds);
    const list = await reads.vehicleList(scope);
    expect(list.rows.map((r) => r.name)).not.toContain('Not mine');
    for (const query of queries) {
      let after: { name: string; imei: string } | undefined;
      for (let pages = 0; pages < 40; pages++) {
        const fromMemory = vehicleListPage(list, { ...query, after, thresholds });
        const fromDatabase = await vehiclePage(t.database.db, scope, { ...query, after, now: list.readAt, thresholds });
        expect(fromMemory, JSON.stringify({ query, after })).toEqual(fromDatabase.map((row) => expect.objectContaining(row)));
        if (fromDatabase.length <= query.limit) break;
        const last = fromDatabase[query.limit - 1]!;
        after = { name: last.name, imei: last.imei };
      }
    }
  });

  it('leaves to the database what only it can answer: a cursor at a place no longer in the list, a q beyond ASCII', async () => {
    const list = await new LatestStateReads(t.database.db, thresholds).vehicleList(scope);
    expect(vehicleListPage(list, { after: { name: 'Renamed meanwhile', imei: list.rows[0]!.imei }, limit: 5, thresholds })).toBeUndefined();
    expect(vehicleListPage(list, { q: 'álamo', limit: 5, thresholds })).toBeUndefined();
  });
});

describe('over HTTP', () => {
  it('pages GET /vehicles in the database order under every status filter', async () => {
    for (const status of [undefined, ...VEHICLE_STATUSES]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const params = new URLSearchParams({ limit: '4', ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
        const { status: code, body } = await t.json(`/api/v1/vehicles?${params}`, { key });
        expect(code).toBe(200);
        seen.push(...body.data.map((v: { id: string }) => v.id));
        cursor = body.next_cursor;
      } while (cursor);
      const all = await vehiclePage(t.database.db, scope, { statuses: status ? [status] : undefined, limit: 1000, now: new Date(), thresholds });
      expect(seen).toEqual(all.map((r) => r.imei));
    }
  });

  it('shows a write through the API in the very next answer', async () => {
    const { body: before } = await t.json('/api/v1/vehicles?limit=500', { key });
    const target = before.data[0].id as string;
    expect((await t.json(`/api/v1/vehicles/${target}`, { key, method: 'PATCH', body: { name: 'zz Renamed' } })).status).toBe(200);
    const { body: after } = await t.json('/api/v1/vehicles?limit=500', { key });
    expect(after.data.find((v: { id: string }) => v.id === target)).toMatchObject({ name: 'zz Renamed' });
    expect(after.data.map((v: { id: string }) => v.id).indexOf(target)).toBeGreaterThan(0);
    const { body: statuses } = await t.json('/api/v1/devices/status', { key });
    expect(statuses.data.find((d: { deviceId: string }) => d.deviceId === target).name).toBe('zz Renamed');
  });

  it('shows a fix stored by ingest (or anything written elsewhere) within a second, and says when it read', async () => {
    const { body: first } = await t.json('/api/v1/devices/status', { key });
    const device = first.data[1] as { deviceId: string; latitude: number | null };
    const row = await t.database.db.selectFrom('devices').select('id').where('imei', '=', device.deviceId).executeTakeFirstOrThrow();
    const fixTime = new Date();
    const written = Date.now();
    await t.fixtures.fix(row.id, { fixTime, valid: true, latitude: 10.5, longitude: 20.5, speedKmh: 33, ignition: true }, fixTime);
    const seen = await eventually(
      () => t.json('/api/v1/devices/status', { key }),
      ({ body }) => expect(body.data.find((d: { deviceId: string }) => d.deviceId === device.deviceId)).toMatchObject({ latitude: 10.5, longitude: 20.5 }),
      MAX_AGE_MS + 1_000,
    );
    // The answer's timestamp is when it was read: after the write, and at most a second before the answer.
    expect(Date.parse(seen.body.timestamp)).toBeGreaterThanOrEqual(written - MAX_AGE_MS);
    await eventually(
      () => t.json('/api/v1/vehicles?limit=500', { key }),
      ({ body }) => expect(body.data.find((v: { id: string }) => v.id === device.deviceId)).toMatchObject({ location: { lat: 10.5, lng: 20.5 }, status: 'moving' }),
      MAX_AGE_MS + 1_000,
    );
  });

  it('shares one read among many concurrent requests', async () => {
    const reads = new LatestStateReads(t.database.db, thresholds);
    const bodies = await Promise.all(Array.from({ length: 20 }, () => reads.statusList(scope)));
    expect(new Set(bodies).size).toBe(1);
  });
});
