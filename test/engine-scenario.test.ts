import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLocal } from '../domain/time/zoned-time.ts';
import { ENGINE_QUEUE, scheduleTravelStart, unscheduleTravelStart } from '../engine/engine-jobs.ts';
import { ENGINE_TEST_SETTINGS, startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';
import { eventually } from './support/eventually.ts';

// One vehicle over TCP through geofences A → B → C with a travel over them; everything asserted through
// the REST API, as a client polling it would see it. The engine runs with its real queue (BullMQ when
// REDIS_URL is set) and a 1 s ETA refresh and inactivity sweep; a device is Inactive after 6 s of silence.

const TZ = 'America/Mexico_City';
const IMEI = '356307042449001';
const LAT = 19.4;
// Circles of 300 m on one street, 2 km apart.
const A = { lat: LAT, lng: -99.1 };
const B = { lat: LAT, lng: -99.08 };
const C = { lat: LAT, lng: -99.06 };

let database: TestDatabase;
let harness: EngineHarness;
let key: string;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database, { ...ENGINE_TEST_SETTINGS, status: { inactiveAfterMinutes: 0.1, movingSpeedKmh: 5 } });
  const make = fixtures(database.db);
  const tenant = await make.tenant(TZ);
  key = tenant.key;
  await make.device(tenant.account.id, { imei: IMEI, name: 'Van 1', plates: 'VAN-001', userIds: [tenant.user.id] });
  for (const [name, at] of [['A', A], ['B', B], ['C', C]] as const) {
    await make.geofence(tenant.account.id, name, { kind: 'circle', lat: at.lat, lng: at.lng, radiusMeters: 300 });
  }
});
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Polls until `check` passes (the engine works asynchronously), failing with the last error. */
const minuteOf = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000);
const travel = (id: number) => api(`/travels/${id}`).then((r) => r.body.data);
const vehicleStatus = () => api(`/devices/${IMEI}/status`).then((r) => r.body.data);

