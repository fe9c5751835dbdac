import { serve, type ServerType } from '@hono/node-server';
import { check } from '@placemarkio/check-geojson';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { encodePositionCursor } from '../api/positions/position-cursor.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { storeFixBatch } from '../db/position-batches.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import type { Logger } from '../runtime/logger.ts';
import { eventually } from './support/eventually.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// The position history as integrators read it: JSON pages, GeoJSON and CSV through the real app, the
// CSV export also through a real HTTP server (backpressure, a client that goes away).

const M_PER_DEG = (6_371_008.8 * Math.PI) / 180;
/** Fixes of the big vehicle: more than one GeoJSON answer holds, 12 CSV batches. */
const BIG = 60_000;
/** Midnight of 1 June in Mexico City. */
const BIG_START = Date.UTC(2024, 5, 1, 6);
/** Attributes big enough that the whole export (~25 MB) cannot sit in socket buffers. */
const PADDING = 'x'.repeat(250);

let t: TestApp;
let mexicoKey: string;
let tokyoKey: string;
let accountId: number;
let truck: { id: number; imei: string };
let big: { id: number; imei: string };
let other: { id: number; imei: string };
let server: ServerType;
let baseUrl: string;
const logged: Array<{ message: string; fields?: Record<string, unknown> }> = [];

type Fix = Partial<StoredFix> & { fixTime: Date };

async function store(deviceId: number, fixes: Fix[]): Promise<void> {
  for (let i = 0; i < fixes.length; i += 5_000) {
    await storeFixBatch(
      t.database.db,
      fixes.slice(i, i + 5_000).map((f) => ({ deviceId, receivedAt: f.fixTime, valid: true, latitude: 19.4, longitude: -99.1, ...f })),
    );
  }
}

/** Every 30 minutes from 30 April 00:00 UTC to 3 May 00:00 UTC, driving north 1 km a fix. */
const halfHourly = Array.from({ length: 3 * 48 + 1 }, (_, i) => ({
  fixTime: new Date(Date.UTC(2024, 3, 30) + i * 1_800_000),
  latitude: 19 + (i * 1000) / M_PER_DEG,
  longitude: -99.1,
  speedKmh: 40 + (i % 5),
  attributes: { odometer: 1_000_000 + i * 1000, seq: i },
}));

const get = (path: string, key = mexicoKey) => t.json(`/api/v1${path}`, { key });
const positions = (query: string, key = mexicoKey, imei = truck.imei) => get(`/vehicles/${imei}/positions${query}`, key);

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant('America/Mexico_City');
  mexicoKey = tenant.key;
  accountId = tenant.account.id;
  const tokyo = await t.fixtures.user(accountId, 'Asia/Tokyo');
  tokyoKey = (await t.fixtures.key(tokyo.id)).key;
  truck = await t.fixtures.device(accountId, { name: 'Truck 1' });
  big = await t.fixtures.device(accountId, { name: 'Long hauler' });
  other = await t.fixtures.device((await t.fixtures.account()).id, { name: 'Not ours' });
  await store(truck.id, halfHourly);
  await store(
    big.id,
    Array.from({ length: BIG }, (_, i) => ({
      fixTime: new Date(BIG_START + i * 10_000),
      // North along a meridian with ±2 m of east-west jitter.
      latitude: 10 + (i * 5) / M_PER_DEG,
      longitude: 20 + ((i % 3) - 1) * 2e-5,
      speedKmh: 60,
      attributes: { seq: i, padding: PADDING },
    })),
  );

  const capture = (message: string, fields?: Record<string, unknown>) => void logged.push({ message, fields });
  const log: Logger = { debug: capture, info: capture, warn: capture, error: capture, child: () => log };
  const app = createApp({ db: t.database.db, log, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
}, 300_000);

