import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REPORT_ROWS } from '../api/routes/reports.ts';
import { recordCrossingsThroughEngine } from './support/engine-crossings.ts';
import { square } from '../simulators/fleet-records.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const MEXICO = 'America/Mexico_City';
const KOLKATA = 'Asia/Kolkata';

/** A Mexico City wall-clock time (UTC-6 all year since 2022) as an instant: mx('2024-05-01T08:00'). */
const mx = (local: string) => new Date(`${local}${local.length === 16 ? ':00' : ''}-06:00`);

/** dd/MM/yyyy HH:mm of an instant at a fixed UTC offset, computed by hand (no Intl). */
function atOffset(instant: Date, offsetMinutes: number): string {
  const d = new Date(instant.getTime() + offsetMinutes * 60_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${p(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}
const mxText = (instant: Date) => atOffset(instant, -360);

/** Crossings recorded by the engine itself, from fixes: see recordCrossingsThroughEngine. */
async function cross(...crossings: Array<[deviceId: number, geofenceId: number, type: 'enter' | 'exit', at: Date]>) {
  await recordCrossingsThroughEngine(t.database, crossings.map(([deviceId, geofenceId, type, at]) => ({ deviceId, geofenceId, type, at })));
}

async function report(key: string, query: Record<string, string>) {
  return t.json(`/api/v1/reports/geofences?${new URLSearchParams(query)}`, { key });
}

async function ok(key: string, query: Record<string, string>) {
  const { status, body } = await report(key, query);
  expect(body.error).toBeNull();
  expect(status).toBe(200);
  expect(body.success).toBe(true);
  expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  return body.data;
}

const DAY = { from: '2024-05-01', to: '2024-05-01' };

describe('GET /api/v1/reports/geofences: parameters', () => {
  let key: string;
  beforeAll(async () => {
    ({ key } = await t.fixtures.tenant());
  });

  it.each([
    ['from missing', { to: '2024-05-01' }],
    ['to missing', { from: '2024-05-01' }],
    ['both missing', {}],
  ])('answers 400 saying both from and to are required when %s', async (_, query) => {
    const { status, body } = await report(key, query);
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, data: null });
    expect(body.error).toMatch(/required/i);
    expect(body.error).toMatch(/\bfrom\b/);
    expect(body.error).toMatch(/\bto\b/);
    expect(body.error).toMatch(/both/i);
  });

  it.each([
    ['from is not a date', { from: 'yesterday', to: '2024-05-01' }, /\bfrom\b.*yesterday/],
    ['to is in display format', { from: '2024-05-01', to: '01/05/2024' }, /\bto\b.*01\/05\/2024/],
    ['from has a one-digit hour', { from: '2024-05-01T8:30', to: '2024-05-01' }, /\bfrom\b/],
    ['from has a timezone suffix', { from: '2024-05-01T08:30Z', to: '2024-05-02' }, /\bfrom\b/],
    ['from is empty', { from: '', to: '2024-05-01' }, /\bfrom\b/],
    ['from is 30 February', { from: '2024-02-30', to: '2024-03-01' }, /\bfrom\b.*2024-02-30/],
    ['to is 29 February of a common year', { from: '2023-02-01', to: '2023-02-29' }, /\bto\b.*2023-02-29/],
    ['to is month 13', { from: '2024-05-01', to: '2024-13-01' }, /\bto\b.*2024-13-01/],
    ['to has hour 24', { from: '2024-05-01', to: '2024-05-01T24:00' }, /\bto\b.*24:00/],
    ['to has minute 60', { from: '2024-05-01', to: '2024-05-01T10:60' }, /\bto\b.*10:60/],
    ['from is after to', { from: '2024-05-02', to: '2024-05-01' }, /\bfrom\b.*\b(after|before)\b/],
    ['from is after to within a day', { from: '2024-05-01T10:00', to: '2024-05-01T09:59' }, /\bfrom\b.*\b(after|before)\b/],
    ['include names an unknown section', { ...DAY, include: 'summary,trips' }, /trips/],
    ['include is only commas', { ...DAY, include: ',' }, /include/],
    ['geofenceIds has a word', { ...DAY, geofenceIds: 'abc' }, /geofenceIds.*abc/],
    ['geofenceIds has a decimal', { ...DAY, geofenceIds: '1.5' }, /geofenceIds.*1\.5/],
    ['geofenceIds has a negative number', { ...DAY, geofenceIds: '-1' }, /geofenceIds.*-1/],
    ['geofenceIds mixes a number and a word', { ...DAY, geofenceIds: '1,x' }, /geofenceIds.*"x"/],
  ])('answers 400 when %s', async (_, query, error) => {
    const { status, body } = await report(key, query);
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, data: null });
    expect(body.error).toMatch(error);
  });

  it.each([
    ['a date range', { from: '2024-05-01', to: '2024-05-03' }, { from: '01/05/2024 00:00', to: '03/05/2024 23:59' }],
    ['one day', { from: '2024-05-01', to: '2024-05-01' }, { from: '01/05/2024 00:00', to: '01/05/2024 23:59' }],
    ['date-times', { from: '2024-05-01T08:30', to: '2024-05-01T17:45' }, { from: '01/05/2024 08:30', to: '01/05/2024 17:45' }],
    ['a space separator', { from: '2024-05-01 08:30', to: '2024-05-02' }, { from: '01/05/2024 08:30', to: '02/05/2024 23:59' }],
    ['from equal to a date-only to', { from: '2024-05-01T23:59', to: '2024-05-01' }, { from: '01/05/2024 23:59', to: '01/05/2024 23:59' }],
    ['a leap day', { from: '2024-02-29', to: '2024-02-29' }, { from: '29/02/2024 00:00', to: '29/02/2024 23:59' }],
  ])('accepts %s and echoes the range in the user timezone', async (_, query, range) => {
    const data = await ok(key, query);
    expect(data.range).toEqual(range);
  });

  it('returns the three sections in order by default, and only the requested ones otherwise', async () => {
    const all = await ok(key, DAY);
    expect(all.included).toEqual(['summary', 'events', 'visits']);
    expect(Object.keys(all)).toEqual(['range', 'deviceCount', 'geofenceCount', 'included', 'summary', 'events', 'visits']);
    expect(all).toMatchObject({ summary: [], events: [], visits: [] });

    const cases: Array<[string, string[]]> = [
      ['events', ['events']],
      ['summary', ['summary']],
      ['visits', ['visits']],
      ['visits,summary', ['summary', 'visits']],
      ['events,events', ['events']],
      ['summary,events,visits', ['summary', 'events', 'visits']],
    ];
    for (const [include, expected] of cases) {
      const data = await ok(key, { ...DAY, include });
      expect(data.included).toEqual(expected);
      for (const section of ['summary', 'events', 'visits']) {
        expect(section in data, `${section} with include=${include}`).toBe(expected.includes(section));
      }
      expect(Object.keys(data)).toEqual(['range', 'deviceCount', 'geofenceCount', 'included', ...expected]);
    }
  });

  it('needs the reports:read permission and a key', async () => {
    const { user } = await t.fixtures.tenant();
    const devicesOnly = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).key;
    const reportsOnly = (await t.fixtures.key(user.id, { permissions: ['reports:read'] })).key;
    const denied = await report(devicesOnly, DAY);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ success: false, data: null });
    expect((await t.json(`/api/v1/reports/geofences?${new URLSearchParams(DAY)}`)).status).toBe(401);
    expect((await ok(reportsOnly, DAY)).included).toEqual(['summary', 'events', 'visits']);
  });
});

