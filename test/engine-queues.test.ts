import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { queueIndexOf } from '../engine/engine-queues.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { engineOutput, seedMixedFleet } from './support/mixed-fleet.ts';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.ts';
import { driveThrough } from './support/scripted-tracker.ts';

// `fleet serve` with ENGINE_QUEUES=3 over one Redis: three trackers, one per engine queue (device id
// mod 3), drive through a depot; each gets its geofence enter and exit, the signals went to every
// queue, and the metrics report each queue. Then the queue count changes under a split deployment
// (ingest still on 3 queues, the engine on 2): the signals ingest leaves in the queue nobody works
// any more are caught up from the cursors, and every device still gets its events, in order. Last,
// a mixed fleet's stored fixes evaluated by two engine processes over 3 queues give exactly what one
// process over one queue gives.

const SKIPPED = !process.env.DATABASE_URL || !process.env.REDIS_URL ? ' (skipped: set DATABASE_URL and REDIS_URL)' : '';

const DEPOT = { lat: 19.4, lng: -99.1 };
const IMEIS = ['356307042449911', '356307042449912', '356307042449913'];

let fresh: FreshDatabase;
let setup: DatabaseHandle;
let key: string;
let devices: Array<{ id: number; imei: string }>;
let trackerPort: number;
const running: Serving[] = [];

beforeAll(async () => {
  if (SKIPPED) return;
  fresh = await freshDatabase();
  setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
  const make = fixtures(setup.db);
  const tenant = await make.tenant();
  key = tenant.key;
  devices = [];
  for (const imei of IMEIS) devices.push({ id: (await make.device(tenant.account.id, { imei, userIds: [tenant.user.id], protocol: 'teltonika' })).id, imei });
  await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
  trackerPort = await freePort();
}, 60_000);

afterAll(async () => {
  await stopAll();
  await setup?.close();
  await fresh?.destroy();
});

async function stopAll(): Promise<void> {
  for (const s of running) s.process.kill('SIGTERM');
  await Promise.all(running.map((s) => s.exited));
  running.length = 0;
}

async function start(env: Record<string, string>, ready: RegExp, args: string[] = []): Promise<Serving> {
  const server = await serve({ ...fresh.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort), ...env }, ready, args);
  running.push(server);
  return server;
}

/** Each tracker drives west to east through the depot: one enter and one exit each. */
async function driveThroughDepot(): Promise<void> {
  for (const device of devices) {
    await driveThrough(trackerPort, device.imei, DEPOT);
  }
}

/** Each device's geofence events, oldest first. */
async function geofenceEvents(): Promise<Record<number, string[]>> {
  const rows = await setup.db.selectFrom('events').select(['device_id', 'type']).where('type', 'like', 'vehicle.geofence.%').orderBy('occurred_at').orderBy('id').execute();
  const byDevice: Record<number, string[]> = Object.fromEntries(devices.map((d) => [d.id, []]));
  for (const row of rows) byDevice[row.device_id!]!.push(row.type);
  return byDevice;
}

function expectEachDevice(types: string[]): (events: Record<number, string[]>) => void {
  return (events) => expect(events).toEqual(Object.fromEntries(devices.map((d) => [d.id, types])));
}

/** How many jobs were ever added to a queue: BullMQ numbers them with the counter `<prefix>:<queue>:id`. */
async function jobsAdded(queue: string): Promise<number> {
  const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  try {
    return Number((await redis.get(`fleetcore-${fresh.name}:${queue}:id`)) ?? 0);
  } finally {
    redis.disconnect();
  }
}

