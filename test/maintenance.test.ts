import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMaintenance } from '../engine/workers/check-maintenance.ts';
import { addDays, utcDate } from '../domain/maintenance/maintenance-schedule.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startEngine, type RunningEngine } from '../engine/start-engine.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { silentLogger } from '../runtime/logger.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, testQueues, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Real Teltonika trackers over TCP drive vehicles past their maintenance items' thresholds; the
// engine's maintenance check (every 200 ms here) logs the events, read back through GET /events.

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
let accountId: number;
let userId: number;
let make: ReturnType<typeof fixtures>;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, { ...ENGINE_TEST_SETTINGS, maintenanceCheckMs: 200 });
  make = fixtures(database.db);
  const tenant = await make.tenant();
  key = tenant.key;
  accountId = tenant.account.id;
  userId = tenant.user.id;
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${init.key ?? key}`, ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function ok(path: string, init: { method?: string; body?: unknown } = {}, status = 200) {
  const res = await api(path, init);
  expect(res.status, `${init.method ?? 'GET'} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** The vehicle's maintenance events, oldest first. */
async function maintenanceEvents(imei: string) {
  return (await ok(`/events?types=vehicle.maintenance.*&deviceIds=${imei}&order=asc&limit=500`)).data as any[];
}

const evaluatedThrough = (deviceId: number, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', deviceId).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBeGreaterThanOrEqual(time.getTime()),
  );

/** A few check intervals: long enough for the repeated job to have run several times. */
const checksPass = () => new Promise((r) => setTimeout(r, 1_000));

