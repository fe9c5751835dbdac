import { Validator } from '@seriousme/openapi-schema-validator';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../api/app.ts';
import { randomUUID } from 'node:crypto';
import { hashApiKey, issueApiKey } from '../api/auth/api-key-token.ts';
import { issueSetupToken } from '../api/auth/first-run-setup.ts';
import { hashPassword } from '../api/auth/password-hash.ts';
import { insertSignInToken, setPasswordHash } from '../db/user-passwords.ts';
import type { Permission } from '../domain/access/permissions.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import type { Database } from '../db/schema.ts';
import { silentLogger } from '../runtime/logger.ts';
import { buildConformanceScene, travelBody, type ConformanceScene } from './support/openapi-conformance-scene.ts';
import { nullableIntersections } from './support/openapi-nullable-intersections.ts';
import { documentedOperations, type OpenApiDocument } from './support/openapi-operations.ts';
import { openApiResponseValidator } from './support/openapi-response-validator.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * Every answer of every documented operation, success and error, checked against the schema the served
 * OpenAPI document declares for its operation, status and content type. An operation the document
 * lists without cases here, or a status it lists that no case produces, fails the last test.
 */

interface HttpRequest {
  path: string;
  method?: string;
  /** A string is sent as it is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

interface Case {
  status: number;
  what: string;
  request(s: ConformanceScene): HttpRequest | Promise<HttpRequest>;
  /** The key sent; by default one holding only the operation's permission. Undefined sends none. */
  key?(s: ConformanceScene, permission: Permission | undefined): string | undefined;
  /**
   * Sent with the cookie of a session signed in for the case (and no key), a write with its CSRF token
   * unless the request names one or the case says `without-csrf`.
   */
  session?: true | 'without-csrf';
  /**
   * Another app on the same database: one whose rate limit the key has used up, or one whose database is down;
   * or `first-run`: a server on a database with no account, its setup open (see firstRun).
   */
  via?: 'rate-limited' | 'database-down' | 'first-run';
  /** What the answer must show for the case to prove what it claims. */
  shows?(body: any): void;
}

