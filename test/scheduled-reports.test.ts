import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setDeviceSpeedLimit } from '../db/devices.ts';
import { insertMaintenanceItem } from '../db/maintenance.ts';
import { storeFixBatch } from '../db/position-batches.ts';
import { scheduleDueReports } from '../db/report-runs.ts';
import { EARTH_RADIUS_M } from '../domain/geofences/fence-shape.ts';
import { addDays, utcDate } from '../domain/maintenance/maintenance-schedule.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { buildReportEmail } from '../engine/notifications/report-email.ts';
import { startReportScheduler } from '../engine/notifications/report-scheduler.ts';
import { evaluateDevices } from '../engine/workers/evaluate-devices.ts';
import { createLogger, silentLogger } from '../runtime/logger.ts';
import { eventually } from './support/eventually.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// Scheduled report emails on a seeded fleet: the engine's own worker turns scripted drives into trips
// and geofence visits; the emails' CSVs are read back and compared with what was driven and with the
// API's reports for the same user and day.

const MADRID = 'Europe/Madrid'; // CET, UTC+1, all of late November
const NEW_YORK = 'America/New_York'; // EST, UTC−5
const LAT0 = 40.4;
const LNG0 = -3.7;
const north = (m: number) => (m / EARTH_RADIUS_M) * (180 / Math.PI);

/** The day reported: Saturday 28 November 2026 in Madrid, [27 Nov 23:00Z, 28 Nov 23:00Z). */
const PERIOD = { start: new Date('2026-11-27T23:00:00Z'), end: new Date('2026-11-28T23:00:00Z') };
/** Its run: Sunday 29 November, 07:00 in Madrid. */
const RUN = new Date('2026-11-29T06:00:00Z');

let t: TestApp;
let accountId: number;
let userId: number;
let key: string;
const vehicles: Record<'truck' | 'tagged' | 'hidden', { id: number; imei: string; name: string }> = {} as never;
let testModeVehicle: { id: number; imei: string };