describe('a vehicle through A → B → C with a travel', () => {
  it('moves the travel, the report and the status as the vehicle drives', async () => {
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    // Parked west of A, engine on.
    await tracker.report({ latitude: LAT, longitude: -99.13, speedKmh: 0 });
    await eventually(vehicleStatus, (s) => expect(s.status).toBe('Stopped'));

    // Scheduled for the next minute; expected at A on time, at B and C later.
    const now = new Date();
    const start = new Date(minuteOf(now).getTime() + 60_000);
    const at = (minutes: number) => formatLocal(new Date(start.getTime() + minutes * 60_000), TZ);
    const created = await api('/travels', {
      method: 'POST',
      body: { vehicle: 'Van 1', startTime: at(0), waypoints: [{ geofence: 'A', expectedArrival: at(0) }, { geofence: 'B', expectedArrival: at(30) }, { geofence: 'C', expectedArrival: at(30) }] },
    });
    expect(created.status).toBe(200);
    const id = created.body.data.travelId as number;
    expect(created.body.data).toMatchObject({ status: 'Scheduled', progress: 0, completedWaypoints: 0, totalWaypoints: 4 });

    // Rather than wait for the minute, the start is moved to now, as an edit of the travel would.
    const startedAt = new Date();
    await database.db.updateTable('travels').set({ start_time: startedAt }).where('id', '=', id).execute();
    const queue = harness.queues.queue(ENGINE_QUEUE);
    await unscheduleTravelStart(queue, id);
    await scheduleTravelStart(queue, id, startedAt);
    const started = await eventually(() => travel(id), (t) => expect(t.status).toBe('In progress'));
    expect(started).toMatchObject({ progress: 25, completedWaypoints: 1 });
    expect(started.waypoints[0]).toMatchObject({ order: 1, geofence: 'Current position', status: 'Completed' });

    // Driving toward A at 50 km/h: live ETAs for every pending waypoint, in order, a few minutes out.
    await tracker.report({ latitude: LAT, longitude: -99.12, speedKmh: 50 });
    const driving = await eventually(() => travel(id), (t) => expect(t.waypoints[1].estimatedArrival).not.toBeNull());
    const etas = driving.waypoints.slice(1).map((w: any) => Date.parse(w.estimatedArrival.utc.replace(/(\d+)\/(\d+)\/(\d+) /, '$3-$2-$1T') + 'Z'));
    expect(etas[0]).toBeGreaterThanOrEqual(minuteOf(new Date()).getTime());
    expect(etas[0]).toBeLessThan(Date.now() + 10 * 60_000); // ~2 km × 1.3 at 50 km/h ≈ 3 min
    expect(etas[1]).toBeGreaterThan(etas[0]);
    expect(driving.waypoints[1].timing).toMatch(/On time|min early|min late \(est\.\)/);
    expect((await vehicleStatus()).status).toBe('Moving');

    // Into A: waypoint 2 completes at the fix time of the enter.
    const inA = await tracker.report({ latitude: A.lat, longitude: A.lng, speedKmh: 30 });
    const afterA = await eventually(() => travel(id), (t) => expect(t.completedWaypoints).toBe(2));
    expect(afterA.progress).toBe(50);
    expect(afterA.waypoints[1]).toMatchObject({ status: 'Completed', arrivedAt: { local: formatLocal(inA, TZ) }, estimatedArrival: null });
    // Expected at the scheduled start (the next minute): arrival minus expected, within the tolerance.
    expect(afterA.waypoints[1]).toMatchObject({ delayMinutes: Math.round((inA.getTime() - start.getTime()) / 60_000) || 0, timing: 'On time' });

    // Out of A and straight into C, past B's geofence to the north: C does not complete before B.
    await tracker.report({ latitude: LAT + 0.02, longitude: -99.08, speedKmh: 50 });
    await tracker.report({ latitude: C.lat, longitude: C.lng, speedKmh: 30 });
    await tracker.report({ latitude: LAT + 0.02, longitude: -99.07, speedKmh: 50 });
    const skipped = await eventually(() => travel(id), (t) => expect(t.waypoints[3].estimatedArrival).not.toBeNull());
    expect(skipped).toMatchObject({ status: 'In progress', completedWaypoints: 2 });
    expect(skipped.waypoints[3].status).toBe('Pending');

    // B, then C again: both complete in order, the travel is Completed.
    const inB = await tracker.report({ latitude: B.lat, longitude: B.lng, speedKmh: 30 });
    await tracker.report({ latitude: LAT, longitude: -99.07, speedKmh: 50 });
    const inC = await tracker.report({ latitude: C.lat, longitude: C.lng + 0.001, speedKmh: 20 });
    const done = await eventually(() => travel(id), (t) => expect(t.status).toBe('Completed'));
    expect(done).toMatchObject({ progress: 100, completedWaypoints: 4 });
    expect(done.waypoints.map((w: any) => [w.geofence, w.status, w.arrivedAt?.local])).toEqual([
      ['Current position', 'Completed', formatLocal(startedAt, TZ)],
      ['A', 'Completed', formatLocal(inA, TZ)],
      ['B', 'Completed', formatLocal(inB, TZ)],
      ['C', 'Completed', formatLocal(inC, TZ)],
    ]);
    // B and C were expected 30 minutes after the scheduled start: reached minutes after it, they are early.
    for (const [w, arrived] of [[done.waypoints[2], inB], [done.waypoints[3], inC]] as const) {
      expect(w.delayMinutes).toBe(Math.round((arrived.getTime() - (start.getTime() + 30 * 60_000)) / 60_000));
      expect(w.timing).toBe(`${-w.delayMinutes} min early`);
    }
    expect((await api('/travels')).body.data.find((t: any) => t.travelId === id)).toBeUndefined(); // only active ones

    // The geofence report: enter and exit events with their times, visits with durations, the summary.
    const day = formatLocal(now, TZ).slice(0, 10).split('/').reverse().join('-');
    const report = (await api(`/reports/geofences?from=${day}&to=${day}&deviceIds=${IMEI}`)).body.data;
    expect(report.events.map((e: any) => [e.geofenceName, e.eventType])).toEqual([
      ['A', 'Entrada'], ['A', 'Salida'], ['C', 'Entrada'], ['C', 'Salida'], ['B', 'Entrada'], ['B', 'Salida'], ['C', 'Entrada'],
    ]);
    expect(report.visits.map((v: any) => [v.geofenceName, v.exitTime === null])).toEqual([
      ['A', false], ['C', false], ['B', false], ['C', true],
    ]);
    const crossed = Object.fromEntries(report.summary.map((s: any) => [s.geofenceName, s.timesCrossed]));
    expect(crossed).toEqual({ A: 2, B: 2, C: 3 });

    // The status follows the vehicle: Moving → Stopped (engine on, standing) → Off → Inactive when silent.
    await tracker.report({ latitude: C.lat, longitude: C.lng, speedKmh: 0, ignition: true });
    await eventually(vehicleStatus, (s) => expect(s.status).toBe('Stopped'));
    await tracker.report({ latitude: C.lat, longitude: C.lng, speedKmh: 0, ignition: false });
    await eventually(vehicleStatus, (s) => expect(s).toMatchObject({ status: 'Off', engineStatus: 'Off' }));
    tracker.close();
    await eventually(vehicleStatus, (s) => expect(s.status).toBe('Inactive'), 20_000);

    // The engine's own record of the status changes, for the event stream, ends with the sweep's Inactive.
    const changes = await eventually(
      () => sql<{ to: string }>`SELECT data->>'to' AS to FROM events WHERE type = 'vehicle.status.changed' ORDER BY id`.execute(database.db),
      ({ rows }) => expect(rows.at(-1)?.to).toBe('Inactive'),
    );
    expect(changes.rows.map((r) => r.to)).toEqual(['Stopped', 'Moving', 'Stopped', 'Off', 'Inactive']);
    const enterEvents = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE type = 'vehicle.geofence.enter'`.execute(database.db);
    expect(enterEvents.rows[0]!.n).toBe(4);
  }, 90_000);
});