/** An ISO date `n` days from today (UTC): a range of yesterday to tomorrow holds the last hours in any timezone. */
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const oversized = (bytes: number) => JSON.stringify({ pad: 'x'.repeat(bytes) });
const errorMatching = (pattern: RegExp) => (body: any) => expect(body.error).toMatch(pattern);
const TEST_MODE_REFUSED = /test-mode key or token cannot add, change or remove them; use a live key/;
/** A browser's PushSubscription JSON: a P-256 public key (65 bytes, 0x04 first) and a 16-byte secret, base64url. */
const PUSH_SUBSCRIPTION = {
  endpoint: `https://push.example.com/conformance/${process.pid}`, expirationTime: null,
  keys: { p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url'), auth: Buffer.alloc(16, 9).toString('base64url') },
};
const noneNull = (record: Record<string, unknown>) => expect(Object.entries(record).filter(([, v]) => v === null)).toEqual([]);

/**
 * The sign-in sessions' scene, made in beforeAll: the scene's user signs in with `password`; `spare` is
 * another session of theirs (to end); `setPasswordToken` a one-time token of another user; `lockedEmail`
 * an email with as many failed sign-ins as a minute allows.
 */
const sessions = { password: 'conformance password 1', email: '', spare: '', setPasswordToken: '', lockedEmail: `locked-${process.pid}@example.test` };
const NO_SESSION = '00000000-0000-4000-8000-000000000000';
/**
 * A server started on a database with no account, its first-run setup open with `token`, over a socket
 * (wrong tokens are counted per client address, one a minute allowed). Its cases run in order: the setup
 * creates the account, then a reopened setup finds one (409), then wrong tokens are refused and slowed.
 */
let firstRun: { database: TestDatabase; http: { url: string; close(): Promise<void> }; token: string } | undefined;
const setupBody = (token: string) => ({ token, accountName: 'First Fleet', email: `first-${process.pid}@example.test`, timezone: 'Europe/Madrid', password: 'first owner password' });
/** A setup opened again (a restart of a server with no account prints a new link). */
const reopened = () => issueSetupToken(firstRun!.database.db);
const notASession = errorMatching(/for a signed-in session/);

/**
 * Per documented operation: the permission it needs, its security requirement where it is not that
 * permission's (public: `[]`; the session's own: the cookie), and its own cases; the first success is its
 * sample request.
 */
const OPERATIONS: Record<string, { permission?: Permission; security?: unknown[]; cases: Case[] }> = {
  'GET /devices/status': {
    permission: 'devices:read',
    cases: [
      {
        status: 200,
        what: 'devices with every field, with a bare fix and with none',
        request: () => ({ path: '/devices/status' }),
        shows: (body) => {
          const byName = new Map(body.data.map((d: any) => [d.name, d]));
          noneNull(byName.get('Reporting truck') as any);
          expect(byName.get('Silent truck')).toMatchObject({ latitude: null, lastReportUtc: null });
          expect(byName.get('Bare fix truck')).toMatchObject({ latitude: 19.4, speedKmh: null });
        },
      },
    ],
  },
  'GET /devices/{deviceId}/status': {
    permission: 'devices:read',
    cases: [
      { status: 200, what: 'a device with every field', request: (s) => ({ path: `/devices/${s.devices.reporting.imei}/status` }), shows: (body) => noneNull(body.data) },
      {
        status: 200,
        what: 'a device that never reported',
        request: (s) => ({ path: `/devices/${s.devices.silent.imei}/status` }),
        shows: (body) => expect(body.data).toMatchObject({ latitude: null, heading: null, lastReportUtc: null, minutesSinceReport: null }),
      },
      { status: 400, what: 'an id over 64 characters', request: () => ({ path: `/devices/${'9'.repeat(65)}/status` }) },
      { status: 400, what: 'a NUL in the id', request: () => ({ path: '/devices/86%00123/status' }), shows: errorMatching(/NUL/) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/devices/000000000000000/status' }) },
    ],
  },
  'GET /geofences': {
    permission: 'geofences:read',
    cases: [{ status: 200, what: 'polygons and circles', request: () => ({ path: '/geofences' }), shows: (body) => expect(body.data.map((g: any) => g.type).sort()).toEqual(['circle', 'circle', 'polygon']) }],
  },
  'POST /geofences': {
    permission: 'geofences:write',
    cases: [
      {
        status: 201,
        what: 'a circle',
        request: () => ({ path: '/geofences', method: 'POST', body: { name: 'New depot', type: 'circle', center: { lat: 19.41, lng: -99.12 }, radiusMeters: 250, enterDwellSeconds: 30 } }),
        shows: (body) => expect(body.data).toMatchObject({ name: 'New depot', type: 'circle', radiusMeters: 250, vertexCount: 64, enterDwellSeconds: 30, exitDwellSeconds: 0 }),
      },
      {
        status: 201,
        what: 'a polygon from vertices',
        request: () => ({ path: '/geofences', method: 'POST', body: { name: 'New lot', type: 'polygon', vertices: [{ lat: 19.40, lng: -99.10 }, { lat: 19.40, lng: -99.09 }, { lat: 19.41, lng: -99.09 }] } }),
        shows: (body) => expect(body.data).toMatchObject({ type: 'polygon', vertexCount: 3 }),
      },
      { status: 400, what: 'crossing edges', request: () => ({ path: '/geofences', method: 'POST', body: { name: 'Bow tie', type: 'polygon', vertices: [{ lat: 0, lng: 0 }, { lat: 1, lng: 1 }, { lat: 0, lng: 1 }, { lat: 1, lng: 0 }] } }), shows: errorMatching(/cross/) },
      { status: 409, what: 'a name the account already has', request: () => ({ path: '/geofences', method: 'POST', body: { name: 'Warehouse North', type: 'circle', center: { lat: 19.41, lng: -99.12 }, radiusMeters: 100 } }) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/geofences', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/geofences', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /geofences/{id}': {
    permission: 'geofences:read',
    cases: [
      { status: 200, what: 'a polygon', request: (s) => ({ path: `/geofences/${s.geofences.warehouse}` }), shows: (body) => expect(body.data).toMatchObject({ name: 'Warehouse North', type: 'polygon' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/geofences/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/geofences/999999999' }) },
    ],
  },
  'PATCH /geofences/{id}': {
    permission: 'geofences:write',
    cases: [
      { status: 200, what: 'a new dwell time', request: (s) => ({ path: `/geofences/${s.geofences.polanco}`, method: 'PATCH', body: { exitDwellSeconds: 60 } }), shows: (body) => expect(body.data.exitDwellSeconds).toBe(60) },
      { status: 400, what: 'a radius over 100 km', request: (s) => ({ path: `/geofences/${s.geofences.polanco}`, method: 'PATCH', body: { type: 'circle', center: { lat: 19.43, lng: -99.19 }, radiusMeters: 100_001 } }), shows: errorMatching(/100 km/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/geofences/999999999', method: 'PATCH', body: { name: 'x' } }) },
      { status: 409, what: 'another geofence\'s name', request: (s) => ({ path: `/geofences/${s.geofences.polanco}`, method: 'PATCH', body: { name: 'Warehouse North' } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/geofences/${s.geofences.polanco}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/geofences/${s.geofences.polanco}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /geofences/{id}': {
    permission: 'geofences:write',
    cases: [
      { status: 200, what: 'a geofence no travel goes to', request: (s) => ({ path: `/geofences/${s.geofences.spare}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/geofences/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/geofences/999999999', method: 'DELETE' }) },
      { status: 409, what: 'a pending waypoint of an active travel', request: (s) => ({ path: `/geofences/${s.geofences.warehouse}`, method: 'DELETE' }), shows: errorMatching(/active travel/) },
    ],
  },
  'GET /reports/geofences': {
    permission: 'reports:read',
    cases: [
      {
        status: 200,
        what: 'summary, events and visits, one visit still open',
        request: () => ({ path: '/reports/geofences?from=2024-05-01&to=2024-05-01' }),
        shows: (body) => {
          expect(body.data.summary.length).toBeGreaterThan(0);
          expect(body.data.events.length).toBeGreaterThan(0);
          expect(body.data.visits.map((v: any) => v.exitTime === null).sort()).toEqual([false, true]);
        },
      },
      {
        status: 200,
        what: 'the summary alone',
        request: (s) => ({ path: `/reports/geofences?from=2024-05-01&to=2024-05-01&include=summary&geofenceIds=${s.geofences.warehouse}` }),
        shows: (body) => expect(Object.keys(body.data).sort()).toEqual(['deviceCount', 'geofenceCount', 'included', 'range', 'summary']),
      },
      { status: 400, what: 'no to', request: () => ({ path: '/reports/geofences?from=2024-05-01' }) },
      { status: 400, what: 'an unknown section', request: () => ({ path: '/reports/geofences?from=2024-05-01&to=2024-05-01&include=routes' }) },
      { status: 404, what: 'an unknown device', request: () => ({ path: '/reports/geofences?from=2024-05-01&to=2024-05-01&deviceIds=000000000000000' }) },
      { status: 404, what: 'an unknown geofence', request: () => ({ path: '/reports/geofences?from=2024-05-01&to=2024-05-01&geofenceIds=999999999' }) },
    ],
  },
  'GET /vehicles/{id}/positions': {
    permission: 'vehicles:read',
    cases: [
      {
        status: 200,
        what: 'the last 24 hours as JSON: a fix with every field, a bare one, an invalid one',
        request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions` }),
        shows: (body) => {
          expect(body.data.map((p: any) => [p.valid, p.odometerKm, p.speedKmh])).toEqual([[true, 12345.67, 42.4], [true, null, null], [false, null, null]]);
          expect(body).toMatchObject({ has_more: false, next_cursor: null });
        },
      },
      {
        status: 200,
        what: 'a page with more after it',
        request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions?limit=1&simplify=5` }),
        shows: (body) => expect([body.data.length, body.has_more, typeof body.next_cursor]).toEqual([1, true, 'string']),
      },
      {
        status: 200,
        what: 'GeoJSON: the track and three points',
        request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions?format=geojson` }),
        shows: (body) => expect(body.features.map((f: any) => f.geometry.type)).toEqual(['LineString', 'Point', 'Point', 'Point']),
      },
      {
        status: 200,
        what: 'CSV: the header and three rows',
        request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions?format=csv` }),
        shows: (body) => expect(body.split('\r\n')).toHaveLength(5),
      },
      { status: 400, what: 'a range over 31 days', request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions?from=2024-05-01&to=2024-06-15` }), shows: errorMatching(/31 days/) },
      { status: 400, what: 'a tampered cursor', request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}/positions?cursor=cDE6MTox` }), shows: errorMatching(/cursor/) },
      { status: 404, what: 'an unknown vehicle', request: () => ({ path: '/vehicles/000000000000000/positions' }), shows: errorMatching(/Vehicle not found or no access/) },
    ],
  },
  'GET /reports/trips': {
    permission: 'reports:read',
    cases: [
      {
        status: 200,
        what: 'trips, stops and summaries: a finished trip with a driver, one in progress, a stop still open',
        request: (s) => ({ path: `/reports/trips?from=${daysFromToday(-1)}&to=${daysFromToday(1)}&deviceIds=${s.devices.spare.imei}` }),
        shows: (body) => {
          const [vehicle] = body.data.vehicles;
          expect(vehicle.trips.map((t: any) => [t.endTime === null, t.driver?.name ?? null])).toEqual([[false, 'Ana Trip'], [true, null]]);
          expect(vehicle.stops.map((s: any) => s.endTime === null)).toEqual([true, false]);
          expect(body.data.fleet.tripCount).toBe(2);
        },
      },
      {
        status: 200,
        what: 'the summary alone, for every visible vehicle',
        request: () => ({ path: `/reports/trips?from=${daysFromToday(-1)}&to=${daysFromToday(1)}&include=summary` }),
        shows: (body) => {
          expect(body.data.vehicles.every((v: any) => v.trips === undefined && v.summary !== undefined)).toBe(true);
          expect(body.data.vehicles.some((v: any) => v.summary.maxSpeedKmh === null)).toBe(true);
        },
      },
      { status: 400, what: 'no to', request: () => ({ path: '/reports/trips?from=2024-05-01' }) },
      { status: 400, what: 'an unknown section', request: () => ({ path: '/reports/trips?from=2024-05-01&to=2024-05-01&include=legs' }) },
      { status: 404, what: 'an unknown device', request: () => ({ path: '/reports/trips?from=2024-05-01&to=2024-05-01&deviceIds=000000000000000' }) },
    ],
  },
  'POST /travels': {
    permission: 'travels:write',
    cases: [
      {
        status: 200,
        what: 'a new travel',
        request: (s) => ({ path: '/travels', method: 'POST', body: travelBody(s.devices.spare.name) }),
        shows: (body) => expect(body.data.waypoints.map((w: any) => w.arrivedAt)).toEqual([null, null, null]),
      },
      { status: 400, what: 'a body without its fields', request: () => ({ path: '/travels', method: 'POST', body: {} }), shows: errorMatching(/vehicle is required/) },
      { status: 400, what: 'malformed JSON', request: () => ({ path: '/travels', method: 'POST', body: '{"vehicle": ' }), shows: errorMatching(/Malformed JSON/) },
      { status: 400, what: 'an unknown vehicle', request: () => ({ path: '/travels', method: 'POST', body: travelBody('No such truck') }), shows: errorMatching(/Vehicle not found/) },
      {
        status: 400,
        what: 'an arrival before the start',
        request: (s) => ({ path: '/travels', method: 'POST', body: { ...travelBody(s.devices.spare.name), startTime: '01/05/2030 10:00' } }),
        shows: errorMatching(/earlier than startTime/),
      },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/travels', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      {
        status: 415,
        what: 'a text/plain body',
        request: (s) => ({ path: '/travels', method: 'POST', body: JSON.stringify(travelBody(s.devices.spare.name)), headers: { 'Content-Type': 'text/plain' } }),
      },
    ],
  },
  'GET /travels': {
    permission: 'travels:read',
    cases: [
      {
        status: 200,
        what: 'an in-progress travel with a live estimate and a scheduled one without',
        request: () => ({ path: '/travels' }),
        shows: (body) => {
          const delays = body.data.map((travel: any) => travel.delayMinutes);
          expect(delays).toContain(null);
          expect(delays.some((d: unknown) => typeof d === 'number')).toBe(true);
        },
      },
    ],
  },
  'GET /travels/{id}': {
    permission: 'travels:read',
    cases: [
      {
        status: 200,
        what: 'waypoints reached, estimated and not yet estimated',
        request: (s) => ({ path: `/travels/${s.travels.inProgress}` }),
        shows: (body) => {
          const waypoints = body.data.waypoints;
          expect(waypoints.map((w: any) => w.arrivedAt === null)).toEqual([false, true, true]);
          expect(waypoints.map((w: any) => w.estimatedArrival === null)).toEqual([true, false, true]);
        },
      },
      {
        status: 200,
        what: 'a cancelled travel',
        request: (s) => ({ path: `/travels/${s.travels.cancelled}` }),
        shows: (body) => expect(body.data.status).toBe('Cancelled'),
      },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/travels/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/travels/999999999' }) },
    ],
  },
  'GET /vehicles': {
    permission: 'vehicles:read',
    cases: [
      {
        status: 200,
        what: 'a first page of two, with a cursor to the next',
        request: () => ({ path: '/vehicles?limit=2' }),
        shows: (body) => {
          expect(body.data).toHaveLength(2);
          expect(body.has_more).toBe(true);
          expect(typeof body.next_cursor).toBe('string');
        },
      },
      {
        status: 200,
        what: 'every vehicle, the last page: locations, speeds and update times set and null',
        request: () => ({ path: '/vehicles?limit=500' }),
        shows: (body) => {
          expect(body).toMatchObject({ has_more: false, next_cursor: null });
          for (const field of ['location', 'speed_kmh', 'updated_at']) expect(body.data.map((v: any) => v[field] === null).sort(), field).toContain(true);
          for (const field of ['location', 'speed_kmh', 'updated_at']) expect(body.data.map((v: any) => v[field] === null), field).toContain(false);
        },
      },
      { status: 200, what: 'moving vehicles whose name or plates hold "det"', request: () => ({ path: '/vehicles?status=moving&q=DET' }), shows: (body) => expect(body.data.map((v: any) => v.name)).toEqual(['Detailed truck']) },
      { status: 400, what: 'an unknown status', request: () => ({ path: '/vehicles?status=parked' }), shows: errorMatching(/status/) },
      { status: 400, what: 'a cursor of another list', request: () => ({ path: `/vehicles?cursor=${Buffer.from('webhooks:1').toString('base64url')}` }), shows: errorMatching(/cursor/) },
      { status: 400, what: 'a limit over 500', request: () => ({ path: '/vehicles?limit=501' }) },
    ],
  },
  'GET /vehicles/{id}': {
    permission: 'vehicles:read',
    cases: [
      { status: 200, what: 'a vehicle with a fix, a driver, an unknown driver key, a protocol and a speed limit', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}` }), shows: (body) => noneNull(body.data) },
      {
        status: 200,
        what: 'a vehicle that never reported, without driver, protocol or limit',
        request: (s) => ({ path: `/vehicles/${s.devices.silent.imei}` }),
        shows: (body) => expect(body.data).toMatchObject({ status: 'inactive', location: null, speed_kmh: null, updated_at: null, driver: null, protocol: null, speed_limit_kmh: null }),
      },
      { status: 400, what: 'an id over 64 characters', request: () => ({ path: `/vehicles/${'9'.repeat(65)}` }) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/vehicles/000000000000000' }), shows: errorMatching(/Vehicle not found or no access/) },
    ],
  },
  'POST /vehicles': {
    permission: 'vehicles:write',
    cases: [
      {
        status: 201,
        what: 'a tracker with every field',
        request: () => ({ path: '/vehicles', method: 'POST', body: { imei: '359000000000777', name: 'New van', plates: 'VAN-777', protocol: 'gt06', speed_limit_kmh: 80 } }),
        shows: (body) => expect(body.data).toMatchObject({ id: '359000000000777', status: 'inactive', location: null, protocol: 'gt06' }),
      },
      { status: 400, what: 'an unknown field', request: () => ({ path: '/vehicles', method: 'POST', body: { imei: '359000000000778', name: 'Odd van', mode: 'test' } }), shows: errorMatching(/mode/) },
      { status: 409, what: 'an IMEI registered already', request: (s) => ({ path: '/vehicles', method: 'POST', body: { imei: s.vehicles.detailed, name: 'Twin' } }), shows: errorMatching(/already exists/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/vehicles', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/vehicles', method: 'POST', body: 'imei=1', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'PATCH /vehicles/{id}': {
    permission: 'vehicles:write',
    cases: [
      { status: 200, what: 'new plates and speed limit', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}`, method: 'PATCH', body: { plates: 'DET-002', speed_limit_kmh: 100 } }), shows: (body) => expect(body.data).toMatchObject({ plates: 'DET-002', speed_limit_kmh: 100, name: 'Detailed truck' }) },
      { status: 400, what: 'an IMEI, which cannot change', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}`, method: 'PATCH', body: { imei: '359000000000779' } }), shows: errorMatching(/imei/) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/vehicles/000000000000000', method: 'PATCH', body: { name: 'x' } }) },
      { status: 409, what: 'another vehicle\'s name', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}`, method: 'PATCH', body: { name: 'Reporting truck' } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /vehicles/{id}': {
    permission: 'vehicles:write',
    cases: [
      { status: 200, what: 'a vehicle without travels', request: (s) => ({ path: `/vehicles/${s.vehicles.toDelete}`, method: 'DELETE' }), shows: (body) => expect(body.data.deleted).toBe(true) },
      { status: 400, what: 'an id over 64 characters', request: () => ({ path: `/vehicles/${'9'.repeat(65)}`, method: 'DELETE' }) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/vehicles/000000000000000', method: 'DELETE' }) },
      { status: 409, what: 'a vehicle with an In progress travel', request: (s) => ({ path: `/vehicles/${s.devices.reporting.imei}`, method: 'DELETE' }), shows: errorMatching(/active travel .*In progress/) },
    ],
  },
  'GET /vehicles/{id}/accumulators': {
    permission: 'vehicles:read',
    cases: [
      { status: 200, what: 'a vehicle with a baseline', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}/accumulators` }), shows: (body) => { noneNull(body.data); noneNull(body.data.baseline); } },
      { status: 400, what: 'an id over 64 characters', request: () => ({ path: `/vehicles/${'9'.repeat(65)}/accumulators` }) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/vehicles/000000000000000/accumulators' }), shows: errorMatching(/Vehicle not found or no access/) },
    ],
  },
  'PUT /vehicles/{id}/accumulators': {
    permission: 'vehicles:write',
    cases: [
      { status: 200, what: 'an odometer baseline', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}/accumulators`, method: 'PUT', body: { odometerKm: 120_000 } }), shows: (body) => expect(body.data).toMatchObject({ serverOdometerKm: 120_000, baseline: { odometerKm: 120_000 } }) },
      { status: 400, what: 'no figure', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}/accumulators`, method: 'PUT', body: {} }), shows: errorMatching(/odometerKm, engineHours or both/) },
      { status: 404, what: 'an unknown IMEI', request: () => ({ path: '/vehicles/000000000000000/accumulators', method: 'PUT', body: { engineHours: 1 } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}/accumulators`, method: 'PUT', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/vehicles/${s.vehicles.detailed}/accumulators`, method: 'PUT', body: 'odometerKm=1', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /maintenance': {
    permission: 'maintenance:read',
    cases: [
      {
        status: 200,
        what: 'a first page of two, with a cursor to the next',
        request: () => ({ path: '/maintenance?limit=2' }),
        shows: (body) => expect(body).toMatchObject({ data: [expect.any(Object), expect.any(Object)], has_more: true, next_cursor: expect.any(String) }),
      },
      {
        status: 200,
        what: 'every item: reading, remaining and last service set and null',
        request: () => ({ path: '/maintenance?limit=500&withinKm=20000' }),
        shows: (body) => {
          expect(body).toMatchObject({ has_more: false, next_cursor: null });
          for (const field of ['current', 'remaining', 'lastService']) expect(new Set(body.data.map((m: any) => m[field] === null)), field).toEqual(new Set([true, false]));
        },
      },
      { status: 400, what: 'a cursor that is not one', request: () => ({ path: '/maintenance?cursor=abc' }), shows: errorMatching(/cursor/) },
    ],
  },
  'POST /maintenance': {
    permission: 'maintenance:write',
    cases: [
      {
        status: 201,
        what: 'an item every 500 engine hours',
        request: (s) => ({ path: '/maintenance', method: 'POST', body: { vehicleId: s.vehicles.detailed, name: 'Service', kind: 'engineHours', interval: 500 } }),
        shows: (body) => expect(body.data).toMatchObject({ kind: 'engineHours', unit: 'h', current: 3_500, nextDue: 4_000, tolerance: 50, status: 'ok', lastService: null }),
      },
      { status: 400, what: 'a vehicle with no reading and no from', request: (s) => ({ path: '/maintenance', method: 'POST', body: { vehicleId: s.devices.silent.imei, name: 'Oil', kind: 'odometer', interval: 10_000 } }), shows: errorMatching(/give from/) },
      { status: 404, what: 'an unknown vehicle', request: () => ({ path: '/maintenance', method: 'POST', body: { vehicleId: '000000000000000', name: 'Oil', kind: 'odometer', interval: 10, from: 0 } }), shows: errorMatching(/Vehicle not found/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/maintenance', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/maintenance', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /maintenance/{id}': {
    permission: 'maintenance:read',
    cases: [
      { status: 200, what: 'a serviced item', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}` }), shows: (body) => { noneNull(body.data); noneNull(body.data.lastService); } },
      { status: 200, what: 'an item of a vehicle with no reading', request: (s) => ({ path: `/maintenance/${s.maintenance.bare}` }), shows: (body) => expect(body.data).toMatchObject({ current: null, remaining: null, status: 'unknown', lastService: null }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/maintenance/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/maintenance/2147483647' }), shows: errorMatching(/Maintenance item not found/) },
    ],
  },
  'PATCH /maintenance/{id}': {
    permission: 'maintenance:write',
    cases: [
      { status: 200, what: 'a new tolerance', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}`, method: 'PATCH', body: { tolerance: 800 } }), shows: (body) => expect(body.data.tolerance).toBe(800) },
      { status: 400, what: 'no field', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}`, method: 'PATCH', body: {} }), shows: errorMatching(/give name, interval, tolerance or nextDue/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/maintenance/2147483647', method: 'PATCH', body: { name: 'x' } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /maintenance/{id}': {
    permission: 'maintenance:write',
    cases: [
      { status: 200, what: 'an item', request: (s) => ({ path: `/maintenance/${s.maintenance.toDelete}`, method: 'DELETE' }), shows: (body) => expect(body.data.deleted).toBe(true) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/maintenance/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/maintenance/2147483647', method: 'DELETE' }) },
    ],
  },
  'POST /maintenance/{id}/services': {
    permission: 'maintenance:write',
    cases: [
      {
        status: 201,
        what: 'a service with every field',
        request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services`, method: 'POST', body: { performedOn: '2026-01-20', odometerKm: 121_000, engineHours: 3_480, note: 'Filter too', cost: 90 } }),
        shows: (body) => { noneNull(body.data); expect(body.data.nextDue).toBe(131_000); },
      },
      { status: 400, what: 'a date in the future', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services`, method: 'POST', body: { performedOn: '2999-01-01' } }), shows: errorMatching(/future/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/maintenance/2147483647/services', method: 'POST', body: { odometerKm: 1 } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services`, method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services`, method: 'POST', body: 'note=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /maintenance/{id}/services': {
    permission: 'maintenance:read',
    cases: [
      { status: 200, what: 'the services of an item', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services` }), shows: (body) => expect(body.data.length).toBeGreaterThanOrEqual(1) },
      { status: 200, what: 'an item with none', request: (s) => ({ path: `/maintenance/${s.maintenance.bare}/services` }), shows: (body) => expect(body.data).toEqual([]) },
      { status: 400, what: 'a limit over 500', request: (s) => ({ path: `/maintenance/${s.maintenance.serviced}/services?limit=501` }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/maintenance/2147483647/services' }) },
    ],
  },
  'GET /reports/maintenance': {
    permission: 'maintenance:read',
    cases: [
      {
        status: 200,
        what: 'every status',
        request: () => ({ path: '/reports/maintenance?status=ok,unknown,dueSoon,due,overdue' }),
        shows: (body) => expect(body.data.items.length).toBe(Object.values(body.data.counts as Record<string, number>).reduce((a, b) => a + b, 0)),
      },
      { status: 400, what: 'an unknown status', request: () => ({ path: '/reports/maintenance?status=late' }), shows: errorMatching(/unknown "late"/) },
    ],
  },
  'GET /drivers': {
    permission: 'drivers:read',
    cases: [
      {
        status: 200,
        what: 'a first page of two, with a cursor to the next',
        request: () => ({ path: '/drivers?limit=2' }),
        shows: (body) => expect(body).toMatchObject({ data: [expect.any(Object), expect.any(Object)], has_more: true, next_cursor: expect.any(String) }),
      },
      {
        status: 200,
        what: 'every driver: vehicle, since, source, phone and rating set and null',
        request: () => ({ path: '/drivers?limit=500' }),
        shows: (body) => {
          expect(body).toMatchObject({ has_more: false, next_cursor: null });
          for (const field of ['currentVehicle', 'assignedSince', 'assignmentSource', 'phone', 'rating']) {
            expect(new Set(body.data.map((d: any) => d[field] === null)), field).toEqual(new Set([true, false]));
          }
        },
      },
      { status: 200, what: 'drivers whose name or key holds "scene-f"', request: () => ({ path: '/drivers?q=scene-f' }), shows: (body) => expect(body.data.map((d: any) => d.name)).toEqual(['Fay Scene']) },
      { status: 400, what: 'a cursor of another list', request: () => ({ path: `/drivers?cursor=${Buffer.from('webhooks:1').toString('base64url')}` }), shows: errorMatching(/cursor/) },
      { status: 400, what: 'a limit over 500', request: () => ({ path: '/drivers?limit=501' }) },
    ],
  },
  'POST /drivers': {
    permission: 'drivers:write',
    cases: [
      {
        status: 201,
        what: 'a driver with a phone',
        request: () => ({ path: '/drivers', method: 'POST', body: { name: 'New Driver', identifier: '0a1b2c3d4e5f6071', phone: '+52 55 9999 0000' } }),
        shows: (body) => expect(body.data).toMatchObject({ identifier: '0A1B2C3D4E5F6071', currentVehicle: null, rating: null }),
      },
      { status: 400, what: 'an unknown field', request: () => ({ path: '/drivers', method: 'POST', body: { name: 'Odd', identifier: 'ODD-1', rating: 90 } }), shows: errorMatching(/rating/) },
      { status: 409, what: 'a key another driver has', request: () => ({ path: '/drivers', method: 'POST', body: { name: 'Twin', identifier: 'scene-trip-key' } }), shows: errorMatching(/already exists/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/drivers', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/drivers', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /drivers/{id}': {
    permission: 'drivers:read',
    cases: [
      { status: 200, what: 'a driver with a vehicle, history and a rating', request: (s) => ({ path: `/drivers/${s.drivers.assigned}` }), shows: (body) => expect(body.data.assignments[0].until).toBeNull() },
      { status: 200, what: 'a driver with trips and no vehicle', request: (s) => ({ path: `/drivers/${s.drivers.rated}` }), shows: (body) => expect(body.data).toMatchObject({ currentVehicle: null, assignments: [], rating: expect.any(Number) }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/drivers/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/drivers/2147483647' }), shows: errorMatching(/Driver not found/) },
    ],
  },
  'PATCH /drivers/{id}': {
    permission: 'drivers:write',
    cases: [
      { status: 200, what: 'a new phone', request: (s) => ({ path: `/drivers/${s.drivers.free}`, method: 'PATCH', body: { phone: '+52 55 0000 0002' } }), shows: (body) => expect(body.data.phone).toBe('+52 55 0000 0002') },
      { status: 400, what: 'a key over 64 characters', request: (s) => ({ path: `/drivers/${s.drivers.free}`, method: 'PATCH', body: { identifier: 'K'.repeat(65) } }), shows: errorMatching(/identifier/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/drivers/2147483647', method: 'PATCH', body: { name: 'x' } }) },
      { status: 409, what: 'another driver\'s key', request: (s) => ({ path: `/drivers/${s.drivers.free}`, method: 'PATCH', body: { identifier: 'SCENE-TRIP-KEY' } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/drivers/${s.drivers.free}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/drivers/${s.drivers.free}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /drivers/{id}': {
    permission: 'drivers:write',
    cases: [
      { status: 200, what: 'a driver', request: (s) => ({ path: `/drivers/${s.drivers.toDelete}`, method: 'DELETE' }), shows: (body) => expect(body.data.deleted).toBe(true) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/drivers/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/drivers/2147483647', method: 'DELETE' }) },
    ],
  },
  'POST /drivers/{id}/assignment': {
    permission: 'drivers:write',
    cases: [
      {
        status: 200,
        what: 'a free driver to a vehicle, from now',
        request: (s) => ({ path: `/drivers/${s.drivers.free}/assignment`, method: 'POST', body: { vehicleId: s.devices.spare.imei } }),
        shows: (body) => expect(body.data).toMatchObject({ currentVehicle: { name: 'Spare truck' }, assignmentSource: 'manual' }),
      },
      { status: 400, what: 'a since in the future', request: (s) => ({ path: `/drivers/${s.drivers.rated}/assignment`, method: 'POST', body: { vehicleId: s.devices.route.imei, since: '2099-01-01T00:00' } }), shows: errorMatching(/future/) },
      { status: 404, what: 'an unknown vehicle', request: (s) => ({ path: `/drivers/${s.drivers.rated}/assignment`, method: 'POST', body: { vehicleId: '000000000000000' } }), shows: errorMatching(/Vehicle not found/) },
      {
        status: 409,
        what: 'a since before the driver\'s current assignment began',
        request: (s) => ({ path: `/drivers/${s.drivers.assigned}/assignment`, method: 'POST', body: { vehicleId: s.devices.route.imei, since: new Date(Date.now() - 86_400_000).toISOString() } }),
        shows: errorMatching(/history is not rewritten/),
      },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/drivers/${s.drivers.rated}/assignment`, method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/drivers/${s.drivers.rated}/assignment`, method: 'POST', body: 'vehicleId=1', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /drivers/{id}/assignment': {
    permission: 'drivers:write',
    cases: [
      { status: 200, what: 'an assigned driver', request: (s) => ({ path: `/drivers/${s.drivers.toUnassign}/assignment`, method: 'DELETE' }), shows: (body) => expect(body.data.currentVehicle).toBeNull() },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/drivers/abc/assignment', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/drivers/2147483647/assignment', method: 'DELETE' }) },
      { status: 409, what: 'a driver without a vehicle', request: (s) => ({ path: `/drivers/${s.drivers.rated}/assignment`, method: 'DELETE' }), shows: errorMatching(/no current vehicle/) },
    ],
  },
  'GET /events': {
    permission: 'events:read',
    cases: [
      {
        status: 200,
        what: 'the log, newest first, with a cursor to the next page',
        request: () => ({ path: '/events?limit=2' }),
        shows: (body) => {
          expect(body.data.length).toBe(2);
          expect(body.has_more).toBe(true);
          expect(BigInt(body.data[0].id)).toBeGreaterThan(BigInt(body.data[1].id));
        },
      },
      {
        status: 200,
        what: 'geofence events of one vehicle, oldest first, the last page',
        request: (s) => ({ path: `/events?types=vehicle.geofence.*&deviceIds=${s.devices.route.imei}&order=asc&limit=500` }),
        shows: (body) => {
          expect(body.data.map((e: any) => e.type)).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit', 'vehicle.geofence.enter']);
          expect(body).toMatchObject({ has_more: false, next_cursor: null });
        },
      },
      { status: 400, what: 'an unknown type', request: () => ({ path: '/events?types=vehicle.flying' }), shows: errorMatching(/unknown event type/) },
      { status: 404, what: 'an unknown device', request: () => ({ path: '/events?deviceIds=000000000000000' }) },
    ],
  },
  'GET /events/stream': {
    permission: 'events:read',
    cases: [
      { status: 200, what: 'an open stream', request: () => ({ path: '/events/stream' }), shows: (body) => expect(body).toMatch(/^retry: \d+\n: connected/) },
      { status: 400, what: 'a Last-Event-ID that is not an id', request: () => ({ path: '/events/stream', headers: { 'Last-Event-ID': 'yesterday' } }) },
      { status: 404, what: 'an unknown device', request: () => ({ path: '/events/stream?deviceIds=000000000000000' }) },
    ],
  },
  'POST /events/stream-tokens': {
    permission: 'events:read',
    cases: [{ status: 201, what: 'a token', request: () => ({ path: '/events/stream-tokens', method: 'POST' }), shows: (body) => expect(body.data.token).toMatch(/^fst_/) }],
  },
  'POST /webhooks': {
    permission: 'webhooks:write',
    cases: [
      {
        status: 201,
        what: 'a new webhook with its secret',
        // Subscribing needs events:read besides the operation's permission.
        key: (s) => s.webhooks.subscriber,
        request: (s) => ({ path: '/webhooks', method: 'POST', body: { url: s.webhooks.receiver, events: ['vehicle.geofence.enter', 'travel.*'] } }),
        shows: (body) => expect(body.data.secret).toMatch(/^whsec_/),
      },
      { status: 400, what: 'a URL that is not http(s)', key: (s) => s.webhooks.subscriber, request: () => ({ path: '/webhooks', method: 'POST', body: { url: 'ftp://example.com/x', events: ['*'] } }), shows: errorMatching(/https:\/\/ or http:\/\//) },
      { status: 400, what: 'an unknown event type', key: (s) => s.webhooks.subscriber, request: (s) => ({ path: '/webhooks', method: 'POST', body: { url: s.webhooks.receiver, events: ['vehicle.flying'] } }), shows: errorMatching(/unknown event type/) },
      { status: 403, what: 'a key with webhooks:write but not events:read', request: (s) => ({ path: '/webhooks', method: 'POST', body: { url: s.webhooks.receiver, events: ['*'] } }), shows: errorMatching(/lacks the events:read permission/) },
      { status: 409, what: 'a user with WEBHOOKS_PER_USER webhooks already', key: (s) => s.webhooks.full, request: (s) => ({ path: '/webhooks', method: 'POST', body: { url: s.webhooks.receiver, events: ['*'] } }), shows: errorMatching(/at most 20 webhooks/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/webhooks', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/webhooks', method: 'POST', body: 'url=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /webhooks': {
    permission: 'webhooks:read',
    cases: [
      { status: 200, what: 'a page of webhooks, secrets never shown', request: () => ({ path: '/webhooks?limit=1' }), shows: (body) => {
        expect(body.has_more).toBe(true);
        expect(body.data[0]).not.toHaveProperty('secret');
      } },
      { status: 400, what: 'a cursor from elsewhere', request: () => ({ path: '/webhooks?cursor=bm9wZQ' }), shows: errorMatching(/cursor/) },
      { status: 400, what: 'a cursor past the ids a webhook can have', request: () => ({ path: `/webhooks?cursor=${Buffer.from('webhooks:2147483648').toString('base64url')}` }), shows: errorMatching(/cursor/) },
    ],
  },
  'GET /webhooks/{id}': {
    permission: 'webhooks:read',
    cases: [
      { status: 200, what: 'a disabled webhook with its reason', request: (s) => ({ path: `/webhooks/${s.webhooks.disabled}` }), shows: (body) => expect(body.data.disabledReason).toMatch(/410/) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/webhooks/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/webhooks/999999999' }) },
    ],
  },
  'PATCH /webhooks/{id}': {
    permission: 'webhooks:write',
    cases: [
      { status: 200, what: 'new events and description', key: (s) => s.webhooks.subscriber, request: (s) => ({ path: `/webhooks/${s.webhooks.main}`, method: 'PATCH', body: { events: ['vehicle.geofence.*', 'vehicle.panic'], description: null } }), shows: (body) => expect(body.data.description).toBeNull() },
      { status: 403, what: 'new events from a key without events:read', request: (s) => ({ path: `/webhooks/${s.webhooks.main}`, method: 'PATCH', body: { events: ['*'] } }), shows: errorMatching(/lacks the events:read permission/) },
      { status: 400, what: 'enabled that is not a boolean', request: (s) => ({ path: `/webhooks/${s.webhooks.main}`, method: 'PATCH', body: { enabled: 'yes' } }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/webhooks/999999999', method: 'PATCH', body: {} }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/webhooks/${s.webhooks.main}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/webhooks/${s.webhooks.main}`, method: 'PATCH', body: 'enabled=true', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /webhooks/{id}': {
    permission: 'webhooks:write',
    cases: [
      { status: 200, what: 'a webhook', request: (s) => ({ path: `/webhooks/${s.webhooks.toDelete}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/webhooks/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/webhooks/999999999', method: 'DELETE' }) },
    ],
  },
  'POST /webhooks/{id}/rotate-secret': {
    permission: 'webhooks:write',
    cases: [
      { status: 200, what: 'a new secret, the old one signing for 24 h', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/rotate-secret`, method: 'POST' }), shows: (body) => expect(body.data.previousSecretExpiresAt).not.toBeNull() },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/webhooks/abc/rotate-secret', method: 'POST' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/webhooks/999999999/rotate-secret', method: 'POST' }) },
    ],
  },
  'POST /webhooks/{id}/test': {
    permission: 'webhooks:write',
    cases: [
      { status: 202, what: 'a test ping queued', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/test`, method: 'POST' }), shows: (body) => expect(body.data).toMatchObject({ eventType: 'webhook.test', status: 'pending' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/webhooks/abc/test', method: 'POST' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/webhooks/999999999/test', method: 'POST' }) },
      { status: 409, what: 'a disabled webhook', request: (s) => ({ path: `/webhooks/${s.webhooks.disabled}/test`, method: 'POST' }), shows: errorMatching(/disabled/) },
    ],
  },
  'GET /webhooks/{id}/deliveries': {
    permission: 'webhooks:read',
    cases: [
      { status: 200, what: 'deliveries, newest first, a failed one among them', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries?status=failed` }), shows: (body) => expect(body.data[0]).toMatchObject({ status: 'failed', lastStatusCode: 500, nextAttemptAt: null }) },
      { status: 400, what: 'an unknown status', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries?status=lost` }) },
      { status: 404, what: 'an unknown webhook', request: () => ({ path: '/webhooks/999999999/deliveries' }) },
    ],
  },
  'GET /webhooks/{id}/deliveries/{deliveryId}': {
    permission: 'webhooks:read',
    cases: [
      { status: 200, what: 'a delivery with its attempts', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/${s.deliveries.failed}` }), shows: (body) => expect(body.data.attemptLog).toHaveLength(1) },
      { status: 400, what: 'a delivery id that is not a number', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/abc` }) },
      { status: 400, what: 'a delivery id past the bigint range', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/9999999999999999999` }), shows: errorMatching(/out of range/) },
      { status: 404, what: 'an unknown delivery', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/999999999` }) },
    ],
  },
  'POST /webhooks/{id}/deliveries/{deliveryId}/retry': {
    permission: 'webhooks:write',
    cases: [
      { status: 202, what: 'a failed delivery queued again', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/${s.deliveries.failed}/retry`, method: 'POST' }), shows: (body) => expect(body.data.status).toBe('pending') },
      { status: 400, what: 'a delivery id that is not a number', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/abc/retry`, method: 'POST' }) },
      { status: 404, what: 'an unknown delivery', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/999999999/retry`, method: 'POST' }) },
      { status: 409, what: 'a delivery that succeeded', request: (s) => ({ path: `/webhooks/${s.webhooks.main}/deliveries/${s.deliveries.succeeded}/retry`, method: 'POST' }), shows: errorMatching(/already succeeded/) },
    ],
  },
  'POST /commands': {
    permission: 'commands:write',
    cases: [
      {
        status: 202,
        what: 'an engine stop held until the vehicle is known to be slow',
        request: (s) => ({ path: '/commands', method: 'POST', body: { deviceId: s.vehicles.detailed, type: 'engine_stop', idempotencyKey: 'conformance-1' } }),
        // The vehicle's fix is 37.6 km/h and half a minute old when the scene is built: too fast, or by now no longer current.
        shows: (body) => expect(body.data).toMatchObject({
          status: 'queued', reason: expect.stringMatching(/^waiting for (the vehicle to slow down|a current fix from the vehicle)$/), attempts: 0, sentAt: null, error: null,
        }),
      },
      {
        status: 202,
        what: 'the same request again, answered with the first command',
        request: (s) => ({ path: '/commands', method: 'POST', body: { deviceId: s.vehicles.detailed, type: 'engine_stop' }, headers: { 'Idempotency-Key': 'conformance-1' } }),
        shows: (body) => expect(body.data).toMatchObject({ idempotencyKey: 'conformance-1', status: 'queued' }),
      },
      { status: 400, what: 'a type the device\'s protocol cannot express', request: (s) => ({ path: '/commands', method: 'POST', body: { deviceId: s.vehicles.detailed, type: 'take_photo' } }), shows: errorMatching(/teltonika/) },
      { status: 400, what: 'an unknown field', request: (s) => ({ path: '/commands', method: 'POST', body: { deviceId: s.vehicles.detailed, type: 'siren_on', speed: 1 } }) },
      { status: 404, what: 'an unknown device', request: () => ({ path: '/commands', method: 'POST', body: { deviceId: '000000000000000', type: 'engine_stop' } }) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/commands', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/commands', method: 'POST', body: 'type=engine_stop', headers: { 'Content-Type': 'text/plain' } }) },
      {
        status: 422,
        what: 'an idempotency key used for another command',
        request: (s) => ({ path: '/commands', method: 'POST', body: { deviceId: s.vehicles.detailed, type: 'engine_resume', idempotencyKey: 'conformance-1' } }),
        shows: errorMatching(/another command/),
      },
    ],
  },
  'GET /commands': {
    permission: 'commands:read',
    cases: [
      {
        status: 200,
        what: 'commands in every state, newest first',
        request: (s) => ({ path: `/commands?deviceId=${s.vehicles.detailed}&limit=100` }),
        shows: (body) => {
          const byId = new Map(body.data.map((c: any) => [c.id, c]));
          expect(byId.get(body.data[0].id)).toBeDefined();
          expect([...byId.values()].map((c: any) => c.status)).toEqual(expect.arrayContaining(['queued', 'sent', 'acknowledged', 'failed']));
        },
      },
      { status: 400, what: 'an unknown status', request: () => ({ path: '/commands?status=lost' }) },
    ],
  },
  'GET /commands/{id}': {
    permission: 'commands:read',
    cases: [
      {
        status: 200,
        what: 'an acknowledged command with every field',
        request: (s) => ({ path: `/commands/${s.commands.acknowledged}` }),
        shows: (body) => expect(body.data).toMatchObject({ status: 'acknowledged', response: 'DOUT1:1 Timeout:INFINITY', issuedBy: { keyPrefix: expect.any(String), address: '203.0.113.9' } }),
      },
      { status: 200, what: 'a failed command', request: (s) => ({ path: `/commands/${s.commands.failed}` }), shows: (body) => expect(body.data.error).toMatch(/no answer/) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/commands/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/commands/999999999' }) },
    ],
  },
  'DELETE /commands/{id}': {
    permission: 'commands:write',
    cases: [
      { status: 200, what: 'a queued command', request: (s) => ({ path: `/commands/${s.commands.toCancel}`, method: 'DELETE' }), shows: (body) => expect(body.data.status).toBe('cancelled') },
      { status: 400, what: 'an id past the bigint range', request: () => ({ path: '/commands/9999999999999999999', method: 'DELETE' }), shows: errorMatching(/out of range/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/commands/999999999', method: 'DELETE' }) },
      { status: 409, what: 'a command already sent', request: (s) => ({ path: `/commands/${s.commands.sent}`, method: 'DELETE' }), shows: errorMatching(/is sent/) },
    ],
  },
  'GET /media': {
    permission: 'media:read',
    cases: [
      {
        status: 200,
        what: 'a vehicle\'s pictures with every field',
        request: (s) => ({ path: `/media?vehicleId=${s.vehicles.detailed}` }),
        shows: (body) => expect(body.data).toEqual([expect.objectContaining({ contentType: 'image/jpeg', size: 10, commandId: null, url: expect.stringMatching(/^\/api\/v1\/media\/\d+$/) })]),
      },
      { status: 200, what: 'a range with no picture in it', request: (s) => ({ path: `/media?vehicleId=${s.vehicles.detailed}&from=2020-01-01&to=2020-01-31` }), shows: (body) => expect(body.data).toEqual([]) },
      { status: 400, what: 'no vehicleId', request: () => ({ path: '/media' }), shows: errorMatching(/vehicleId is required/) },
      { status: 400, what: 'from without to', request: (s) => ({ path: `/media?vehicleId=${s.vehicles.detailed}&from=2024-05-01` }), shows: errorMatching(/both from and to/) },
      { status: 404, what: 'a vehicle the key cannot see', request: () => ({ path: '/media?vehicleId=000000000000001' }) },
    ],
  },
  'GET /media/{id}': {
    permission: 'media:read',
    cases: [
      {
        status: 200,
        what: 'the picture\'s bytes under a policy that keeps them an image',
        request: (s) => ({ path: `/media/${s.media.id}` }),
        shows: (body) => expect(Buffer.from(body, 'latin1').length).toBeGreaterThan(0),
      },
      { status: 304, what: 'If-None-Match naming its ETag', request: (s) => ({ path: `/media/${s.media.id}`, headers: { 'If-None-Match': `"${s.media.sha256}"` } }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/media/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/media/999999999' }) },
    ],
  },
  'GET /api-keys': {
    permission: 'keys:read',
    cases: [
      { status: 200, what: 'the user\'s keys, never a secret', request: () => ({ path: '/api-keys?limit=100' }), shows: (body) => expect(JSON.stringify(body)).not.toMatch(/key_hash|"key":/) },
      { status: 400, what: 'a cursor of another list', request: () => ({ path: '/api-keys?cursor=garbage' }) },
    ],
  },
  'POST /api-keys': {
    permission: 'keys:write',
    cases: [
      {
        status: 201,
        what: 'a key with a permission the caller holds, its secret shown once',
        request: () => ({ path: '/api-keys', method: 'POST', body: { name: 'minted', permissions: ['keys:write'] } }),
        shows: (body) => expect(body.data).toMatchObject({ name: 'minted', permissions: ['keys:write'], key: expect.stringMatching(/^fc_live_/), revokedAt: null }),
      },
      { status: 400, what: 'an unknown permission', request: () => ({ path: '/api-keys', method: 'POST', body: { permissions: ['vehicles:fly'] } }), shows: errorMatching(/unknown permission/) },
      { status: 403, what: 'a permission the caller lacks', request: () => ({ path: '/api-keys', method: 'POST', body: { permissions: ['vehicles:read'] } }), shows: errorMatching(/cannot grant more/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/api-keys', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/api-keys', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /api-keys/{id}': {
    permission: 'keys:write',
    cases: [
      { status: 200, what: 'a key of the user', request: (s) => ({ path: `/api-keys/${s.credentials.keyToRevoke}`, method: 'DELETE' }), shows: (body) => expect(body.data.revokedAt).toEqual(expect.any(String)) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/api-keys/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/api-keys/999999999', method: 'DELETE' }) },
    ],
  },
  'GET /oauth-clients': {
    permission: 'keys:read',
    cases: [
      { status: 200, what: 'the user\'s clients, never a secret', request: () => ({ path: '/oauth-clients' }), shows: (body) => expect(body.data[0]).toMatchObject({ clientId: expect.stringMatching(/^fcc_/), lastUsedAt: null }) },
      { status: 400, what: 'a limit over 100', request: () => ({ path: '/oauth-clients?limit=101' }) },
    ],
  },
  'POST /oauth-clients': {
    permission: 'keys:write',
    cases: [
      {
        status: 201,
        what: 'a client with a scope the caller holds, its secret shown once',
        request: () => ({ path: '/oauth-clients', method: 'POST', body: { name: 'partner', scopes: ['keys:write'], expiresAt: new Date(Date.now() + 86_400_000).toISOString() } }),
        shows: (body) => expect(body.data).toMatchObject({ name: 'partner', scopes: ['keys:write'], clientSecret: expect.stringMatching(/^fcs_/), expiresAt: expect.any(String) }),
      },
      { status: 400, what: 'an unknown scope', request: () => ({ path: '/oauth-clients', method: 'POST', body: { scopes: ['everything'] } }), shows: errorMatching(/unknown scope/) },
      { status: 403, what: 'a scope the caller lacks', request: () => ({ path: '/oauth-clients', method: 'POST', body: { scopes: ['*'] } }), shows: errorMatching(/cannot grant more/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/oauth-clients', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/oauth-clients', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /oauth-clients/{id}': {
    permission: 'keys:write',
    cases: [
      { status: 200, what: 'a client of the user, and its tokens', request: (s) => ({ path: `/oauth-clients/${s.credentials.clientToRevoke}`, method: 'DELETE' }), shows: (body) => expect(body.data.revokedAt).toEqual(expect.any(String)) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/oauth-clients/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/oauth-clients/999999999', method: 'DELETE' }) },
    ],
  },
  'GET /audit': {
    permission: 'audit:read',
    cases: [
      {
        status: 200,
        what: 'webhook and credential changes with their actors',
        request: () => ({ path: '/audit?limit=500' }),
        shows: (body) => expect(body.data.map((e: any) => e.action)).toEqual(expect.arrayContaining(['webhook.created', 'oauth_client.created'])),
      },
      { status: 400, what: 'an unknown action', request: () => ({ path: '/audit?action=key.lost' }), shows: errorMatching(/unknown/) },
    ],
  },
  'GET /groups': {
    permission: 'users:read',
    cases: [{ status: 200, what: 'the account\'s groups', request: () => ({ path: '/groups' }), shows: (body) => expect(body.data.map((g: any) => g.name)).toEqual(expect.arrayContaining(['North depot'])) }],
  },
  'GET /groups/{id}': {
    permission: 'users:read',
    cases: [
      { status: 200, what: 'a group with a vehicle and a user', request: (s) => ({ path: `/groups/${s.groups.main}` }), shows: (body) => expect(body.data.vehicle_ids).toHaveLength(1) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/groups/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/groups/2147483647' }), shows: errorMatching(/Group not found/) },
    ],
  },
  'POST /groups': {
    permission: 'users:write',
    cases: [
      { status: 201, what: 'a group with a vehicle', request: (s) => ({ path: '/groups', method: 'POST', body: { name: 'South depot', vehicle_ids: [s.vehicles.detailed] } }) },
      { status: 400, what: 'a vehicle of no one', request: () => ({ path: '/groups', method: 'POST', body: { name: 'X', vehicle_ids: ['000000000000000'] } }), shows: errorMatching(/vehicle_ids/) },
      { status: 409, what: 'a name taken', request: () => ({ path: '/groups', method: 'POST', body: { name: 'North depot' } }) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/groups', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/groups', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'PATCH /groups/{id}': {
    permission: 'users:write',
    cases: [
      { status: 200, what: 'a new name', request: (s) => ({ path: `/groups/${s.groups.main}`, method: 'PATCH', body: { name: 'North depot' } }) },
      { status: 400, what: 'an unknown field', request: (s) => ({ path: `/groups/${s.groups.main}`, method: 'PATCH', body: { colour: 'red' } }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/groups/2147483647', method: 'PATCH', body: { name: 'x' } }) },
      { status: 409, what: 'another group\'s name', request: (s) => ({ path: `/groups/${s.groups.toDelete}`, method: 'PATCH', body: { name: 'North depot' } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/groups/${s.groups.main}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/groups/${s.groups.main}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /groups/{id}': {
    permission: 'users:write',
    cases: [
      { status: 200, what: 'a group', request: (s) => ({ path: `/groups/${s.groups.toDelete}`, method: 'DELETE' }), shows: (body) => expect(body.data.deleted).toBe(true) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/groups/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/groups/2147483647', method: 'DELETE' }) },
    ],
  },
  'GET /users/me': {
    cases: [{ status: 200, what: 'the caller\'s own user, by a key with no users:* permission', request: () => ({ path: '/users/me' }), shows: (body) => expect(body.data).toMatchObject({ role: 'owner', groups: [{ id: expect.any(Number), name: expect.any(String) }] }) }],
  },
  'PATCH /users/me': {
    cases: [
      { status: 200, what: 'a new timezone', request: () => ({ path: '/users/me', method: 'PATCH', body: { timezone: 'America/Mexico_City' } }) },
      { status: 400, what: 'a timezone that is not an IANA zone', request: () => ({ path: '/users/me', method: 'PATCH', body: { timezone: 'Mars/Base' } }), shows: errorMatching(/IANA/) },
      { status: 403, what: 'a test-mode key', key: (s) => s.users.testKey, request: () => ({ path: '/users/me', method: 'PATCH', body: { timezone: 'Asia/Tokyo' } }), shows: errorMatching(TEST_MODE_REFUSED) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/users/me', method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/users/me', method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'GET /users': {
    permission: 'users:read',
    cases: [{ status: 200, what: 'the account\'s users', request: () => ({ path: '/users' }), shows: (body) => expect(body.data.length).toBeGreaterThanOrEqual(3) }],
  },
  'GET /users/{id}': {
    permission: 'users:read',
    cases: [
      { status: 200, what: 'a user of the account', request: (s) => ({ path: `/users/${s.users.member}` }), shows: (body) => expect(body.data.role).toBe('viewer') },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/users/abc' }) },
      { status: 404, what: 'another account\'s user', request: (s) => ({ path: `/users/${s.users.loneOwner}` }) },
    ],
  },
  'POST /users': {
    permission: 'users:write',
    cases: [
      { status: 201, what: 'a dispatcher', request: () => ({ path: '/users', method: 'POST', body: { email: `dispatch-${process.pid}-${Date.now()}@example.test`, timezone: 'UTC', role: 'dispatcher' } }) },
      { status: 400, what: 'an email that is not one', request: () => ({ path: '/users', method: 'POST', body: { email: 'nobody', timezone: 'UTC' } }), shows: errorMatching(/email/) },
      { status: 403, what: 'a test-mode key with users:write', key: (s) => s.users.testKey, request: () => ({ path: '/users', method: 'POST', body: { email: `test-mode-${process.pid}@example.test`, timezone: 'UTC' } }), shows: errorMatching(TEST_MODE_REFUSED) },
      { status: 409, what: 'an email taken', request: (s) => ({ path: '/users', method: 'POST', body: { email: s.users.ownerEmail, timezone: 'UTC' } }) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/users', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/users', method: 'POST', body: 'email=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'PATCH /users/{id}': {
    permission: 'users:write',
    cases: [
      { status: 200, what: 'a new role', request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: { role: 'dispatcher', name: 'Ana' } }) },
      { status: 400, what: 'an unknown role', request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: { role: 'king' } }) },
      { status: 403, what: 'a test-mode key with users:write', key: (s) => s.users.testKey, request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: { role: 'admin' } }), shows: errorMatching(TEST_MODE_REFUSED) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/users/2147483647', method: 'PATCH', body: { name: 'x' } }) },
      { status: 409, what: 'another user\'s email', request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: { email: s.users.ownerEmail } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/users/${s.users.member}`, method: 'PATCH', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /users/{id}': {
    permission: 'users:write',
    cases: [
      { status: 200, what: 'a user', request: (s) => ({ path: `/users/${s.users.toRemove}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/users/abc', method: 'DELETE' }) },
      { status: 403, what: 'a test-mode key with users:write', key: (s) => s.users.testKey, request: (s) => ({ path: `/users/${s.users.member}`, method: 'DELETE' }), shows: errorMatching(TEST_MODE_REFUSED) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/users/2147483647', method: 'DELETE' }) },
      { status: 409, what: 'the account\'s last owner', key: (s) => s.users.loneOwnerKey, request: (s) => ({ path: `/users/${s.users.loneOwner}`, method: 'DELETE' }), shows: errorMatching(/last owner/) },
    ],
  },
  'POST /users/{id}/sign-in-link': {
    permission: 'users:write',
    cases: [
      { status: 201, what: 'a user of the account', request: (s) => ({ path: `/users/${s.users.member}/sign-in-link`, method: 'POST' }), shows: (body) => expect(body.data.url).toMatch(/#token=fsi_/) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/users/abc/sign-in-link', method: 'POST' }) },
      { status: 403, what: 'a test-mode key with users:write', key: (s) => s.users.testKey, request: (s) => ({ path: `/users/${s.users.member}/sign-in-link`, method: 'POST' }), shows: errorMatching(/test-mode key or token/) },
      { status: 404, what: 'another account\'s user', request: (s) => ({ path: `/users/${s.users.loneOwner}/sign-in-link`, method: 'POST' }) },
    ],
  },
  'POST /auth/setup': {
    security: [],
    cases: [
      {
        status: 201, what: 'the link\'s token on a server with no account', via: 'first-run', key: () => undefined,
        request: () => ({ path: '/auth/setup', method: 'POST', body: setupBody(firstRun!.token) }), shows: (body) => expect(body.data).toMatchObject({ accountId: expect.any(Number), userId: expect.any(Number) }),
      },
      { status: 400, what: 'no account name', key: () => undefined, request: () => ({ path: '/auth/setup', method: 'POST', body: { ...setupBody('fst_x'), accountName: '' } }) },
      { status: 403, what: 'a page of another site', key: () => undefined, request: () => ({ path: '/auth/setup', method: 'POST', body: setupBody('fst_x'), headers: { Origin: 'https://elsewhere.example' } }), shows: errorMatching(/Cross-origin/) },
      { status: 404, what: 'a server whose setup is not open', key: () => undefined, request: () => ({ path: '/auth/setup', method: 'POST', body: setupBody('fst_x') }), shows: errorMatching(/No setup is open/) },
      { status: 409, what: 'a setup opened again once an account exists', via: 'first-run', key: () => undefined, request: async () => ({ path: '/auth/setup', method: 'POST', body: setupBody(await reopened()) }) },
      { status: 403, what: 'a wrong token', via: 'first-run', key: () => undefined, request: async () => ({ path: '/auth/setup', method: 'POST', body: setupBody(`${await reopened()}x`) }), shows: errorMatching(/not the one the server printed/) },
      { status: 429, what: 'a wrong token past the limit', via: 'first-run', key: () => undefined, request: async () => ({ path: '/auth/setup', method: 'POST', body: setupBody(`${await reopened()}x`) }) },
    ],
  },
  'POST /auth/sign-in': {
    security: [],
    cases: [
      {
        status: 200, what: 'the right password', key: () => undefined, request: () => ({ path: '/auth/sign-in', method: 'POST', body: { email: sessions.email.toUpperCase(), password: sessions.password } }),
        shows: (body) => expect(body.data).toMatchObject({ user: { email: sessions.email }, role: 'owner', csrfToken: expect.any(String), session: { current: true } }),
      },
      { status: 400, what: 'no password', key: () => undefined, request: () => ({ path: '/auth/sign-in', method: 'POST', body: { email: sessions.email } }) },
      { status: 401, what: 'an email of no one', key: () => undefined, request: () => ({ path: '/auth/sign-in', method: 'POST', body: { email: `nobody-${process.pid}@example.test`, password: 'wrong password' } }), shows: errorMatching(/Email or password is wrong/) },
      {
        status: 403, what: 'a page of another site', key: () => undefined,
        request: () => ({ path: '/auth/sign-in', method: 'POST', body: { email: sessions.email, password: sessions.password }, headers: { Origin: 'https://elsewhere.example' } }), shows: errorMatching(/Cross-origin/),
      },
      { status: 429, what: 'an email with too many failed sign-ins', key: () => undefined, request: () => ({ path: '/auth/sign-in', method: 'POST', body: { email: sessions.lockedEmail, password: 'wrong password' } }) },
    ],
  },
  'POST /auth/set-password': {
    security: [],
    cases: [
      { status: 200, what: 'a one-time token', key: () => undefined, request: () => ({ path: '/auth/set-password', method: 'POST', body: { token: sessions.setPasswordToken, password: 'a new password 2' } }) },
      { status: 400, what: 'a token of no link', key: () => undefined, request: () => ({ path: '/auth/set-password', method: 'POST', body: { token: 'fsi_unknown', password: 'a new password 2' } }), shows: errorMatching(/unknown, already used or expired/) },
      {
        status: 403, what: 'a page of another site', key: () => undefined,
        request: () => ({ path: '/auth/set-password', method: 'POST', body: { token: 'fsi_unknown', password: 'a new password 2' }, headers: { 'Sec-Fetch-Site': 'cross-site' } }), shows: errorMatching(/Cross-site/),
      },
    ],
  },
  'GET /auth/session': {
    security: [{ sessionCookie: [] }],
    cases: [
      { status: 200, what: 'a session', session: true, request: () => ({ path: '/auth/session' }), shows: (body) => expect(body.data).toMatchObject({ user: { email: sessions.email }, csrfToken: expect.any(String) }) },
      { status: 400, what: 'an API key', request: () => ({ path: '/auth/session' }), shows: notASession },
    ],
  },
  'GET /auth/sessions': {
    security: [{ sessionCookie: [] }],
    cases: [
      { status: 200, what: 'this session and others', session: true, request: () => ({ path: '/auth/sessions' }), shows: (body) => expect(body.data.filter((x: any) => x.current)).toHaveLength(1) },
      { status: 400, what: 'an API key', request: () => ({ path: '/auth/sessions' }), shows: notASession },
    ],
  },
  'DELETE /auth/sessions/{id}': {
    security: [{ sessionCookie: [] }],
    cases: [
      { status: 204, what: 'another session of the user', session: true, request: () => ({ path: `/auth/sessions/${sessions.spare}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a UUID', session: true, request: () => ({ path: '/auth/sessions/abc', method: 'DELETE' }) },
      { status: 400, what: 'an API key', request: () => ({ path: `/auth/sessions/${NO_SESSION}`, method: 'DELETE' }), shows: notASession },
      { status: 403, what: 'no CSRF token', session: 'without-csrf', request: () => ({ path: `/auth/sessions/${NO_SESSION}`, method: 'DELETE' }), shows: errorMatching(/CSRF token missing/) },
      { status: 404, what: 'a session of no one', session: true, request: () => ({ path: `/auth/sessions/${NO_SESSION}`, method: 'DELETE' }) },
    ],
  },
  'POST /auth/sign-out': {
    security: [{ sessionCookie: [] }],
    cases: [
      { status: 204, what: 'a session', session: true, request: () => ({ path: '/auth/sign-out', method: 'POST' }) },
      { status: 400, what: 'an API key', request: () => ({ path: '/auth/sign-out', method: 'POST' }), shows: notASession },
      { status: 403, what: 'a CSRF token of another session', session: true, request: () => ({ path: '/auth/sign-out', method: 'POST', headers: { 'X-CSRF-Token': 'not-this-sessions-token' } }), shows: errorMatching(/does not match/) },
    ],
  },
  'POST /auth/sign-out-everywhere': {
    security: [{ sessionCookie: [] }],
    cases: [
      { status: 200, what: 'a session', session: true, request: () => ({ path: '/auth/sign-out-everywhere', method: 'POST' }), shows: (body) => expect(body.data.ended).toBeGreaterThanOrEqual(1) },
      { status: 400, what: 'an API key', request: () => ({ path: '/auth/sign-out-everywhere', method: 'POST' }), shows: notASession },
      { status: 403, what: 'no CSRF token', session: 'without-csrf', request: () => ({ path: '/auth/sign-out-everywhere', method: 'POST' }), shows: errorMatching(/CSRF token missing/) },
    ],
  },
  'POST /auth/password': {
    security: [{ sessionCookie: [] }],
    cases: [
      // The same password again: the cases after this one still sign in with it.
      { status: 200, what: 'the current password and a new one', session: true, request: () => ({ path: '/auth/password', method: 'POST', body: { currentPassword: sessions.password, newPassword: sessions.password } }) },
      { status: 400, what: 'a wrong current password', session: true, request: () => ({ path: '/auth/password', method: 'POST', body: { currentPassword: 'not the password', newPassword: 'another password 3' } }), shows: errorMatching(/current password is wrong/) },
      { status: 400, what: 'an API key', request: () => ({ path: '/auth/password', method: 'POST', body: { currentPassword: 'x', newPassword: 'another password 3' } }), shows: notASession },
      { status: 403, what: 'no CSRF token', session: 'without-csrf', request: () => ({ path: '/auth/password', method: 'POST', body: { currentPassword: sessions.password, newPassword: sessions.password } }), shows: errorMatching(/CSRF token missing/) },
    ],
  },
  'DELETE /travels/{id}': {
    permission: 'travels:write',
    cases: [
      { status: 200, what: 'a scheduled travel', request: (s) => ({ path: `/travels/${s.travels.toCancel}`, method: 'DELETE' }) },
      { status: 400, what: 'a travel already cancelled', request: (s) => ({ path: `/travels/${s.travels.cancelled}`, method: 'DELETE' }), shows: errorMatching(/cannot be cancelled/) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/travels/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/travels/999999999', method: 'DELETE' }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/travels/${s.travels.scheduled}`, method: 'DELETE', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
    ],
  },
  'GET /notification-rules': {
    permission: 'notifications:read',
    cases: [
      { status: 200, what: 'a page of the account\'s rules', request: () => ({ path: '/notification-rules?limit=1' }), shows: (body) => expect(body).toMatchObject({ data: [{ name: 'Depot arrivals', vehicles: { scope: 'groups' } }], has_more: true }) },
      { status: 400, what: 'a cursor of another list', request: () => ({ path: `/notification-rules?cursor=${Buffer.from('webhooks:1').toString('base64url')}` }), shows: errorMatching(/cursor/) },
    ],
  },
  'GET /notification-rules/{id}': {
    permission: 'notifications:read',
    cases: [
      { status: 200, what: 'a rule with a schedule, geofences and recipients', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}` }), shows: (body) => expect(body.data.recipients[0]).toMatchObject({ userId: expect.any(Number), channels: ['email', 'push'] }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/notification-rules/abc' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/notification-rules/999999999' }) },
    ],
  },
  'POST /notification-rules': {
    permission: 'notifications:write',
    cases: [
      {
        status: 201, what: 'a rule for listed vehicles at a geofence',
        request: (s) => ({ path: '/notification-rules', method: 'POST', body: { name: 'Panics', events: ['vehicle.panic', 'vehicle.geofence.*'], vehicles: { scope: 'list', vehicleIds: [s.vehicles.detailed] }, geofenceIds: [s.geofences.warehouse], minIntervalSeconds: 300, recipients: [{ userId: s.notifications.userId, channels: ['email'] }] } }),
        shows: (body) => expect(body.data).toMatchObject({ vehicles: { scope: 'list' }, schedule: null, timezone: 'America/Mexico_City' }),
      },
      { status: 400, what: 'vehicle.position', request: (s) => ({ path: '/notification-rules', method: 'POST', body: { name: 'x', events: ['vehicle.position'], vehicles: { scope: 'all' }, recipients: [{ userId: s.notifications.userId, channels: ['email'] }] } }), shows: errorMatching(/cannot be notified/) },
      { status: 409, what: 'an account with 200 rules', key: (s) => s.notifications.rulesFullKey, request: (s) => ({ path: '/notification-rules', method: 'POST', body: { name: 'x', events: ['vehicle.panic'], vehicles: { scope: 'all' }, recipients: [{ userId: s.notifications.rulesFullUser, channels: ['email'] }] } }), shows: errorMatching(/at most 200/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/notification-rules', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/notification-rules', method: 'POST', body: 'name=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'PATCH /notification-rules/{id}': {
    permission: 'notifications:write',
    cases: [
      { status: 200, what: 'a new interval', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}`, method: 'PATCH', body: { minIntervalSeconds: 600 } }), shows: (body) => expect(body.data.minIntervalSeconds).toBe(600) },
      { status: 400, what: 'an unknown geofence', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}`, method: 'PATCH', body: { geofenceIds: [999999999] } }), shows: errorMatching(/^geofenceIds: no live geofence 999999999/) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/notification-rules/999999999', method: 'PATCH', body: {} }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}`, method: 'PATCH', body: 'enabled=false', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /notification-rules/{id}': {
    permission: 'notifications:write',
    cases: [
      { status: 204, what: 'a rule', request: (s) => ({ path: `/notification-rules/${s.notifications.ruleToDelete}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/notification-rules/abc', method: 'DELETE' }) },
      { status: 404, what: 'an unknown id', request: () => ({ path: '/notification-rules/999999999', method: 'DELETE' }) },
    ],
  },
  'GET /notification-rules/{id}/deliveries': {
    permission: 'notifications:read',
    cases: [
      { status: 200, what: 'a pending and a sent delivery, newest first', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}/deliveries` }), shows: (body) => expect(body.data.map((d: any) => d.status)).toEqual(['pending', 'succeeded']) },
      { status: 400, what: 'a limit over 100', request: (s) => ({ path: `/notification-rules/${s.notifications.rule}/deliveries?limit=101` }) },
      { status: 404, what: 'an unknown rule', request: () => ({ path: '/notification-rules/999999999/deliveries' }) },
    ],
  },
  'GET /users/me/notification-channels': {
    cases: [{ status: 200, what: 'the caller\'s own addresses and browsers, by a key with no notifications permission', request: () => ({ path: '/users/me/notification-channels' }), shows: (body) => expect(body.data).toMatchObject({ phone: '+5215512345678', available: { email: false } }) }],
  },
  'PATCH /users/me/notification-channels': {
    cases: [
      { status: 200, what: 'an own email and no phone', request: () => ({ path: '/users/me/notification-channels', method: 'PATCH', body: { email: 'alerts@example.com', phone: null } }), shows: (body) => expect(body.data).toMatchObject({ effectiveEmail: 'alerts@example.com', phone: null }) },
      { status: 400, what: 'a phone that is not E.164', request: () => ({ path: '/users/me/notification-channels', method: 'PATCH', body: { phone: '5512345678' } }), shows: errorMatching(/E\.164/) },
      { status: 403, what: 'a test-mode key', key: (s) => s.users.testKey, request: () => ({ path: '/users/me/notification-channels', method: 'PATCH', body: { muted: true } }), shows: errorMatching(/test-mode key or token cannot change them/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/users/me/notification-channels', method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/users/me/notification-channels', method: 'PATCH', body: 'muted=true', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'POST /users/me/push-subscriptions': {
    cases: [
      { status: 201, what: 'a browser\'s subscription', request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: PUSH_SUBSCRIPTION }), shows: (body) => expect(body.data.id).toEqual(expect.any(Number)) },
      { status: 400, what: 'an http:// endpoint', request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: { ...PUSH_SUBSCRIPTION, endpoint: 'http://push.example.com/x' } }), shows: errorMatching(/https/) },
      { status: 403, what: 'a test-mode key', key: (s) => s.users.testKey, request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: PUSH_SUBSCRIPTION }), shows: errorMatching(/test-mode/) },
      { status: 409, what: 'a user with 20 browsers', key: (s) => s.notifications.pushFullKey, request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: { ...PUSH_SUBSCRIPTION, endpoint: 'https://push.example.com/conformance/21' } }), shows: errorMatching(/at most 20 browsers/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/users/me/push-subscriptions', method: 'POST', body: 'endpoint=x', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /users/me/push-subscriptions/{id}': {
    cases: [
      { status: 204, what: 'one of the caller\'s browsers', request: (s) => ({ path: `/users/me/push-subscriptions/${s.notifications.pushToDelete}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/users/me/push-subscriptions/abc', method: 'DELETE' }) },
      { status: 403, what: 'a test-mode key', key: (s) => s.users.testKey, request: () => ({ path: '/users/me/push-subscriptions/999999999', method: 'DELETE' }), shows: errorMatching(/test-mode/) },
      { status: 404, what: 'another user\'s browser', key: (s) => s.notifications.pushFullKey, request: (s) => ({ path: `/users/me/push-subscriptions/${s.notifications.pushToDelete - 1}`, method: 'DELETE' }) },
    ],
  },
  'GET /users/me/report-subscriptions': {
    cases: [{ status: 200, what: 'the caller\'s own report emails, one sent before', request: () => ({ path: '/users/me/report-subscriptions' }), shows: (body) => expect(body.data[0].lastRunAt).not.toBeNull() }],
  },
  'POST /users/me/report-subscriptions': {
    permission: 'reports:read',
    cases: [
      { status: 201, what: 'a weekly report email', request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: { frequency: 'weekly', reports: ['trips', 'geofences'], time: '07:00', weekday: 1 } }), shows: (body) => expect(body.data).toMatchObject({ weekday: 1, lastRunAt: null }) },
      { status: 400, what: 'a weekly one without weekday', request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: { frequency: 'weekly', reports: ['trips'], time: '07:00' } }), shows: errorMatching(/weekday is needed/) },
      { status: 403, what: 'the maintenance report without maintenance:read', request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: { frequency: 'daily', reports: ['maintenance'], time: '07:00' } }), shows: errorMatching(/maintenance:read/) },
      { status: 409, what: 'a user with 10', key: (s) => s.notifications.reportsFullKey, request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: { frequency: 'daily', reports: ['trips'], time: '07:00' } }), shows: errorMatching(/at most 10/) },
      { status: 413, what: 'a body over the limit', request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: () => ({ path: '/users/me/report-subscriptions', method: 'POST', body: 'time=07:00', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'PATCH /users/me/report-subscriptions/{id}': {
    permission: 'reports:read',
    cases: [
      { status: 200, what: 'a new time', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: { time: '06:30' } }), shows: (body) => expect(body.data.nextRunAt.local).toMatch(/ 06:30$/) },
      { status: 400, what: 'a time that is not HH:mm', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: { time: '6:30' } }) },
      { status: 403, what: 'the maintenance report without maintenance:read', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: { reports: ['maintenance'] } }), shows: errorMatching(/maintenance:read/) },
      { status: 404, what: 'another user\'s', key: (s) => s.notifications.reportsFullKey, request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: { enabled: false } }) },
      { status: 413, what: 'a body over the limit', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: oversized(TEST_CONFIG.bodyLimitBytes) }) },
      { status: 415, what: 'a body that is not JSON', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'PATCH', body: 'enabled=false', headers: { 'Content-Type': 'text/plain' } }) },
    ],
  },
  'DELETE /users/me/report-subscriptions/{id}': {
    cases: [
      { status: 204, what: 'one of the caller\'s report emails', request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.reportToDelete}`, method: 'DELETE' }) },
      { status: 400, what: 'an id that is not a number', request: () => ({ path: '/users/me/report-subscriptions/abc', method: 'DELETE' }) },
      { status: 404, what: 'another user\'s', key: (s) => s.notifications.reportsFullKey, request: (s) => ({ path: `/users/me/report-subscriptions/${s.notifications.report}`, method: 'DELETE' }) },
    ],
  },
};

/** Answers every authenticated operation shares, sent as the operation's sample request. */
const SHARED_CASES: Array<Omit<Case, 'request'> & { headers?: Record<string, string> }> = [
  { status: 401, what: 'no API key', key: () => undefined },
  { status: 401, what: 'an Authorization header that is not Bearer', key: () => undefined, headers: { Authorization: 'Basic Zm9vOmJhcg==' } },
  { status: 401, what: 'a well-formed key never stored', key: () => issueApiKey('live').key },
  { status: 401, what: 'an expired key', key: (s) => s.expired, shows: errorMatching(/expired/) },
  { status: 403, what: 'a key with every permission but this one', key: (s, permission) => s.allBut[permission!], shows: errorMatching(/lacks/) },
  { status: 429, what: 'a key whose rate limit is used up', via: 'rate-limited', shows: errorMatching(/Rate limit/) },
  { status: 500, what: 'the database unreachable', via: 'database-down', shows: errorMatching(/Internal server error/) },
];

/**
 * Documented statuses no request here can produce, each with the reason. Keep it short: a status
 * that can be produced belongs in the cases above.
 */
const NOT_REPRODUCIBLE: Record<string, string> = {};

function casesOf(id: string): Case[] {
  const { cases, security } = OPERATIONS[id]!;
  // A public operation (sign-in) takes no credential to get wrong.
  if (security?.length === 0) return cases;
  const sample = cases.find((c) => c.status >= 200 && c.status < 300)!.request;
  // An operation open to any valid credential (its own user's) has no permission to lack.
  const applicable = OPERATIONS[id]!.permission ? SHARED_CASES : SHARED_CASES.filter((c) => c.status !== 403);
  const shared = applicable.map(({ headers, ...shared }): Case => ({
    ...shared,
    request: async (s) => {
      const request = await sample(s);
      return { ...request, headers: { ...request.headers, ...headers } };
    },
  }));
  return [...cases, ...shared];
}

const TABLE = Object.keys(OPERATIONS).flatMap((id) => casesOf(id).map((c) => ({ id, name: `${id} → ${c.status} for ${c.what}`, case: c })));

let t: TestApp;
let scene: ConformanceScene;
let doc: OpenApiDocument;
let responses: ReturnType<typeof openApiResponseValidator>;
let rateLimited: { app: App; limiter: ReturnType<typeof createMemoryRateLimiter> };
let databaseDown: { app: App; db: Kysely<Database> };
/** Statuses each operation really answered, whatever the case expected. */
const answered = new Map<string, Set<number>>();

beforeAll(async () => {
  t = await startTestApp();
  const served = await t.call('/api/v1/openapi.json');
  expect(served.status).toBe(200);
  doc = (await served.json()) as OpenApiDocument;
  responses = openApiResponseValidator(doc);
  scene = await buildConformanceScene(t);
  await buildSessionScene();
  const empty = await openTestDatabase();
  const firstRunApp = createApp({
    db: empty.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG, authFailureLimiter: createMemoryRateLimiter(1, 60_000),
  });
  firstRun = { database: empty, http: await serveOverHttp(firstRunApp), token: await issueSetupToken(empty.db) };

  const config = TEST_CONFIG;
  // Both on the same database as the main app, so the scene's keys authenticate there too.
  const limiter = createMemoryRateLimiter(1, 60_000);
  rateLimited = { app: createApp({ db: t.database.db, log: silentLogger, rateLimiter: limiter, config }), limiter };
  // A socket directory that does not exist: every query fails at once, as when the server is down.
  const pool = new pg.Pool({ host: '/nonexistent/fleetcore-database-down', max: 1, connectionTimeoutMillis: 1000 });
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  databaseDown = { app: createApp({ db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config }), db };
});

/** The scene's user gets a password and a spare session; another user a one-time link; one email is locked out. */
async function buildSessionScene(): Promise<void> {
  const db = t.database.db;
  sessions.email = scene.users.ownerEmail;
  const owner = await db.selectFrom('users').select('id').where('email', '=', sessions.email).executeTakeFirstOrThrow();
  await setPasswordHash(db, owner.id, await hashPassword(sessions.password));
  sessions.spare = (await signIn()).id;
  sessions.setPasswordToken = `fsi_conformance_${randomUUID()}`;
  await insertSignInToken(db, hashApiKey(sessions.setPasswordToken), scene.users.member, new Date(Date.now() + 3_600_000));
  for (let i = 0; i < 6; i++) {
    await t.app.request('/api/v1/auth/sign-in', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: sessions.lockedEmail, password: 'wrong password' }),
    });
  }
}

afterAll(async () => {
  await firstRun?.http.close();
  await firstRun?.database.destroy();
  await rateLimited?.limiter.close();
  await databaseDown?.db.destroy();
  await t?.close();
});

async function send(id: string, c: Case) {
  const { permission } = OPERATIONS[id]!;
  const request = await c.request(scene);
  // With no permission needed, a key holding one unrelated permission.
  const key = c.session ? undefined : c.key ? c.key(scene, permission) : scene.only[permission ?? 'devices:read'];
  const headers: Record<string, string> = { ...request.headers };
  if (c.session) {
    const session = await signIn();
    headers.Cookie = session.cookie;
    if ((request.method ?? 'GET') !== 'GET' && c.session !== 'without-csrf') headers['X-CSRF-Token'] ??= session.csrf;
  }
  if (key && !headers.Authorization) headers.Authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    headers['Content-Type'] ??= 'application/json';
  }
  let app: App = t.app;
  if (c.via === 'rate-limited') {
    app = rateLimited.app;
    await rateLimited.limiter.hit(hashApiKey(key!));
  } else if (c.via === 'database-down') {
    app = databaseDown.app;
  }
  const init = { method: request.method ?? 'GET', headers, body };
  const res = c.via === 'first-run' ? await fetch(`${firstRun!.http.url}/api/v1${request.path}`, init) : await app.request(`/api/v1${request.path}`, init);
  const contentType = res.headers.get('Content-Type');
  const text = /^text\/event-stream/.test(contentType ?? '') ? await streamOpening(res) : await res.text();
  return { status: res.status, contentType, text, body: text === '' ? undefined : /json/i.test(contentType ?? '') ? JSON.parse(text) : text };
}

/** A new session of the scene's user: its cookie, CSRF token and id. */
async function signIn(): Promise<{ cookie: string; csrf: string; id: string }> {
  const res = await t.app.request('/api/v1/auth/sign-in', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: sessions.email, password: sessions.password }),
  });
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { cookie: res.headers.get('Set-Cookie')!.split(';')[0]!, csrf: body.data.csrfToken, id: body.data.session.id };
}

/** A stream never ends: its first chunk (the opening comment) stands for the answer. */
async function streamOpening(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return new TextDecoder().decode(value);
}

describe('the served OpenAPI document', () => {
  // The validator refuses Ajv's strict mode on its own meta-schemas, and its 3.1 schema leaves Schema
  // Objects unchecked: the next test compiles every one of them in strict mode.
  it('is valid OpenAPI 3.1 for @seriousme/openapi-schema-validator, references included', async () => {
    const validator = new Validator({ allErrors: true });
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds only schemas Ajv accepts as JSON Schema 2020-12 in strict mode', () => {
    expect(responses.schemaProblems()).toEqual([]);
  });

  it('declares no nullable field that no null can satisfy', () => {
    expect(nullableIntersections(doc)).toEqual([]);
  });

  it('names in each operation\'s security the permission its key needs (the one its cases below prove)', () => {
    const stated = Object.fromEntries(
      documentedOperations(doc).map((o) => [o.id, (doc.paths![o.path]![o.method] as { security?: unknown }).security]),
    );
    const expected = Object.fromEntries(
      Object.entries(OPERATIONS).map(([id, { permission, security }]) => [
        id, security ?? (permission ? [{ bearerAuth: [permission] }, { apiKeyHeader: [permission] }, { oauth2: [permission] }] : undefined),
      ]),
    );
    expect(stated).toEqual(expected);
  });

  it('is checked by a validator that refuses what breaks it', () => {
    const travel = { travelId: 1, vehicle: 'v', status: 'Scheduled', timezone: 'UTC', progress: 0, totalWaypoints: 0, completedWaypoints: 0, startTime: { local: 'a', utc: 'b' }, waypoints: [] };
    const answer = { method: 'GET', path: '/travels/{id}', status: 200, contentType: 'application/json', body: { success: true, data: travel, error: null, timestamp: new Date().toISOString() } };
    expect(responses.problems(answer)).toEqual([]);
    expect(responses.problems({ ...answer, body: { ...answer.body, data: { ...travel, startTime: null } } })).not.toEqual([]);
    expect(responses.problems({ ...answer, body: { ...answer.body, timestamp: 'yesterday' } })).not.toEqual([]);
    expect(responses.problems({ ...answer, status: 418 })[0]).toMatch(/does not list/);
    expect(responses.problems({ ...answer, contentType: 'text/plain' })[0]).toMatch(/answered text\/plain/);
    expect(responses.problems({ ...answer, path: '/nowhere' })[0]).toMatch(/not in the document/);
  });
});

describe('every answer conforms to the document', () => {
  for (const { id, name, case: c } of TABLE) {
    it(name, async () => {
      const operation = documentedOperations(doc).find((o) => o.id === id);
      expect(operation, `${id} has cases but is not in the document`).toBeDefined();
      const answer = await send(id, c);
      if (!answered.has(id)) answered.set(id, new Set());
      answered.get(id)!.add(answer.status);
      expect(answer.status, answer.text.slice(0, 500)).toBe(c.status);
      expect(responses.problems({ method: operation!.method, path: operation!.path, ...answer })).toEqual([]);
      c.shows?.(answer.body);
    });
  }

  it('covers every documented operation with a success and every documented status', () => {
    const gaps: string[] = [];
    const operations = documentedOperations(doc);
    const seen = (id: string, status: string) =>
      [...(answered.get(id) ?? [])].some((code) => String(code) === status || `${String(code)[0]}XX` === status || status === 'default');
    for (const operation of operations) {
      if (!OPERATIONS[operation.id]) {
        gaps.push(`${operation.id}: no cases; add it to OPERATIONS in this file`);
        continue;
      }
      if (![...(answered.get(operation.id) ?? [])].some((code) => code >= 200 && code < 300)) gaps.push(`${operation.id}: no success answered`);
      for (const status of operation.statuses) {
        const reason = NOT_REPRODUCIBLE[`${operation.id} ${status}`];
        if (seen(operation.id, status) && reason) gaps.push(`${operation.id} ${status}: listed as not reproducible, yet a case produced it`);
        if (!seen(operation.id, status) && !reason) gaps.push(`${operation.id} ${status}: documented, but no case produced it`);
      }
    }
    for (const entry of Object.keys(NOT_REPRODUCIBLE)) {
      const [method, path, status] = entry.split(' ');
      if (!operations.find((o) => o.id === `${method} ${path}`)?.statuses.includes(status!)) gaps.push(`${entry}: listed as not reproducible but not documented`);
    }
    expect(gaps).toEqual([]);
  });
});