describe('GET /api/v1/reports/geofences: size', () => {
  it('refuses a section of more rows than one answer holds with 400 and a hint, and still answers the others', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const device = await t.fixtures.device(account.id, { userIds: [user.id] });
    const fence = await t.fixtures.geofence(account.id, 'Busy gate', square(19.4, -99.1, 0.01));
    // One more crossing and one more visit than an answer holds, a minute apart on 2024-03-01 (Mexico City).
    const rows = MAX_REPORT_ROWS + 1;
    await sql`
      INSERT INTO geofence_events (device_id, geofence_id, type, fix_time, latitude, longitude)
      SELECT ${device.id}, ${fence.id}, CASE WHEN n % 2 = 0 THEN 'enter' ELSE 'exit' END, timestamptz '2024-03-01 06:00:00+00' + n * interval '1 second', 19.4, -99.1
      FROM generate_series(0, ${rows - 1}) AS n`.execute(t.database.db);
    await sql`
      INSERT INTO geofence_visits (device_id, geofence_id, entry_time, exit_time)
      SELECT ${device.id}, ${fence.id}, timestamptz '2024-03-01 06:00:00+00' + n * interval '1 second', timestamptz '2024-03-01 06:00:00+00' + n * interval '1 second'
      FROM generate_series(0, ${rows - 1}) AS n`.execute(t.database.db);
    const day = { from: '2024-03-01', to: '2024-03-01' };
    for (const section of ['events', 'visits']) {
      const refused = await report(key, { ...day, include: section });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(`The report holds more than ${MAX_REPORT_ROWS} ${section}; narrow the range, deviceIds or geofenceIds, or ask for include=summary`);
    }
    const summary = await ok(key, { ...day, include: 'summary' });
    expect(summary.summary).toEqual([expect.objectContaining({ geofenceId: fence.id, timesCrossed: rows })]);
    // A narrower range fits.
    expect((await ok(key, { from: '2024-03-01T00:00', to: '2024-03-01T00:30', include: 'events,visits' })).events).toHaveLength(1801);
  });
});