describe.skipIf(SKIPPED !== '')(`the engine over several queues (ENGINE_QUEUES)${SKIPPED}`, () => {
  it('turns each device\'s fixes into its events, with the signals spread over every queue', async () => {
    // One device per queue: ids made one after another cover every remainder.
    expect(devices.map((d) => queueIndexOf(d.id, 3)).sort()).toEqual([0, 1, 2]);
    const server = await start({ ENGINE_QUEUES: '3' }, /trackers on teltonika/);
    await driveThroughDepot();
    await eventually(geofenceEvents, expectEachDevice(['vehicle.geofence.enter', 'vehicle.geofence.exit']), 20_000);

    // Only device signals go to the queues after the first: their jobs were added by ingest.
    expect(await jobsAdded('fleetcore-engine-1')).toBeGreaterThan(0);
    expect(await jobsAdded('fleetcore-engine-2')).toBeGreaterThan(0);
    expect(await jobsAdded('fleetcore-engine-3')).toBe(0);

    const metrics = parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text());
    for (const queue of ['fleetcore-engine', 'fleetcore-engine-1', 'fleetcore-engine-2', 'fleetcore-webhooks']) {
      expect(sampleValue(metrics, 'fleetcore_queue_up', { queue }), queue).toBe(1);
      expect(sampleValue(metrics, 'fleetcore_queue_jobs', { queue, state: 'waiting' }), queue).toBeGreaterThanOrEqual(0);
    }
    expect(sampleValue(metrics, 'fleetcore_queue_up', { queue: 'fleetcore-engine-3' })).toBeUndefined();
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await stopAll();
  }, 120_000);

  it('stays right when the count changes: signals left in a queue no engine works are caught up from the cursors', async () => {
    const stranded = devices.find((d) => queueIndexOf(d.id, 3) === 2)!;
    const before = await jobsAdded('fleetcore-engine-2');
    // Ingest signals 3 queues; the engine works only 2, and its catch-up runs every second.
    await start({ ENGINE_QUEUES: '2', ETA_REFRESH_S: '1' }, /running engine/, ['--roles', 'engine']);
    await start({ ENGINE_QUEUES: '3' }, /trackers on teltonika/, ['--roles', 'ingest']);
    await driveThroughDepot();
    await eventually(
      geofenceEvents,
      expectEachDevice(['vehicle.geofence.enter', 'vehicle.geofence.exit', 'vehicle.geofence.enter', 'vehicle.geofence.exit']),
      30_000,
    );
    // The stranded device's signal did go to the third queue, which no engine works now.
    expect(await jobsAdded('fleetcore-engine-2')).toBeGreaterThan(before);
    const cursor = await setup.db.selectFrom('device_engine_states').select('cursor_fix_time').where('device_id', '=', stranded.id).executeTakeFirstOrThrow();
    const latest = await setup.db.selectFrom('device_states').select('fix_time').where('device_id', '=', stranded.id).executeTakeFirstOrThrow();
    expect(cursor.cursor_fix_time).toEqual(latest.fix_time);
  }, 120_000);

  it('stores exactly the events and visits of one queue when two engine processes work three', async () => {
    const DEVICES = 40;
    const databases: FreshDatabase[] = [await freshDatabase(), await freshDatabase()];
    const handles: DatabaseHandle[] = [];
    try {
      const seeded = [];
      for (const d of databases) {
        const handle = await openDatabase({ databaseUrl: d.env.DATABASE_URL, dataDir: '', embedded: 'own' });
        handles.push(handle);
        const fleet = await seedMixedFleet(handle, 4242, DEVICES, 150);
        for (let i = 0; i < fleet.fixes.length; i += 1000) await fleet.write(fleet.fixes.slice(i, i + 1000));
        seeded.push(fleet);
      }
      const engine = (d: FreshDatabase, queues: string) =>
        serve({ ...d.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', ENGINE_QUEUES: queues, ENGINE_CONCURRENCY: '3', LOG_LEVEL: 'warn' }, /running engine/, ['--roles', 'engine']);
      running.push(await engine(databases[0]!, '1'), ...(await Promise.all([engine(databases[1]!, '3'), engine(databases[1]!, '3')])));
      const caughtUp = async (database: DatabaseHandle) => (await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM device_states s JOIN device_engine_states e ON e.device_id = s.device_id
        WHERE e.cursor_fix_time = s.fix_time`.execute(database.db)).rows[0]!.n;
      await eventually(async () => Promise.all(handles.map(caughtUp)), (n) => expect(n).toEqual([DEVICES, DEVICES]), 60_000);
      const one = await engineOutput(handles[0]!, seeded[0]!.accountId);
      const three = await engineOutput(handles[1]!, seeded[1]!.accountId);
      expect(one.events.length).toBeGreaterThan(100);
      expect(three).toEqual(one);
    } finally {
      await stopAll();
      for (const h of handles) await h.close();
      for (const d of databases) await d.destroy();
    }
  }, 180_000);
});