/** dd/MM/yyyy HH:mm at a fixed UTC offset, by hand (no Intl). */
function atOffset(instant: Date, offsetMinutes: number): string {
  const d = new Date(instant.getTime() + offsetMinutes * 60_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${p(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

/** RFC 4180 (quoted fields, doubled quotes, CRLF), the BOM dropped; the header row first. */
function parseCsv(text: string): string[][] {
  expect(text.startsWith('\uFEFF')).toBe(true);
  const body = text.slice(1);
  expect(body.endsWith('\r\n')).toBe(true);
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\r' && body[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; }
    else {
      expect(c, 'a bare LF or CR outside quotes').not.toMatch(/[\r\n]/);
      field += c;
    }
  }
  return rows;
}

/** A CSV as objects by its header. */
function records(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

interface Drive {
  /** When the vehicle starts its 10 parked minutes before driving. */
  at: Date;
  fromM: number;
  /** Metres north (negative: south), at 60 km/h. */
  metres: number;
}

/** Parked 10 min (ignition off), the drive at 60 km/h, parked 10 min: a fix every 10 s, due north or south of `origin`. */
function driveFixes(deviceId: number, origin: { lat: number; lng: number }, drive: Drive): StoredFix[] {
  const fixes: StoredFix[] = [];
  let time = drive.at.getTime();
  let m = drive.fromM;
  const fix = (speedKmh: number, ignition: boolean) => {
    fixes.push({
      deviceId, fixTime: new Date(time), receivedAt: new Date(time), valid: true, latitude: origin.lat + north(m), longitude: origin.lng,
      speedKmh, ignition, heading: drive.metres >= 0 ? 0 : 180, satellites: 9, attributes: {},
    });
    time += 10_000;
  };
  for (let s = 0; s < 600; s += 10) fix(0, false);
  const step = Math.sign(drive.metres) * (60 / 3.6) * 10;
  for (let done = 0; done < Math.abs(drive.metres); done += Math.abs(step)) {
    fix(60, true);
    m += step;
  }
  for (let s = 0; s < 600; s += 10) fix(0, false);
  return fixes;
}

async function driveThroughEngine(fixes: StoredFix[]) {
  await storeFixBatch(t.database.db, fixes);
  const catalog = await GeofenceCatalog.open(t.database.db, silentLogger, undefined, { pollMs: 60_000 });
  try {
    const settings = { status: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, fixesPerDevice: 10_000, lateWindowMs: 3_600_000 };
    const devices = [...new Set(fixes.map((f) => f.deviceId))];
    for (;;) {
      const outcome = await evaluateDevices(t.database.db, catalog, devices, settings);
      if (outcome.unfinished.length === 0) break;
    }
  } finally {
    await catalog.close();
  }
}

async function subscribe(values: {
  userId?: number; frequency?: 'daily' | 'weekly'; reports?: string[]; localTime?: string; weekday?: number | null; timezone?: string;
  nextRunAt: Date; enabled?: boolean; mode?: 'live' | 'test';
}) {
  const row = await t.database.db
    .insertInto('report_subscriptions')
    .values({
      account_id: accountId, user_id: values.userId ?? userId, mode: values.mode ?? 'live', frequency: values.frequency ?? 'daily',
      reports: values.reports ?? ['trips', 'geofences', 'maintenance'], local_time: values.localTime ?? '07:00', weekday: values.weekday ?? null,
      timezone: values.timezone ?? MADRID, enabled: values.enabled ?? true, next_run_at: values.nextRunAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

const subscription = (id: number) =>
  t.database.db.selectFrom('report_subscriptions').select(['next_run_at', 'last_run_at']).where('id', '=', id).executeTakeFirstOrThrow();
const deliveriesOf = (id: number) =>
  t.database.db.selectFrom('notification_deliveries').selectAll().where('report_subscription_id', '=', id).orderBy('id').execute();

beforeAll(async () => {
  t = await startTestApp();
  const account = await t.fixtures.account();
  accountId = account.id;
  const user = await t.fixtures.user(accountId, MADRID);
  userId = user.id;
  key = (await t.fixtures.key(userId)).key;
  const other = await t.fixtures.user(accountId, MADRID);
  const make = async (name: string, userIds: number[], mode: 'live' | 'test' = 'live') => {
    const d = await t.fixtures.device(accountId, { name, userIds, mode });
    return { id: d.id, imei: d.imei, name };
  };
  vehicles.truck = await make('Truck 12', [userId]);
  vehicles.tagged = await make('<b>x</b>', [userId]);
  vehicles.hidden = await make('Other user’s van', [other.id]);
  testModeVehicle = await make('Test-mode car', [userId], 'test');
  // The truck's limit is 50 km/h: its drives at 60 count as overspeed.
  await setDeviceSpeedLimit(t.database.db, vehicles.truck.imei, 50);

  await t.fixtures.geofence(accountId, 'Depot', { kind: 'circle', lat: LAT0, lng: LNG0, radiusMeters: 200 });
  await t.fixtures.geofence(accountId, 'Customer', { kind: 'circle', lat: LAT0 + north(10_000), lng: LNG0, radiusMeters: 200 });

  const depot = { lat: LAT0, lng: LNG0 };
  await driveThroughEngine([
    // The day before (Madrid): not reported.
    ...driveFixes(vehicles.truck.id, depot, { at: new Date('2026-11-27T09:00:00Z'), fromM: 0, metres: 5_000 }),
    // 00:20 Madrid on the 28th, 23:20Z on the 27th: reported (the day is Madrid's).
    ...driveFixes(vehicles.truck.id, depot, { at: new Date('2026-11-27T23:20:00Z'), fromM: 5_000, metres: -5_000 }),
    // 09:00 Madrid: the depot to the customer, 10 km.
    ...driveFixes(vehicles.truck.id, depot, { at: new Date('2026-11-28T08:00:00Z'), fromM: 0, metres: 10_000 }),
    // 00:05 Madrid on the 29th, 23:05Z on the 28th: not reported.
    ...driveFixes(vehicles.truck.id, depot, { at: new Date('2026-11-28T23:05:00Z'), fromM: 10_000, metres: -10_000 }),
    // Elsewhere, 5 km, in the afternoon.
    ...driveFixes(vehicles.tagged.id, { lat: 41.4, lng: 2.1 }, { at: new Date('2026-11-28T13:00:00Z'), fromM: 0, metres: 5_000 }),
    // A vehicle the user may not see, through the depot.
    ...driveFixes(vehicles.hidden.id, depot, { at: new Date('2026-11-28T10:00:00Z'), fromM: 0, metres: 10_000 }),
  ]);

  // Maintenance by the calendar, counted from today (UTC), as the API counts it.
  const today = utcDate(new Date());
  const item = (deviceId: number, name: string, nextDue: string, tolerance = 3) =>
    insertMaintenanceItem(t.database.db, { deviceId, name, kind: 'calendar', interval: 180, tolerance, nextDue });
  await item(vehicles.truck.id, 'Inspection', addDays(today, -1));
  await item(vehicles.truck.id, '=Tyres', addDays(today, -10), 2);
  await item(vehicles.tagged.id, 'Oil change', addDays(today, 5));
  await item(vehicles.tagged.id, 'Annual service', addDays(today, 60));
  await item(vehicles.hidden.id, 'Brakes', addDays(today, -1));
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('scheduleDueReports', () => {
  // Each case counts the deliveries of its own subscriptions only: those of earlier cases are put aside.
  beforeEach(async () => {
    await t.database.db.updateTable('report_subscriptions').set({ enabled: false }).execute();
  });

  it('makes one delivery for a due subscription, for the day before its run, and moves its next run; again, none', async () => {
    const id = await subscribe({ nextRunAt: RUN });
    expect(await scheduleDueReports(t.database.db, { now: new Date(RUN.getTime() + 30_000), limit: 100 })).toBe(1);
    const [delivery, ...more] = await deliveriesOf(id);
    expect(more).toEqual([]);
    expect(delivery).toMatchObject({
      account_id: accountId, user_id: userId, channel: 'email', status: 'pending', rule_id: null, event_id: null,
      period_start: PERIOD.start, period_end: PERIOD.end,
    });
    expect(await subscription(id)).toEqual({ next_run_at: new Date('2026-11-30T06:00:00Z'), last_run_at: RUN });

    expect(await scheduleDueReports(t.database.db, { now: new Date(RUN.getTime() + 60_000), limit: 100 })).toBe(0);
    expect(await deliveriesOf(id)).toHaveLength(1);
  });

  it('is not due a moment before its run', async () => {
    const id = await subscribe({ nextRunAt: new Date('2026-11-29T06:30:00Z'), localTime: '07:30' });
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T06:29:59Z'), limit: 100 })).toBe(0);
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T06:30:00Z'), limit: 100 })).toBe(1);
    expect((await deliveriesOf(id)).map((d) => d.period_start)).toEqual([PERIOD.start]);
  });

  it('after days down, sends the latest missed period only', async () => {
    const id = await subscribe({ nextRunAt: new Date('2026-11-20T06:00:00Z') });
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T12:00:00Z'), limit: 100 })).toBe(1);
    const deliveries = await deliveriesOf(id);
    expect(deliveries.map((d) => [d.period_start, d.period_end])).toEqual([[PERIOD.start, PERIOD.end]]);
    expect(await subscription(id)).toEqual({ next_run_at: new Date('2026-11-30T06:00:00Z'), last_run_at: RUN });
  });

  it('a weekly one reports the seven days before its run day', async () => {
    // Monday 30 November 08:00 Madrid: the week of Monday 23 to Sunday 29.
    const id = await subscribe({ frequency: 'weekly', weekday: 1, localTime: '08:00', nextRunAt: new Date('2026-11-30T07:00:00Z') });
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-30T07:00:00Z'), limit: 100 })).toBe(1);
    const [delivery] = await deliveriesOf(id);
    expect([delivery!.period_start, delivery!.period_end]).toEqual([new Date('2026-11-22T23:00:00Z'), new Date('2026-11-29T23:00:00Z')]);
    expect((await subscription(id)).next_run_at).toEqual(new Date('2026-12-07T07:00:00Z'));
  });

  it('makes none for a removed user or a disabled subscription', async () => {
    const gone = await t.fixtures.user(accountId, MADRID);
    const removed = await subscribe({ userId: gone.id, nextRunAt: new Date('2026-11-29T05:00:00Z'), localTime: '06:00' });
    await t.database.db.updateTable('users').set({ removed_at: new Date() }).where('id', '=', gone.id).execute();
    const disabled = await subscribe({ nextRunAt: new Date('2026-11-29T05:00:00Z'), localTime: '06:00', enabled: false });
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T05:00:00Z'), limit: 100 })).toBe(0);
    expect(await deliveriesOf(removed)).toEqual([]);
    expect(await deliveriesOf(disabled)).toEqual([]);
    // The removed user's stays off the due list; it never ran.
    expect(await subscription(removed)).toEqual({ next_run_at: new Date('2026-11-30T05:00:00Z'), last_run_at: null });
    expect((await subscription(disabled)).next_run_at).toEqual(new Date('2026-11-29T05:00:00Z'));
  });

  it('does not deliver a period twice, even when a subscription is made due again', async () => {
    const id = await subscribe({ nextRunAt: RUN });
    expect(await scheduleDueReports(t.database.db, { now: RUN, limit: 100 })).toBe(1);
    await t.database.db.updateTable('report_subscriptions').set({ next_run_at: RUN }).where('id', '=', id).execute();
    expect(await scheduleDueReports(t.database.db, { now: RUN, limit: 100 })).toBe(0);
    expect(await deliveriesOf(id)).toHaveLength(1);
    expect((await subscription(id)).next_run_at).toEqual(new Date('2026-11-30T06:00:00Z'));
  });

  it('two schedulers at once make one delivery between them', async () => {
    const id = await subscribe({ nextRunAt: new Date('2026-11-29T03:00:00Z'), localTime: '04:00' });
    const now = new Date('2026-11-29T03:00:00Z');
    const made = await Promise.all([1, 2, 3].map(() => scheduleDueReports(t.database.db, { now, limit: 100 })));
    expect(made.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await deliveriesOf(id)).toHaveLength(1);
  });

  it('takes at most `limit` subscriptions a call', async () => {
    const ids = [await subscribe({ nextRunAt: new Date('2026-11-29T04:00:00Z'), localTime: '05:00' }), await subscribe({ nextRunAt: new Date('2026-11-29T04:00:00Z'), localTime: '05:00' })];
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T04:00:00Z'), limit: 1 })).toBe(1);
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T04:00:00Z'), limit: 1 })).toBe(1);
    expect(await scheduleDueReports(t.database.db, { now: new Date('2026-11-29T04:00:00Z'), limit: 1 })).toBe(0);
    for (const id of ids) expect(await deliveriesOf(id)).toHaveLength(1);
  });
});

const delivery = (reportSubscriptionId: number, period = PERIOD) => ({
  accountId, userId, reportSubscriptionId, periodStart: period.start, periodEnd: period.end,
});

async function api(path: string) {
  const { status, body } = await t.json(`/api/v1${path}`, { key });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data;
}

describe('buildReportEmail', () => {
  let message: Awaited<ReturnType<typeof buildReportEmail>>;
  const attachment = (name: string) => {
    const found = message.attachments?.find((a) => a.filename === name);
    expect(found, `attachment ${name} among ${message.attachments?.map((a) => a.filename).join(', ')}`).toBeDefined();
    expect(found!.contentType).toBe('text/csv; charset=utf-8');
    return found!.content;
  };

  beforeAll(async () => {
    const id = await subscribe({ nextRunAt: new Date('2030-01-01T06:00:00Z') });
    message = await buildReportEmail(t.database.db, delivery(id));
  });

  it('names the day in the subject and attaches one CSV per report', () => {
    expect(message.subject).toBe('Fleet summary, 28/11/2026');
    expect(message.attachments!.map((a) => a.filename)).toEqual(['trips-2026-11-28-2026-11-28.csv', 'geofences-2026-11-28-2026-11-28.csv', 'maintenance-due.csv']);
  });

  it('trips: each vehicle the user sees in the mode, with the KPIs of the trips begun in the local day', () => {
    const rows = records(attachment('trips-2026-11-28-2026-11-28.csv'));
    expect(Object.keys(rows[0]!)).toEqual(['deviceId', 'deviceName', 'tripCount', 'distanceKm', 'drivingS', 'idleS', 'overspeedS', 'maxSpeedKmh', 'utilisation']);
    // Ordered by name as the API lists vehicles; neither the hidden van nor the test-mode car.
    expect(rows.map((r) => r.deviceId)).toEqual([vehicles.tagged.imei, vehicles.truck.imei]);
    expect(rows.map((r) => r.deviceId)).not.toContain(testModeVehicle.imei);
    const truck = rows.find((r) => r.deviceId === vehicles.truck.imei)!;
    const tagged = rows.find((r) => r.deviceId === vehicles.tagged.imei)!;
    expect(tagged.deviceName).toBe('<b>x</b>');
    // 00:20 and 09:00 in Madrid, not the 27th's nor the 29th's at 00:05 (23:05Z on the 28th).
    expect(Number(truck.tripCount)).toBe(2);
    expect(Number(truck.distanceKm)).toBeCloseTo(15, 0);
    expect(Number(truck.maxSpeedKmh)).toBe(60);
    expect(Number(truck.overspeedS)).toBeGreaterThan(600);
    expect(Number(tagged.tripCount)).toBe(1);
    expect(Number(tagged.distanceKm)).toBeCloseTo(5, 0);
    expect(Number(tagged.overspeedS)).toBe(0);
  });

  it('trips: the same figures as GET /reports/trips for the user and day', async () => {
    const report = await api('/reports/trips?from=2026-11-28&to=2026-11-28&include=summary');
    const rows = records(attachment('trips-2026-11-28-2026-11-28.csv'));
    expect(rows).toEqual(report.vehicles.map((v: any) => ({
      deviceId: v.deviceId, deviceName: v.deviceName,
      ...Object.fromEntries(Object.entries(v.summary).map(([k, value]) => [k, value === null ? '' : String(value)])),
    })));
  });

  it('geofences: the visits of the visible vehicles overlapping the day, times in Madrid', async () => {
    const rows = records(attachment('geofences-2026-11-28-2026-11-28.csv'));
    expect(Object.keys(rows[0]!)).toEqual(['deviceId', 'deviceName', 'geofenceName', 'entryTime', 'exitTime', 'duration']);
    const seeded = await t.database.db
      .selectFrom('geofence_visits as v').innerJoin('geofences as g', 'g.id', 'v.geofence_id')
      .select(['g.name', 'v.entry_time', 'v.exit_time'])
      .where('v.device_id', '=', vehicles.truck.id)
      .where('v.entry_time', '<', PERIOD.end).where('v.exit_time', '>=', PERIOD.start)
      .orderBy('v.entry_time').execute();
    // Back at the depot at 00:30ish, off to the customer at 09:10ish, there until the 29th's drive.
    expect(seeded.map((v) => v.name)).toEqual(['Depot', 'Customer']);
    expect(seeded[1]!.exit_time!.getTime()).toBeGreaterThan(PERIOD.end.getTime());
    expect(rows).toEqual(seeded.map((v) => ({
      deviceId: vehicles.truck.imei, deviceName: 'Truck 12', geofenceName: v.name,
      entryTime: atOffset(v.entry_time, 60), exitTime: atOffset(v.exit_time!, 60),
      duration: `${Math.floor((v.exit_time!.getTime() - v.entry_time.getTime()) / 3_600_000)}h ${Math.floor((v.exit_time!.getTime() - v.entry_time.getTime()) / 60_000) % 60}m`,
    })));
    const report = await api('/reports/geofences?from=2026-11-28&to=2026-11-28&include=visits');
    expect(rows).toEqual(report.visits);
  });

  it('maintenance: what is overdue, due or due soon on the visible vehicles, most urgent first, as the maintenance report lists it', async () => {
    const rows = records(attachment('maintenance-due.csv'));
    expect(Object.keys(rows[0]!)).toEqual(['id', 'vehicleId', 'vehicleName', 'name', 'kind', 'unit', 'interval', 'tolerance', 'nextDue', 'current', 'remaining', 'status', 'lastServiceOn']);
    // The name starting with = is kept from being read as a formula.
    expect(rows.map((r) => [r.vehicleName, r.name, r.status, r.remaining])).toEqual([
      ['Truck 12', "'=Tyres", 'overdue', '-10'],
      ['Truck 12', 'Inspection', 'due', '-1'],
      ['<b>x</b>', 'Oil change', 'dueSoon', '5'],
    ]);
    const report = await api('/reports/maintenance');
    expect(rows.map((r) => Number(r.id))).toEqual(report.items.map((i: any) => i.id));
    expect(rows.map((r) => r.nextDue)).toEqual(report.items.map((i: any) => i.nextDue));
  });

  it('says the headline numbers in text and HTML, every value escaped in the HTML', () => {
    expect(message.text).toContain('Vehicles: 2');
    expect(message.text).toContain('Trips: 3');
    expect(message.text).toContain('Geofence visits: 2');
    expect(message.text).toContain('Maintenance due: 3 (1 overdue, 1 due, 1 due soon)');
    expect(message.text).toContain('<b>x</b>');
    expect(message.html).toContain('&#60;b&#62;x&#60;/b&#62;');
    expect(message.html).not.toContain('<b>x</b>');
    expect(message.html).not.toContain('Other user');
    expect(message.short).toMatch(/^Fleet summary, 28\/11\/2026: 2 vehicles, 3 trips/);
  });

  it('shows times in the subscription’s timezone, and a weekly subject naming the week', async () => {
    const id = await subscribe({ frequency: 'weekly', weekday: 1, timezone: NEW_YORK, reports: ['geofences'], nextRunAt: new Date('2030-01-01T06:00:00Z') });
    // New York's week of Monday 23 to Sunday 29 November.
    const week = { start: new Date('2026-11-23T05:00:00Z'), end: new Date('2026-11-30T05:00:00Z') };
    const weekly = await buildReportEmail(t.database.db, delivery(id, week));
    expect(weekly.subject).toBe('Weekly fleet summary, 23/11/2026 – 29/11/2026');
    expect(weekly.attachments!.map((a) => a.filename)).toEqual(['geofences-2026-11-23-2026-11-29.csv']);
    const rows = records(weekly.attachments![0]!.content);
    const seeded = await t.database.db
      .selectFrom('geofence_visits').select(['entry_time']).where('device_id', '=', vehicles.truck.id).orderBy('entry_time').execute();
    expect(rows.map((r) => r.entryTime)).toEqual(seeded.map((v) => atOffset(v.entry_time, -300)));
  });

  it('refuses a removed user and a subscription of another account', async () => {
    const gone = await t.fixtures.user(accountId, MADRID);
    const id = await subscribe({ userId: gone.id, nextRunAt: new Date('2030-01-01T06:00:00Z') });
    await t.database.db.updateTable('users').set({ removed_at: new Date() }).where('id', '=', gone.id).execute();
    await expect(buildReportEmail(t.database.db, { ...delivery(id), userId: gone.id })).rejects.toThrow(/removed/);
    const mine = await subscribe({ nextRunAt: new Date('2030-01-01T06:00:00Z') });
    await expect(buildReportEmail(t.database.db, { ...delivery(mine), accountId: accountId + 1_000 })).rejects.toThrow(/no longer exists/);
  });
});

describe('startReportScheduler', () => {
  it('schedules due reports at start and tells the sender', async () => {
    const id = await subscribe({ nextRunAt: new Date(Date.now() - 60_000) });
    let told = 0;
    const scheduler = startReportScheduler(t.database.db, silentLogger, { everyMs: 50, onScheduled: () => told++ });
    try {
      await eventually(() => deliveriesOf(id), (rows) => expect(rows).toHaveLength(1));
      await eventually(async () => told, (n) => expect(n).toBeGreaterThan(0));
      expect((await subscription(id)).next_run_at.getTime()).toBeGreaterThan(Date.now());
    } finally {
      await scheduler.close();
    }
  });

  it('says a failing check once, keeps trying every tick, and says when it works again', async () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const log = createLogger('info', (line) => lines.push(JSON.parse(line)));
    await t.database.db.updateTable('report_subscriptions').set({ enabled: false }).execute();
    // A real failure: the table is not there while the checks run.
    await sql`ALTER TABLE report_subscriptions RENAME TO report_subscriptions_away`.execute(t.database.db);
    let told = 0;
    const scheduler = startReportScheduler(t.database.db, log, { everyMs: 20, onScheduled: () => told++ });
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['scheduling report emails failed; retrying']);
      await sql`ALTER TABLE report_subscriptions_away RENAME TO report_subscriptions`.execute(t.database.db);
      const id = await subscribe({ nextRunAt: new Date(Date.now() - 60_000) });
      await eventually(() => deliveriesOf(id), (rows) => expect(rows).toHaveLength(1));
      await eventually(async () => lines.map((l) => l.msg), (msgs) => expect(msgs).toContain('scheduling report emails works again'));
      expect(told).toBeGreaterThan(0);
      expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    } finally {
      await scheduler.close();
      await sql`ALTER TABLE IF EXISTS report_subscriptions_away RENAME TO report_subscriptions`.execute(t.database.db);
    }
  });
});