describe('GET /api/v1/reports/geofences: scope', () => {
  it('answers 404 for a listed device the key cannot see and for a geofence of another account', async () => {
    const account = await t.fixtures.account();
    const owner = await t.fixtures.user(account.id);
    const other = await t.fixtures.user(account.id);
    const mine = await t.fixtures.device(account.id, { userIds: [owner.id] });
    const othersDevice = await t.fixtures.device(account.id, { userIds: [other.id] });
    const myTestDevice = await t.fixtures.device(account.id, { userIds: [owner.id], mode: 'test' });
    const myGeofence = await t.fixtures.geofence(account.id, 'Mine', square(19, -99, 0.01));
    const foreign = await t.fixtures.tenant();
    const foreignDevice = await t.fixtures.device(foreign.account.id);
    const foreignGeofence = await t.fixtures.geofence(foreign.account.id, 'Theirs', square(19, -99, 0.01));
    const key = (await t.fixtures.key(owner.id)).key;

    const cases: Array<[string, Record<string, string>]> = [
      ["another user's device", { deviceIds: othersDevice.imei }],
      ["another account's device", { deviceIds: foreignDevice.imei }],
      ['an unknown IMEI', { deviceIds: '999999999999999' }],
      ['a test device with a live key', { deviceIds: myTestDevice.imei }],
      ['one invisible device among visible ones', { deviceIds: `${mine.imei},${othersDevice.imei}` }],
      ["another account's geofence", { geofenceIds: String(foreignGeofence.id) }],
      ['an unknown geofence', { geofenceIds: '999999999' }],
      ['one foreign geofence among own ones', { geofenceIds: `${myGeofence.id},${foreignGeofence.id}` }],
    ];
    for (const [what, query] of cases) {
      const { status, body } = await report(key, { ...DAY, ...query });
      expect(status, what).toBe(404);
      expect(body, what).toMatchObject({ success: false, data: null });
      expect(body.error, what).toMatch(/not found/i);
    }
    const fine = await ok(key, { ...DAY, deviceIds: mine.imei, geofenceIds: String(myGeofence.id) });
    expect(fine).toMatchObject({ deviceCount: 1, geofenceCount: 1 });
  });

  it('counts the visible devices in scope, or the listed ones, and the geofences filtered by', async () => {
    const account = await t.fixtures.account();
    const user = await t.fixtures.user(account.id);
    const other = await t.fixtures.user(account.id);
    const a = await t.fixtures.device(account.id, { userIds: [user.id] });
    const b = await t.fixtures.device(account.id, { userIds: [user.id, other.id] });
    await t.fixtures.device(account.id, { userIds: [user.id] });
    await t.fixtures.device(account.id, { userIds: [user.id], mode: 'test' });
    await t.fixtures.device(account.id, { userIds: [other.id] });
    const g1 = await t.fixtures.geofence(account.id, 'G1', square(1, 1, 0.01));
    const g2 = await t.fixtures.geofence(account.id, 'G2', square(2, 2, 0.01));
    await t.fixtures.geofence(account.id, 'G3', square(3, 3, 0.01));
    const key = (await t.fixtures.key(user.id)).key;
    const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;

    const cases: Array<[string, Record<string, string>, number, number]> = [
      ['everything', {}, 3, 0],
      ['two devices', { deviceIds: `${a.imei},${b.imei}` }, 2, 0],
      ['a repeated device', { deviceIds: `${a.imei},${a.imei}` }, 1, 0],
      ['two geofences', { geofenceIds: `${g1.id},${g2.id}` }, 3, 2],
      ['one of each', { deviceIds: b.imei, geofenceIds: String(g2.id) }, 1, 1],
    ];
    for (const [what, query, deviceCount, geofenceCount] of cases) {
      const data = await ok(key, { ...DAY, ...query });
      expect({ deviceCount: data.deviceCount, geofenceCount: data.geofenceCount }, what).toEqual({ deviceCount, geofenceCount });
    }
    expect((await ok(testKey, DAY)).deviceCount).toBe(1);
  });
});