afterAll(async () => {
  server?.close();
  (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  await t?.close();
});

/** RFC 4180, as a spreadsheet reads it: quoted fields may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), i++;
    } else field += ch;
  }
  if (field || row.length) throw new Error(`CSV does not end with CRLF: ${JSON.stringify(text.slice(-80))}`);
  return rows;
}

describe('ranges in the user timezone', () => {
  it('reads a date as that whole day in Mexico City (UTC-6) and in Tokyo (UTC+9)', async () => {
    const mexico = await positions('?from=2024-05-01&to=2024-05-01');
    expect(mexico.status).toBe(200);
    expect(mexico.body.data).toHaveLength(48);
    expect(mexico.body.data[0].fixTime).toBe('2024-05-01T00:00:00-06:00');
    expect(mexico.body.data[47].fixTime).toBe('2024-05-01T23:30:00-06:00');
    expect(mexico.body.data[0].attributes.seq).toBe(48 + 12); // 1 May 06:00 UTC

    const tokyo = await positions('?from=2024-05-01&to=2024-05-01', tokyoKey);
    expect(tokyo.body.data).toHaveLength(48);
    expect(tokyo.body.data[0].fixTime).toBe('2024-05-01T00:00:00+09:00');
    expect(tokyo.body.data[0].attributes.seq).toBe(48 - 18); // 30 April 15:00 UTC
    expect(tokyo.body.data[47].fixTime).toBe('2024-05-01T23:30:00+09:00');
  });

  it('reads date-times as wall clock, both bounds included', async () => {
    const mexico = await positions('?from=2024-05-01T08:30&to=2024-05-01T10:00');
    expect(mexico.body.data.map((p: any) => p.fixTime)).toEqual(['2024-05-01T08:30:00-06:00', '2024-05-01T09:00:00-06:00', '2024-05-01T09:30:00-06:00', '2024-05-01T10:00:00-06:00']);
    const tokyo = await positions('?from=2024-05-01T08:30&to=2024-05-01T09:00', tokyoKey);
    expect(tokyo.body.data.map((p: any) => p.fixTime)).toEqual(['2024-05-01T08:30:00+09:00', '2024-05-01T09:00:00+09:00']);
  });

  it('defaults to the last 24 hours', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Recent' });
    const now = Date.now();
    await store(device.id, [25, 23, 1].map((h) => ({ fixTime: new Date(now - h * 3_600_000), attributes: { hoursAgo: h } })));
    const res = await positions('', mexicoKey, device.imei);
    expect(res.body.data.map((p: any) => p.attributes.hoursAgo)).toEqual([23, 1]);
  });

  it('shows every field: coordinates, measures, the odometer in km from attributes.odometer (metres), nulls as null', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Fields' });
    await store(device.id, [
      { fixTime: new Date('2024-05-01T12:00:00Z'), latitude: 19.4326, longitude: -99.1332, altitude: 2240, speedKmh: 42.5, heading: 90, satellites: 11, ignition: true, attributes: { odometer: 12_345_678, rssi: 23 } },
      { fixTime: new Date('2024-05-01T12:01:00Z'), valid: false, latitude: 0, longitude: 0, attributes: { odometer: 'broken' } },
    ]);
    const res = await positions('?from=2024-05-01&to=2024-05-01', mexicoKey, device.imei);
    expect(res.body).toEqual({
      data: [
        { fixTime: '2024-05-01T06:00:00-06:00', lat: 19.4326, lng: -99.1332, speedKmh: 42.5, heading: 90, altitude: 2240, satellites: 11, ignition: true, odometerKm: 12345.678, valid: true, attributes: { odometer: 12_345_678, rssi: 23 } },
        { fixTime: '2024-05-01T06:01:00-06:00', lat: 0, lng: 0, speedKmh: null, heading: null, altitude: null, satellites: null, ignition: null, odometerKm: null, valid: false, attributes: { odometer: 'broken' } },
      ],
      has_more: false,
      next_cursor: null,
    });
  });
});

describe('pages', () => {
  const range = '?from=2024-04-30&to=2024-05-02';

  it('pages with an opaque cursor, in fix-time order, nothing repeated or skipped', async () => {
    const all: number[] = [];
    let query = `${range}&limit=40`;
    let pages = 0;
    for (;;) {
      const res = await positions(query);
      expect(res.status).toBe(200);
      pages++;
      all.push(...res.body.data.map((p: any) => p.attributes.seq));
      if (!res.body.has_more) {
        expect(res.body.next_cursor).toBeNull();
        break;
      }
      expect(res.body.data).toHaveLength(40);
      // Alternately with the same from/to and with the cursor alone.
      query = pages % 2 ? `?cursor=${res.body.next_cursor}&limit=40` : `${range}&cursor=${res.body.next_cursor}&limit=40`;
    }
    // 30 April 06:00 UTC to 3 May 05:59 UTC: every fix from seq 12 on.
    expect(all).toEqual(Array.from({ length: halfHourly.length - 12 }, (_, i) => i + 12));
    expect(pages).toBe(4);
  });

  it('has a default limit of 1,000 and a maximum of 5,000', async () => {
    const first = await positions(`?from=2024-06-01&to=2024-06-07`, mexicoKey, big.imei);
    expect(first.body.data).toHaveLength(1_000);
    const max = await positions(`?from=2024-06-01&to=2024-06-07&limit=5000`, mexicoKey, big.imei);
    expect(max.body.data).toHaveLength(5_000);
    expect(max.body.has_more).toBe(true);
    expect((await positions(`?limit=5001`, mexicoKey, big.imei)).status).toBe(400);
  });

  it('does not show a late fix stored behind the cursor, and does show one ahead of it', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Late' });
    await store(device.id, [0, 10, 20, 30].map((m) => ({ fixTime: new Date(Date.UTC(2024, 4, 1, 12, m)), attributes: { m } })));
    const first = await positions('?from=2024-05-01&to=2024-05-01&limit=2', mexicoKey, device.imei);
    expect(first.body.data.map((p: any) => p.attributes.m)).toEqual([0, 10]);
    await store(device.id, [5, 25].map((m) => ({ fixTime: new Date(Date.UTC(2024, 4, 1, 12, m)), attributes: { m } })));
    const rest = await positions(`?cursor=${first.body.next_cursor}&limit=10`, mexicoKey, device.imei);
    expect(rest.body.data.map((p: any) => p.attributes.m)).toEqual([20, 25, 30]);
  });

  it('refuses a cursor tampered with, made for another vehicle or another range, or with a format that is not paged', async () => {
    const first = await positions(`${range}&limit=5`);
    const cursor: string = first.body.next_cursor;
    const tampered = Buffer.from(Buffer.from(cursor, 'base64url').toString().replace(/:(\d+)$/, ':x$1')).toString('base64url');
    for (const [query, message] of [
      [`?cursor=${tampered}`, /cursor is not one this list returned/],
      [`?cursor=${cursor.slice(0, -2)}`, /cursor is not one this list returned/],
      ['?cursor=%00', /cursor is not one this list returned/],
      [`?cursor=${'A'.repeat(201)}`, /cursor/],
      [`?from=2024-04-30&to=2024-05-03&cursor=${cursor}`, /another from\/to/],
      [`?cursor=${cursor}&format=geojson`, /limit and cursor page format=json/],
      [`?cursor=${cursor}&format=csv`, /limit and cursor page format=json/],
    ] as const) {
      const res = await positions(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatch(message);
    }
    const foreign = await positions(`?cursor=${cursor}`, mexicoKey, big.imei);
    expect(foreign.body.error).toMatch(/another vehicle/);
    // A cursor whose position lies outside its own range is no cursor this API made.
    const outside = encodePositionCursor({ deviceId: truck.id, from: new Date(1000), to: new Date(2000), after: new Date(3000) });
    expect((await positions(`?cursor=${outside}`)).status).toBe(400);
    // Nor is one whose range is longer than a request may ask for.
    const long = encodePositionCursor({ deviceId: truck.id, from: new Date(0), to: new Date(32 * 86_400_000), after: new Date(1000) });
    expect((await positions(`?cursor=${long}`)).status).toBe(400);
    const fine = encodePositionCursor({ deviceId: truck.id, from: new Date(0), to: new Date(31 * 86_400_000), after: new Date(1000) });
    expect((await positions(`?cursor=${fine}`)).status).toBe(200);
  });
});

describe('refusals', () => {
  it('answers 400 in the error envelope for bad ranges and parameters', async () => {
    for (const [query, message] of [
      ['?from=2024-05-01&to=2024-06-01', /at most 31 days/],
      ['?from=2024-05-01T10:00&to=2024-05-01T10:00', /from must be before to/],
      ['?from=2024-05-02&to=2024-05-01', /from must not be after to/],
      ['?from=2024-05-01', /both from and to, or neither/],
      ['?to=2024-05-01', /both from and to, or neither/],
      ['?from=01/05/2024&to=2024-05-02', /not an ISO date/],
      ['?from=2024-05-01%00&to=2024-05-02', /not an ISO date/],
      ['?from=99999-01-01&to=99999-01-02', /not an ISO date/],
      ['?format=kml', /format/],
      ['?limit=0', /limit/],
      ['?limit=abc', /limit/],
      ['?limit=1e400', /limit/],
      ['?simplify=0', /simplify/],
      ['?simplify=-5', /simplify/],
      ['?simplify=NaN', /simplify/],
      ['?simplify=100001', /simplify/],
      ['?simplify=10&format=csv', /simplify does not apply to format=csv/],
      ['?limit=10&format=geojson', /limit and cursor page format=json/],
    ] as const) {
      const res = await positions(query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ success: false, data: null });
      expect(res.body.error, query).toMatch(message);
    }
  });

  it('answers 404 for a vehicle that is unknown, of another account, hidden from the user or of the other mode', async () => {
    const hiddenFromMe = await t.fixtures.device(accountId, { name: 'Hidden', userIds: [(await t.fixtures.user(accountId)).id] });
    const testMode = await t.fixtures.device(accountId, { name: 'Test mode truck', mode: 'test' });
    for (const imei of ['000000000000000', other.imei, hiddenFromMe.imei, testMode.imei]) {
      const res = await positions('', mexicoKey, imei);
      expect(res.status, imei).toBe(404);
      expect(res.body.error).toBe('Vehicle not found or no access');
    }
    expect((await positions('', mexicoKey, '86%00123')).status).toBe(400);
    expect((await positions('', mexicoKey, '9'.repeat(65))).status).toBe(400);
  });

  it('needs vehicles:read', async () => {
    const user = await t.fixtures.user(accountId);
    const key = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).key;
    const res = await positions('', key);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/vehicles:read/);
  });
});

describe('GeoJSON', () => {
  const geojson = async (query: string, imei = truck.imei) => {
    const res = await t.call(`/api/v1/vehicles/${imei}/positions?format=geojson${query}`, { key: mexicoKey });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('is a valid RFC 7946 FeatureCollection: the track as a [lng, lat] LineString of the valid fixes, then a Point per fix', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Map' });
    await store(device.id, [
      { fixTime: new Date('2024-05-01T12:00:00Z'), latitude: 19.1, longitude: -99.1, attributes: { odometer: 5000 } },
      { fixTime: new Date('2024-05-01T12:01:00Z'), valid: false, latitude: 0, longitude: 0 },
      { fixTime: new Date('2024-05-01T12:02:00Z'), latitude: 19.2, longitude: -99.2, altitude: 2200 },
    ]);
    const res = await geojson('&from=2024-05-01&to=2024-05-01', device.imei);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/geo+json');
    const parsed = check(res.text) as any;
    expect(parsed.type).toBe('FeatureCollection');
    const [line, ...points] = parsed.features;
    expect(line.geometry).toEqual({ type: 'LineString', coordinates: [[-99.1, 19.1], [-99.2, 19.2]] });
    expect(line.properties).toEqual({ kind: 'track', points: 2 });
    expect(points.map((p: any) => p.geometry.coordinates)).toEqual([[-99.1, 19.1], [0, 0], [-99.2, 19.2]]);
    expect(points[0].properties).toMatchObject({ kind: 'fix', fixTime: '2024-05-01T12:00:00.000Z', odometerKm: 5, valid: true });
    expect(points[1].properties).toMatchObject({ valid: false });
    expect(points[2].properties).toMatchObject({ altitude: 2200 });
  });

  it('has no LineString with fewer than two valid fixes, and is an empty collection for an empty range', async () => {
    const one = check((await geojson('&from=2024-05-01T06:00&to=2024-05-01T06:10')).text) as any;
    expect(one.features.map((f: any) => f.geometry.type)).toEqual(['Point']);
    const none = check((await geojson('&from=2020-01-01&to=2020-01-02')).text) as any;
    expect(none).toEqual({ type: 'FeatureCollection', features: [] });
  });

  it('refuses a range over 50,000 fixes unless simplified, and simplifies the whole range keeping its first and last fix', async () => {
    const whole = '&from=2024-06-01&to=2024-06-08';
    const refused = await geojson(whole, big.imei);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).error).toMatch(/more than 50,000 fixes.*simplify/);

    const res = await geojson(`${whole}&simplify=10`, big.imei);
    expect(res.status).toBe(200);
    const parsed = check(res.text) as any;
    const [line, ...points] = parsed.features;
    // A straight drive with ±2 m of jitter: its two ends.
    expect(line.geometry.coordinates).toHaveLength(2);
    expect(points.map((p: any) => p.properties.attributes.seq)).toEqual([0, BIG - 1]);
    expect(points[1].properties.fixTime).toBe(new Date(BIG_START + (BIG - 1) * 10_000).toISOString());

    // 23 MB: parsed plainly, check-geojson takes seconds over it.
    // Its ±2 m jitter repeats every three fixes, the worst case of whole-track simplification at 1 m:
    // the track is simplified run by run instead, and still answered.
    const fine = JSON.parse((await geojson(`${whole}&simplify=1`, big.imei)).text);
    expect(fine.features.length).toBeGreaterThan(1_000);
    expect(fine.features.length).toBeLessThan(BIG);
  });

  it('simplifies a winding track: fewer points, the ends kept, invalid fixes left out', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Winding' });
    const fixes: Fix[] = Array.from({ length: 300 }, (_, i) => ({
      fixTime: new Date(Date.UTC(2024, 4, 1, 12) + i * 5_000),
      latitude: 19 + (i * 10) / M_PER_DEG,
      longitude: -99 + (Math.sin(i / 20) * 300) / M_PER_DEG,
      valid: i % 50 !== 25,
      attributes: { i },
    }));
    fixes[0]!.valid = true;
    await store(device.id, fixes);
    const raw = check((await geojson('&from=2024-05-01&to=2024-05-01', device.imei)).text) as any;
    const simplified = check((await geojson('&from=2024-05-01&to=2024-05-01&simplify=5', device.imei)).text) as any;
    const [rawLine] = raw.features;
    const [line, ...points] = simplified.features;
    expect(rawLine.geometry.coordinates).toHaveLength(294);
    expect(line.geometry.coordinates.length).toBeLessThan(100);
    expect(line.geometry.coordinates.length).toBeGreaterThan(10);
    expect(line.geometry.coordinates[0]).toEqual(rawLine.geometry.coordinates[0]);
    expect(line.geometry.coordinates.at(-1)).toEqual(rawLine.geometry.coordinates.at(-1));
    expect(points.every((p: any) => p.properties.valid)).toBe(true);
    expect(points.map((p: any) => p.properties.attributes.i)).toEqual([...points.map((p: any) => p.properties.attributes.i)].sort((a, b) => a - b));

    // JSON pages are simplified each on its own: the page's ends are kept.
    const page = await positions('?from=2024-05-01&to=2024-05-01&simplify=5&limit=150', mexicoKey, device.imei);
    expect(page.body.data.length).toBeLessThan(60);
    expect(page.body.data[0].attributes.i).toBe(0);
    expect(page.body.data.at(-1).attributes.i).toBe(149);
    expect(page.body.has_more).toBe(true);
  });
});

describe('CSV', () => {
  it('is RFC 4180 with a header row, times in UTC and in the user zone, quoted attributes that survive commas, quotes and line breaks', async () => {
    const device = await t.fixtures.device(accountId, { name: 'Csv' });
    const note = 'a "quoted", text\r\nover two lines';
    await store(device.id, [
      { fixTime: new Date('2024-05-01T12:00:00.250Z'), latitude: 19.4326, longitude: -99.1332, speedKmh: 42.5, heading: 90, altitude: 2240, satellites: 11, ignition: false, attributes: { odometer: 1500, note } },
      { fixTime: new Date('2024-05-01T12:01:00Z'), valid: false, latitude: 0, longitude: 0 },
    ]);
    const res = await t.call(`/api/v1/vehicles/${device.imei}/positions?format=csv&from=2024-05-01&to=2024-05-01`, { key: mexicoKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="positions-${device.imei}-20240501T060000Z-20240502T055959Z\\.csv"$`));
    const rows = parseCsv(await res.text());
    expect(rows).toEqual([
      ['fixTime', 'fixTimeLocal', 'lat', 'lng', 'speedKmh', 'heading', 'altitude', 'satellites', 'ignition', 'odometerKm', 'valid', 'attributes'],
      ['2024-05-01T12:00:00.250Z', '2024-05-01T06:00:00-06:00', '19.4326', '-99.1332', '42.5', '90', '2240', '11', 'false', '1.5', 'true', expect.any(String)],
      ['2024-05-01T12:01:00.000Z', '2024-05-01T06:01:00-06:00', '0', '0', '', '', '', '', '', '', 'false', '{}'],
    ]);
    expect(JSON.parse(rows[1]![11]!)).toEqual({ odometer: 1500, note });
  });

  it('exports a whole range of 60,000 fixes in order, in 5,000-fix batches', async () => {
    const res = await fetch(`${baseUrl}/vehicles/${big.imei}/positions?format=csv&from=2024-06-01&to=2024-06-08`, { headers: { Authorization: `Bearer ${mexicoKey}` } });
    expect(res.status).toBe(200);
    const rows = parseCsv(await res.text());
    expect(rows).toHaveLength(BIG + 1);
    const seqs = rows.slice(1).map((r) => JSON.parse(r[11]!).seq as number);
    expect(seqs.every((s, i) => s === i)).toBe(true);
    await eventually(async () => logged, (l) => expect(l.filter((e) => e.message === 'position export complete' && e.fields?.rows === BIG).map((e) => e.fields?.batches)).toEqual([13]));
  });

  it('stops reading when the client goes away mid-export', async () => {
    const before = logged.length;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${baseUrl}/vehicles/${big.imei}/positions?format=csv&from=2024-06-01&to=2024-06-08`, { headers: { Authorization: `Bearer ${mexicoKey}` } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.once('error', reject);
      req.end();
    });
    const [stopped] = await eventually(
      async () => logged.slice(before).filter((e) => e.message.startsWith('position export')),
      (l) => expect(l.map((e) => e.message)).toEqual(['position export stopped: the client went away']),
    );
    expect(stopped!.fields!.rows).toBeLessThan(BIG);
    expect(stopped!.fields!.batches).toBeLessThan(12);
    // No batch is read after the stop.
    await new Promise((r) => setTimeout(r, 500));
    expect(logged.slice(before).filter((e) => e.message.startsWith('position export'))).toHaveLength(1);
  });

  it('holds back its reading while the client does not read, and other requests go on meanwhile', async () => {
    const before = logged.length;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${baseUrl}/vehicles/${big.imei}/positions?format=csv&from=2024-06-01&to=2024-06-08`, { headers: { Authorization: `Bearer ${mexicoKey}` } }, resolve);
      req.once('error', reject);
      req.end();
    });
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve) => response.once('data', (chunk: Buffer) => (chunks.push(chunk), response.pause(), resolve())));
    await new Promise((r) => setTimeout(r, 300));
    // While the export waits for its client, the database answers others.
    const started = performance.now();
    const page = await fetch(`${baseUrl}/vehicles/${truck.imei}/positions?from=2024-05-01&to=2024-05-01`, { headers: { Authorization: `Bearer ${mexicoKey}` } });
    expect(page.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(logged.slice(before).filter((e) => e.message.startsWith('position export'))).toEqual([]);

    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    expect(parseCsv(Buffer.concat(chunks).toString())).toHaveLength(BIG + 1);
  });

  it('answers an empty range with the header row alone', async () => {
    const res = await t.call(`/api/v1/vehicles/${truck.imei}/positions?format=csv&from=2020-01-01&to=2020-01-02`, { key: mexicoKey });
    expect(await res.text()).toBe('fixTime,fixTimeLocal,lat,lng,speedKmh,heading,altitude,satellites,ignition,odometerKm,valid,attributes\r\n');
  });
});
