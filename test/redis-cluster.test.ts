import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { RedisClusterProcess, redisClusterSuiteSkipped } from './faults/redis-cluster-process.ts';
import { openEventStream } from './support/event-stream.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, stopServing, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { driveThrough, scriptedTracker } from './support/scripted-tracker.ts';

// `fleet serve` on a Redis Cluster of this file's own (3 masters, each with a replica), named by
// REDIS_CLUSTER_NODES: a Teltonika tracker's fixes are stored, reach an event stream through the
// cluster's pub/sub, and the engine (its BullMQ queue under a hash tag) turns them into geofence
// events. Then the master holding the engine queue stops: its replica takes over, and the engine
// goes on producing events without a restart.

const SKIPPED = redisClusterSuiteSkipped();

const IMEI = '356307042449901';
const DEPOT = { lat: 19.4, lng: -99.1 };

let cluster: RedisClusterProcess;
let fresh: FreshDatabase;
let setup: DatabaseHandle;
let server: Serving | undefined;
let key: string;
let deviceId: number;
let trackerPort: number;

beforeAll(async () => {
  if (SKIPPED) return;
  cluster = new RedisClusterProcess(3, 1);
  await cluster.start();
  fresh = await freshDatabase();
  setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
  const make = fixtures(setup.db);
  const tenant = await make.tenant();
  key = tenant.key;
  deviceId = (await make.device(tenant.account.id, { imei: IMEI, name: 'Cluster Van', userIds: [tenant.user.id], protocol: 'teltonika' })).id;
  await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
  trackerPort = await freePort();
}, 120_000);

afterAll(async () => {
  await stopServing(server);
  await setup?.close();
  await fresh?.destroy();
  await cluster?.stop();
});

async function geofenceEvents(): Promise<string[]> {
  const response = await fetch(`${server!.url}/api/v1/events?types=vehicle.geofence.*&order=asc`, { headers: { Authorization: `Bearer ${key}` } });
  return ((await response.json()) as { data: Array<{ type: string }> }).data.map((e) => e.type);
}

async function storedPositions(): Promise<number> {
  const row = await setup.db.selectFrom('positions').select((e) => e.fn.countAll<number>().as('n')).where('device_id', '=', deviceId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The cluster's master that serves `key`'s slot, as a node of this suite's cluster. */
async function masterOf(key: string) {
  const any = new Redis(cluster.nodes[0]!.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const slot = Number(await any.cluster('KEYSLOT', key));
    const ranges = await any.cluster('SLOTS');
    const port = ranges.find(([from, to]) => slot >= from && slot <= to)![2]![1];
    return cluster.nodes.find((n) => n.port === port)!;
  } finally {
    any.disconnect();
  }
}

describe.skipIf(SKIPPED !== '')(`fleet serve on a Redis Cluster (REDIS_CLUSTER_NODES)${SKIPPED}`, () => {
  it('stores a tracker\'s fixes, streams them, and the engine turns them into events', async () => {
    server = await serve(
      { ...fresh.env, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort) },
      /trackers on teltonika/,
    );
    const positions: string[] = [];
    const source = await openEventStream(server.url, key, 'vehicle.position');
    source.addEventListener('vehicle.position', (m) => positions.push(JSON.parse(m.data as string).id));
    await driveThrough(trackerPort, IMEI, DEPOT);
    expect(await storedPositions()).toBe(3);
    await eventually(geofenceEvents, (types) => expect(types).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit']), 20_000);
    await eventually(async () => positions.length, (n) => expect(n).toBe(3), 10_000);
    source.close();

    // The engine queue's keys carry a hash tag of their own, on one master.
    const engineQueue = `{fleetcore-${fresh.name}:fleetcore-engine}`;
    const master = await masterOf(engineQueue);
    const client = new Redis(master.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      expect((await client.scan('0', 'MATCH', `${engineQueue}:*`, 'COUNT', 10_000))[1].length).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
  }, 180_000);

  it('goes on producing events once the engine queue\'s master stops and its replica takes over', async () => {
    expect(server, 'the first test started the server').toBeDefined();
    const master = await masterOf(`{fleetcore-${fresh.name}:fleetcore-engine}`);
    await master.stop();
    await cluster.waitUntilOk(30_000, [master]);
    const tracker = await scriptedTracker(trackerPort, IMEI);
    try {
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng });
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02 });
    } finally {
      tracker.close();
    }
    expect(await storedPositions()).toBe(5);
    await eventually(
      geofenceEvents,
      (types) => expect(types).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit', 'vehicle.geofence.enter', 'vehicle.geofence.exit']),
      60_000,
    );
    expect(server!.process.exitCode).toBeNull();
  }, 180_000);
});