describe('GET /api/v1/reports/geofences: content', () => {
  // One Mexico City day, 2024-05-01, with crossings before, inside and after it.
  let key: string;
  let alpha: { id: number; imei: string };
  let bravo: { id: number; imei: string };
  let client: { id: number };
  let depot: { id: number };

  beforeAll(async () => {
    const tenant = await t.fixtures.tenant(MEXICO);
    key = tenant.key;
    alpha = await t.fixtures.device(tenant.account.id, { name: 'Alpha Truck' });
    bravo = await t.fixtures.device(tenant.account.id, { name: 'Bravo Van' });
    await t.fixtures.device(tenant.account.id, { name: 'Charlie Idle' });
    client = await t.fixtures.geofence(tenant.account.id, 'Client', square(19.5, -99.2, 0.01));
    depot = await t.fixtures.geofence(tenant.account.id, 'Depot', square(19.4, -99.1, 0.01));
    const crossings: Array<[{ id: number }, { id: number }, 'enter' | 'exit', string]> = [
      [alpha, depot, 'enter', '2024-04-29T08:00'], // a whole visit the day before: not listed
      [alpha, depot, 'exit', '2024-04-29T09:00'],
      [alpha, depot, 'enter', '2024-04-30T22:00'], // visit straddling the start of the range
      [alpha, depot, 'exit', '2024-05-01T00:00'], // exactly at the start: included
      [alpha, client, 'enter', '2024-05-01T08:00'],
      [alpha, client, 'exit', '2024-05-01T09:05'],
      [bravo, depot, 'enter', '2024-05-01T10:00'],
      [alpha, client, 'enter', '2024-05-01T23:59:30'], // last half minute of the day: included, shown 23:59
      [alpha, client, 'exit', '2024-05-02T00:00'], // first instant of the next day: excluded
      [alpha, depot, 'enter', '2024-05-02T01:00'], // visit starting after the range: not listed
      [bravo, depot, 'exit', '2024-05-02T12:00'],
    ];
    await cross(...crossings.map(([device, geofence, type, local]) => [device.id, geofence.id, type, mx(local)] as [number, number, 'enter' | 'exit', Date]));
  });

  const A = () => ({ deviceId: alpha.imei, deviceName: 'Alpha Truck' });
  const B = () => ({ deviceId: bravo.imei, deviceName: 'Bravo Van' });

  it('reports the summary, events and visits of the range exactly', async () => {
    const data = await ok(key, DAY);
    expect(data).toEqual({
      range: { from: '01/05/2024 00:00', to: '01/05/2024 23:59' },
      deviceCount: 3,
      geofenceCount: 0,
      included: ['summary', 'events', 'visits'],
      summary: [
        { ...A(), geofenceId: client.id, geofenceName: 'Client', timesCrossed: 3, firstCross: '01/05/2024 08:00', lastCross: '01/05/2024 23:59' },
        { ...A(), geofenceId: depot.id, geofenceName: 'Depot', timesCrossed: 1, firstCross: '01/05/2024 00:00', lastCross: '01/05/2024 00:00' },
        { ...B(), geofenceId: depot.id, geofenceName: 'Depot', timesCrossed: 1, firstCross: '01/05/2024 10:00', lastCross: '01/05/2024 10:00' },
      ],
      events: [
        { ...A(), geofenceName: 'Depot', eventType: 'Salida', dateTime: '01/05/2024 00:00' },
        { ...A(), geofenceName: 'Client', eventType: 'Entrada', dateTime: '01/05/2024 08:00' },
        { ...A(), geofenceName: 'Client', eventType: 'Salida', dateTime: '01/05/2024 09:05' },
        { ...B(), geofenceName: 'Depot', eventType: 'Entrada', dateTime: '01/05/2024 10:00' },
        { ...A(), geofenceName: 'Client', eventType: 'Entrada', dateTime: '01/05/2024 23:59' },
      ],
      visits: [
        { ...A(), geofenceName: 'Depot', entryTime: '30/04/2024 22:00', exitTime: '01/05/2024 00:00', duration: '2h 0m' },
        { ...A(), geofenceName: 'Client', entryTime: '01/05/2024 08:00', exitTime: '01/05/2024 09:05', duration: '1h 5m' },
        { ...B(), geofenceName: 'Depot', entryTime: '01/05/2024 10:00', exitTime: '02/05/2024 12:00', duration: '26h 0m' },
        { ...A(), geofenceName: 'Client', entryTime: '01/05/2024 23:59', exitTime: '02/05/2024 00:00', duration: '0h 0m' },
      ],
    });
    for (const s of data.summary) {
      expect(Number.isInteger(s.geofenceId)).toBe(true);
      expect(Number.isInteger(s.timesCrossed)).toBe(true);
    }
  });

  it('returns only the events section with include=events', async () => {
    const data = await ok(key, { ...DAY, include: 'events' });
    expect(data.included).toEqual(['events']);
    expect('summary' in data).toBe(false);
    expect('visits' in data).toBe(false);
    expect(data.events.map((e: { dateTime: string }) => e.dateTime)).toEqual([
      '01/05/2024 00:00', '01/05/2024 08:00', '01/05/2024 09:05', '01/05/2024 10:00', '01/05/2024 23:59',
    ]);
  });

  it('bounds the range to the minute with date-times', async () => {
    const data = await ok(key, { from: '2024-05-01T08:00', to: '2024-05-01T09:05', include: 'summary,events' });
    expect(data.events.map((e: { eventType: string; dateTime: string }) => `${e.eventType} ${e.dateTime}`)).toEqual([
      'Entrada 01/05/2024 08:00',
      'Salida 01/05/2024 09:05',
    ]);
    expect(data.summary).toEqual([
      { ...A(), geofenceId: client.id, geofenceName: 'Client', timesCrossed: 2, firstCross: '01/05/2024 08:00', lastCross: '01/05/2024 09:05' },
    ]);
  });

  it('filters by deviceIds, by geofenceIds and by both', async () => {
    type Row = { deviceName: string; geofenceName: string; dateTime?: string; entryTime?: string };
    const pairs = (rows: Row[]) => rows.map((r) => `${r.deviceName}/${r.geofenceName} ${r.dateTime ?? r.entryTime}`);
    const cases: Array<[string, Record<string, string>, number, number, string[], string[]]> = [
      [
        'one device', { deviceIds: bravo.imei }, 1, 0,
        ['Bravo Van/Depot 01/05/2024 10:00'],
        ['Bravo Van/Depot 01/05/2024 10:00'],
      ],
      [
        'one geofence', { geofenceIds: String(depot.id) }, 3, 1,
        ['Alpha Truck/Depot 01/05/2024 00:00', 'Bravo Van/Depot 01/05/2024 10:00'],
        ['Alpha Truck/Depot 30/04/2024 22:00', 'Bravo Van/Depot 01/05/2024 10:00'],
      ],
      [
        'device and geofence', { deviceIds: alpha.imei, geofenceIds: String(client.id) }, 1, 1,
        ['Alpha Truck/Client 01/05/2024 08:00', 'Alpha Truck/Client 01/05/2024 09:05', 'Alpha Truck/Client 01/05/2024 23:59'],
        ['Alpha Truck/Client 01/05/2024 08:00', 'Alpha Truck/Client 01/05/2024 23:59'],
      ],
      [
        'two devices and two geofences', { deviceIds: `${alpha.imei},${bravo.imei}`, geofenceIds: `${depot.id},${client.id}` }, 2, 2,
        [
          'Alpha Truck/Depot 01/05/2024 00:00', 'Alpha Truck/Client 01/05/2024 08:00', 'Alpha Truck/Client 01/05/2024 09:05',
          'Bravo Van/Depot 01/05/2024 10:00', 'Alpha Truck/Client 01/05/2024 23:59',
        ],
        [
          'Alpha Truck/Depot 30/04/2024 22:00', 'Alpha Truck/Client 01/05/2024 08:00',
          'Bravo Van/Depot 01/05/2024 10:00', 'Alpha Truck/Client 01/05/2024 23:59',
        ],
      ],
    ];
    for (const [what, query, deviceCount, geofenceCount, events, visits] of cases) {
      const data = await ok(key, { ...DAY, ...query });
      expect(data.deviceCount, what).toBe(deviceCount);
      expect(data.geofenceCount, what).toBe(geofenceCount);
      expect(pairs(data.events), what).toEqual(events);
      expect(pairs(data.visits), what).toEqual(visits);
    }
  });

  it('reports the previous day with the visit that ends after it, and no events for a quiet day', async () => {
    const data = await ok(key, { from: '2024-04-30', to: '2024-04-30' });
    expect(data.summary.map((s: { timesCrossed: number }) => s.timesCrossed)).toEqual([1]);
    expect(data.events).toEqual([{ ...A(), geofenceName: 'Depot', eventType: 'Entrada', dateTime: '30/04/2024 22:00' }]);
    expect(data.visits).toEqual([
      { ...A(), geofenceName: 'Depot', entryTime: '30/04/2024 22:00', exitTime: '01/05/2024 00:00', duration: '2h 0m' },
    ]);
    expect(await ok(key, { from: '2024-05-03', to: '2024-05-03', include: 'events' })).toMatchObject({ events: [] });
  });
});