describe('an oil change every 10,000 km on a tracker that reports its own odometer', () => {
  const imei = '358007042470001';
  let deviceId: number;
  let tracker: Awaited<ReturnType<typeof scriptedTracker>>;
  let itemId: number;
  const fixes: Array<{ time: Date; latitude: number; longitude: number; odometer: number; speedKmh: number }> = [];
  let t = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
  const reportKm = async (km: number) => {
    t += 60_000;
    const fix = { time: new Date(t), latitude: 19.43 + fixes.length * 0.001, longitude: -99.13, odometer: km * 1000, speedKmh: 50 };
    fixes.push(fix);
    await tracker.report(fix);
    await evaluatedThrough(deviceId, fix.time);
  };

  // A second engine process on the same database, with its own queue and schedule: both check.
  let second: { engine: RunningEngine; queues: QueueBackend };

  beforeAll(async () => {
    deviceId = (await make.device(accountId, { imei, name: 'Truck 7', protocol: 'teltonika' })).id;
    tracker = await scriptedTracker(harness.ports.teltonika!, imei);
    const { backend } = testQueues();
    second = { queues: backend, engine: await startEngine(database, backend, silentLogger, { ...ENGINE_TEST_SETTINGS, maintenanceCheckMs: 150 }) };
  });
  afterAll(async () => {
    tracker?.close();
    await second?.engine.close();
    await second?.queues.close();
  });

  it('is dueSoon below its threshold, and logs nothing there', async () => {
    await reportKm(119_990);
    expect((await ok(`/vehicles/${imei}/accumulators`)).data).toMatchObject({ odometerKm: 119_990, odometerSource: 'tracker' });
    const created = await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Oil change', kind: 'odometer', interval: 10_000, from: 110_000, tolerance: 500 } }, 201);
    itemId = created.data.id;
    expect(created.data).toMatchObject({
      vehicle: { id: imei, name: 'Truck 7' }, kind: 'odometer', unit: 'km', interval: 10_000, tolerance: 500, nextDue: 120_000, current: 119_990, remaining: 10, status: 'dueSoon', lastService: null,
    });
    await checksPass();
    expect(await maintenanceEvents(imei)).toEqual([]);
  }, 60_000);

  it('logs one vehicle.maintenance.due when the tracker\'s odometer crosses it, with two engine processes checking, however often they check', async () => {
    await reportKm(120_004.2);
    const [due] = await eventually(() => maintenanceEvents(imei), (events) => expect(events).toHaveLength(1));
    expect(due).toMatchObject({
      type: 'vehicle.maintenance.due',
      data: {
        vehicle: { id: imei, name: 'Truck 7' },
        position: { lat: fixes[1]!.latitude, lng: -99.13, fixTime: fixes[1]!.time.toISOString() },
        maintenance: { id: itemId, name: 'Oil change', kind: 'odometer', unit: 'km', interval: 10_000, tolerance: 500, nextDue: 120_000, current: 120_004.2 },
      },
    });
    expect((await ok(`/maintenance/${itemId}`)).data).toMatchObject({ status: 'due', remaining: -4.2 });

    // The same fix resent (the tracker missed our ACK), the job run again, twice at once, and with its
    // record of what it logged lost: the dedupe key still holds it to one.
    await tracker.report(fixes[1]!);
    // A late fix from before the crossing, with the odometer then: the vehicle's reading is its newest fix's.
    await tracker.report({ ...fixes[1]!, time: new Date(fixes[1]!.time.getTime() - 30_000), odometer: 119_995_000 });
    await database.db.updateTable('maintenance_items').set({ due_logged: null }).where('id', '=', itemId).execute();
    await Promise.all([checkMaintenance(database.db), checkMaintenance(database.db), checkMaintenance(database.db)]);
    await checksPass();
    expect((await maintenanceEvents(imei)).map((e) => e.type)).toEqual(['vehicle.maintenance.due']);
    expect((await ok(`/maintenance/${itemId}`)).data).toMatchObject({ current: 120_004.2, status: 'due' });
  }, 60_000);

  it('logs one vehicle.maintenance.overdue past the tolerance', async () => {
    await reportKm(120_300);
    await checksPass();
    expect(await maintenanceEvents(imei)).toHaveLength(1);
    await reportKm(120_512.5);
    const events = await eventually(() => maintenanceEvents(imei), (e) => expect(e).toHaveLength(2));
    expect(events[1]).toMatchObject({ type: 'vehicle.maintenance.overdue', data: { maintenance: { id: itemId, nextDue: 120_000, current: 120_512.5 } } });
    await reportKm(121_000);
    await checksPass();
    expect((await maintenanceEvents(imei)).map((e) => e.type)).toEqual(['vehicle.maintenance.due', 'vehicle.maintenance.overdue']);
    expect((await ok('/reports/maintenance')).data.items).toMatchObject([{ id: itemId, status: 'overdue', remaining: -1_000 }]);
  }, 60_000);

  it('moves the threshold with a service, which clears the item; the next threshold logs its own', async () => {
    const service = await ok(`/maintenance/${itemId}/services`, { method: 'POST', body: { note: 'Synthetic 5W-30', cost: 84.5 } }, 201);
    expect(service.data).toMatchObject({ maintenanceId: itemId, performedOn: utcDate(new Date()), odometerKm: 121_000, engineHours: null, note: 'Synthetic 5W-30', cost: 84.5, nextDue: 131_000 });
    expect((await ok(`/maintenance/${itemId}`)).data).toMatchObject({ nextDue: 131_000, remaining: 10_000, status: 'ok', lastService: { performedOn: utcDate(new Date()), odometerKm: 121_000 } });
    expect((await ok(`/maintenance/${itemId}/services`)).data).toMatchObject([{ id: service.data.id, nextDue: 131_000 }]);
    expect((await ok('/reports/maintenance')).data.items).toEqual([]);
    const audited = await database.db.selectFrom('audit_log').select(['action', 'target_id']).where('target_type', '=', 'maintenance').orderBy('id').execute();
    expect(audited).toEqual([{ action: 'maintenance.created', target_id: String(itemId) }, { action: 'maintenance.serviced', target_id: String(itemId) }]);

    await reportKm(131_000.4);
    const events = await eventually(() => maintenanceEvents(imei), (e) => expect(e).toHaveLength(3));
    expect(events[2]).toMatchObject({ type: 'vehicle.maintenance.due', data: { maintenance: { id: itemId, nextDue: 131_000, current: 131_000.4 } } });
  }, 60_000);
});