describe('GET /api/v1/reports/geofences: open visits', () => {
  it('lists a visit still open with exitTime null, its true entry time and its duration up to now', async () => {
    const { account, key } = await t.fixtures.tenant(MEXICO);
    const device = await t.fixtures.device(account.id, { name: 'Parked' });
    const yard = await t.fixtures.geofence(account.id, 'Yard', square(19.4, -99.1, 0.01));
    // Entered 26 h 0 m 30 s ago: before the start of today, whatever the time of day.
    const entry = new Date(Date.now() - (26 * 60 + 0.5) * 60_000);
    await cross([device.id, yard.id, 'enter', entry]);
    const today = mxText(new Date()).slice(0, 10).split('/').reverse().join('-');

    const before = Date.now();
    const data = await ok(key, { from: today, to: today });
    const after = Date.now();
    const duration = (now: number) => {
      const minutes = Math.floor((now - entry.getTime()) / 60_000);
      return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
    };
    expect(data.events).toEqual([]);
    expect(data.summary).toEqual([]);
    expect(data.visits).toHaveLength(1);
    expect(data.visits[0]).toMatchObject({ deviceId: device.imei, deviceName: 'Parked', geofenceName: 'Yard', entryTime: mxText(entry), exitTime: null });
    expect([duration(before), duration(after)]).toContain(data.visits[0].duration);
    expect(data.visits[0].duration).toMatch(/^26h [01]m$/);
  });
});

describe('GET /api/v1/reports/geofences: timezones and modes', () => {
  it('shows the same stored crossing in each user\'s own timezone, and selects date-only days in it', async () => {
    const account = await t.fixtures.account();
    const mexican = await t.fixtures.user(account.id, MEXICO);
    const indian = await t.fixtures.user(account.id, KOLKATA);
    const device = await t.fixtures.device(account.id, { name: 'Shared', userIds: [mexican.id, indian.id] });
    const plaza = await t.fixtures.geofence(account.id, 'Plaza', square(19.4, -99.1, 0.01));
    // 14:30Z = 08:30 Mexico City (UTC-6) = 20:00 Kolkata (UTC+5:30).
    await cross(
      [device.id, plaza.id, 'enter', new Date('2024-05-01T14:30:00Z')],
      // 19:00Z = 13:00 on the 1st in Mexico City, but 00:30 on the 2nd in Kolkata.
      [device.id, plaza.id, 'exit', new Date('2024-05-01T19:00:00Z')],
      // 05:00Z on the 2nd = 23:00 on the 1st in Mexico City, 10:30 on the 2nd in Kolkata.
      [device.id, plaza.id, 'enter', new Date('2024-05-02T05:00:00Z')],
    );
    const mxKey = (await t.fixtures.key(mexican.id)).key;
    const inKey = (await t.fixtures.key(indian.id)).key;

    const oneDay = { from: '2024-05-01', to: '2024-05-01', include: 'events' };
    const mxFirst = await ok(mxKey, oneDay);
    const inFirst = await ok(inKey, oneDay);
    expect(mxFirst.range).toEqual({ from: '01/05/2024 00:00', to: '01/05/2024 23:59' });
    expect(inFirst.range).toEqual({ from: '01/05/2024 00:00', to: '01/05/2024 23:59' });
    expect(mxFirst.events).toEqual([
      { deviceId: device.imei, deviceName: 'Shared', geofenceName: 'Plaza', eventType: 'Entrada', dateTime: '01/05/2024 08:30' },
      { deviceId: device.imei, deviceName: 'Shared', geofenceName: 'Plaza', eventType: 'Salida', dateTime: '01/05/2024 13:00' },
      { deviceId: device.imei, deviceName: 'Shared', geofenceName: 'Plaza', eventType: 'Entrada', dateTime: '01/05/2024 23:00' },
    ]);
    expect(inFirst.events).toEqual([
      { deviceId: device.imei, deviceName: 'Shared', geofenceName: 'Plaza', eventType: 'Entrada', dateTime: '01/05/2024 20:00' },
    ]);

    const nextDay = { from: '2024-05-02', to: '2024-05-02', include: 'events' };
    const line = (e: { eventType: string; dateTime: string }) => `${e.eventType} ${e.dateTime}`;
    expect((await ok(mxKey, nextDay)).events).toEqual([]);
    expect((await ok(inKey, nextDay)).events.map(line)).toEqual(['Salida 02/05/2024 00:30', 'Entrada 02/05/2024 10:30']);

    // The same instant bounds in each timezone: 2024-05-01T05:30 Kolkata is 00:00Z; Mexico's is 11:30Z.
    const early = { from: '2024-05-01T05:30', to: '2024-05-01T20:00', include: 'summary' };
    expect((await ok(inKey, early)).summary).toEqual([
      { deviceId: device.imei, deviceName: 'Shared', geofenceId: plaza.id, geofenceName: 'Plaza', timesCrossed: 1, firstCross: '01/05/2024 20:00', lastCross: '01/05/2024 20:00' },
    ]);
    expect((await ok(mxKey, early)).summary).toEqual([
      { deviceId: device.imei, deviceName: 'Shared', geofenceId: plaza.id, geofenceName: 'Plaza', timesCrossed: 2, firstCross: '01/05/2024 08:30', lastCross: '01/05/2024 13:00' },
    ]);

    // Visits: the closed one lasts 4 h 30 m wherever it is read.
    const visits = { from: '2024-05-01', to: '2024-05-01', include: 'visits' };
    expect((await ok(mxKey, visits)).visits[0]).toMatchObject({ entryTime: '01/05/2024 08:30', exitTime: '01/05/2024 13:00', duration: '4h 30m' });
    expect((await ok(inKey, visits)).visits[0]).toMatchObject({ entryTime: '01/05/2024 20:00', exitTime: '02/05/2024 00:30', duration: '4h 30m' });
  });

  it('keeps test keys and live keys to the events of their own mode', async () => {
    const { account, user, key: liveKey } = await t.fixtures.tenant();
    const testKey = (await t.fixtures.key(user.id, { mode: 'test' })).key;
    const live = await t.fixtures.device(account.id, { name: 'Live one' });
    const test = await t.fixtures.device(account.id, { name: 'Test one', mode: 'test' });
    // Each mode's own gate: the engine matches a vehicle only to geofences of its mode.
    const gate = await t.fixtures.geofence(account.id, 'Gate', square(19.4, -99.1, 0.01));
    const testGate = await t.fixtures.geofence(account.id, 'Gate', square(19.4, -99.1, 0.01), 'test');
    await cross([live.id, gate.id, 'enter', mx('2024-05-01T09:00')], [test.id, testGate.id, 'enter', mx('2024-05-01T10:00')]);

    const names = (data: { events: Array<{ deviceName: string; dateTime: string }> }) => data.events.map((e) => `${e.deviceName} ${e.dateTime}`);
    const liveData = await ok(liveKey, DAY);
    const testData = await ok(testKey, DAY);
    expect(names(liveData)).toEqual(['Live one 01/05/2024 09:00']);
    expect(names(testData)).toEqual(['Test one 01/05/2024 10:00']);
    expect(liveData.deviceCount).toBe(1);
    expect(testData.deviceCount).toBe(1);
    expect(testData.visits.map((v: { deviceName: string }) => v.deviceName)).toEqual(['Test one']);
    expect(testData.summary.map((s: { deviceName: string }) => s.deviceName)).toEqual(['Test one']);
    expect((await report(testKey, { ...DAY, deviceIds: live.imei })).status).toBe(404);
    expect((await report(liveKey, { ...DAY, deviceIds: test.imei })).status).toBe(404);
  });
});