describe('a service every 500 engine hours, counted by the server', () => {
  it('logs vehicle.maintenance.due when the server\'s engine hours reach it', async () => {
    const imei = '358007042470002';
    const device = await make.device(accountId, { imei, name: 'Loader 2', protocol: 'teltonika' });
    const tracker = await scriptedTracker(harness.ports.teltonika!, imei);
    const start = Math.floor((Date.now() - 1_800_000) / 1000) * 1000;
    const parked = (s: number) => ({ time: new Date(start + s * 1000), latitude: 19.5, longitude: -99.2, speedKmh: 0, ignition: true });
    await tracker.report(parked(0));
    await evaluatedThrough(device.id, new Date(start));
    await ok(`/vehicles/${imei}/accumulators`, { method: 'PUT', body: { engineHours: 499.99 } });
    const item = (await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Service', kind: 'engineHours', interval: 500, from: 0 } }, 201)).data;
    expect(item).toMatchObject({ unit: 'h', nextDue: 500, tolerance: 50, current: 499.99, status: 'dueSoon' });
    await checksPass();
    expect(await maintenanceEvents(imei)).toEqual([]);

    // A minute idling with the ignition on: 0.0167 h more.
    for (let s = 10; s <= 60; s += 10) await tracker.report(parked(s));
    tracker.close();
    await evaluatedThrough(device.id, parked(60).time);
    const [due] = await eventually(() => maintenanceEvents(imei), (e) => expect(e).toHaveLength(1));
    expect(due).toMatchObject({ type: 'vehicle.maintenance.due', data: { maintenance: { kind: 'engineHours', unit: 'h', nextDue: 500 } } });
    // Found by whichever check first saw 500 h: at 36 s of the minute, or a fix or two later.
    expect(due.data.maintenance.current).toBeGreaterThanOrEqual(500);
    expect(due.data.maintenance.current).toBeLessThanOrEqual(500.01);
    expect((await ok(`/vehicles/${imei}/accumulators`)).data.engineHours).toBe(500.01);
  }, 60_000);
});

describe('an inspection every 180 days', () => {
  it('is due on its date and overdue past the tolerance, by the calendar alone', async () => {
    const imei = '358007042470003';
    await make.device(accountId, { imei, name: 'Van 3' });
    const today = utcDate(new Date());
    const due = (await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Inspection', kind: 'calendar', interval: 180, from: addDays(today, -180) } }, 201)).data;
    expect(due).toMatchObject({ unit: 'days', nextDue: today, tolerance: 18, current: today, remaining: 0, status: 'due' });
    const late = (await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Tachograph', kind: 'calendar', interval: 30, tolerance: 2, from: addDays(today, -33) } }, 201)).data;
    expect(late).toMatchObject({ nextDue: addDays(today, -3), remaining: -3, status: 'overdue' });
    const soon = (await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Permit', kind: 'calendar', interval: 365 } }, 201)).data;
    expect(soon).toMatchObject({ nextDue: addDays(today, 365), remaining: 365, status: 'ok' });

    const events = await eventually(() => maintenanceEvents(imei), (e) => expect(e).toHaveLength(3));
    expect(events.map((e) => [e.type, e.data.maintenance.name]).sort()).toEqual([
      ['vehicle.maintenance.due', 'Inspection'], ['vehicle.maintenance.due', 'Tachograph'], ['vehicle.maintenance.overdue', 'Tachograph'],
    ]);
    // A vehicle that never reported: the events have no position.
    expect(events[0].data.position).toBeUndefined();

    const report = (await ok('/reports/maintenance?withinDays=400')).data;
    expect(report.window).toEqual({ km: 1000, hours: 50, days: 400 });
    expect(report.items.filter((i: any) => i.vehicle.id === imei).map((i: any) => [i.name, i.status])).toEqual([['Tachograph', 'overdue'], ['Inspection', 'due'], ['Permit', 'dueSoon']]);

    // Rescheduled by hand: a new threshold, no longer due.
    const moved = (await ok(`/maintenance/${due.id}`, { method: 'PATCH', body: { nextDue: addDays(today, 10), name: 'Annual inspection' } })).data;
    expect(moved).toMatchObject({ name: 'Annual inspection', nextDue: addDays(today, 10), status: 'dueSoon', remaining: 10 });
    expect((await ok(`/maintenance?vehicleId=${imei}`)).data.map((i: any) => i.id)).toEqual([due.id, late.id, soon.id]);
    expect((await ok(`/maintenance/${soon.id}`, { method: 'DELETE' })).data).toEqual({ id: soon.id, deleted: true });
    expect((await api(`/maintenance/${soon.id}`)).status).toBe(404);
  }, 60_000);
});

describe('bad input', () => {
  const imei = '358007042470004';
  let itemId: number;
  beforeAll(async () => {
    await make.device(accountId, { imei, name: 'Van 4' });
    itemId = (await ok('/maintenance', { method: 'POST', body: { vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 10_000, from: 0 } }, 201)).data.id;
  });

  it.each([
    [{ vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 10_000 }, /no odometer reading yet: give from/],
    [{ vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 0, from: 0 }, /interval must be more than 0/],
    [{ vehicleId: imei, name: 'Oil', kind: 'mileage', interval: 10, from: 0 }, /kind/],
    [{ vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 20_000_000, from: 0 }, /interval must be at most 10000000 km/],
    [{ vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 10, from: '2026-01-01' }, /from must be a number \(km\)/],
    [{ vehicleId: imei, name: 'Check', kind: 'calendar', interval: 1.5 }, /interval must be whole days/],
    [{ vehicleId: imei, name: 'Check', kind: 'calendar', interval: 30, from: '2026-02-30' }, /from must be a date such as/],
    [{ vehicleId: imei, name: ' ', kind: 'calendar', interval: 30 }, /name must not be empty/],
    [{ vehicleId: imei, name: 'Oil', kind: 'odometer', interval: 10, from: 0, every: 3 }, /every/],
    [{ vehicleId: imei, name: 'Oil', kind: 'engineHours', interval: 10, from: 0, tolerance: -1 }, /tolerance must be 0 or more/],
  ])('POST /maintenance %o answers 400', async (body, message) => {
    const res = await api('/maintenance', { method: 'POST', body });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('answers 400 to a bad change, service, id or query, and 404 to an unknown vehicle or item', async () => {
    const cases: Array<[string, { method?: string; body?: unknown }, number, RegExp]> = [
      [`/maintenance/${itemId}`, { method: 'PATCH', body: {} }, 400, /give name, interval, tolerance or nextDue/],
      [`/maintenance/${itemId}`, { method: 'PATCH', body: { nextDue: '2026-01-01' } }, 400, /nextDue must be a number/],
      [`/maintenance/${itemId}`, { method: 'PATCH', body: { kind: 'calendar' } }, 400, /kind/],
      [`/maintenance/${itemId}/services`, { method: 'POST', body: { performedOn: '2999-01-01', odometerKm: 1 } }, 400, /must not be in the future/],
      [`/maintenance/${itemId}/services`, { method: 'POST', body: { performedOn: '01/05/2026', odometerKm: 1 } }, 400, /performedOn must be a date/],
      [`/maintenance/${itemId}/services`, { method: 'POST', body: {} }, 400, /no odometer reading yet: give odometerKm/],
      [`/maintenance/${itemId}/services`, { method: 'POST', body: { odometerKm: -5 } }, 400, /odometerKm must be 0 or more/],
      ['/maintenance/abc', {}, 400, /id/],
      ['/maintenance?cursor=x', {}, 400, /cursor/],
      ['/reports/maintenance?status=late', {}, 400, /status: unknown "late"/],
      ['/reports/maintenance?withinKm=-1', {}, 400, /withinKm/],
      ['/maintenance', { method: 'POST', body: { vehicleId: '358007042479999', name: 'Oil', kind: 'odometer', interval: 10, from: 0 } }, 404, /Vehicle not found or no access/],
      ['/maintenance/999999', {}, 404, /Maintenance item not found: 999999/],
      ['/maintenance/999999/services', { method: 'POST', body: { odometerKm: 1 } }, 404, /Maintenance item not found/],
    ];
    for (const [path, init, status, message] of cases) {
      const res = await api(path, init);
      expect(res.status, `${init.method ?? 'GET'} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(res.body.error).toMatch(message);
    }
  });

  it('pages by id with a cursor', async () => {
    const first = await ok('/maintenance?limit=2');
    expect(first).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    const rest = await ok(`/maintenance?limit=500&cursor=${first.next_cursor}`);
    const ids = [...first.data, ...rest.data].map((i: any) => i.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('shows another user of the account only the items of vehicles they may see', async () => {
    const other = await make.user(accountId);
    const otherKey = (await make.key(other.id)).key;
    const hidden = '358007042470005';
    await make.device(accountId, { imei: hidden, name: 'Private van', userIds: [userId] });
    const item = (await ok('/maintenance', { method: 'POST', body: { vehicleId: hidden, name: 'Oil', kind: 'odometer', interval: 10, from: 0 } }, 201)).data;
    const seen = await api('/maintenance?limit=500', { key: otherKey });
    expect(seen.body.data.map((i: any) => i.vehicle.id)).not.toContain(hidden);
    expect((await api(`/maintenance/${item.id}`, { key: otherKey })).status).toBe(404);
    expect((await api(`/maintenance/${item.id}`, { key: otherKey, method: 'DELETE' })).status).toBe(404);
    expect((await api('/reports/maintenance?status=ok,unknown,dueSoon,due,overdue', { key: otherKey })).body.data.items.map((i: any) => i.id)).not.toContain(item.id);
  });
});
