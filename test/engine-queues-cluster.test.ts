import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { adminPool, databaseUrlFor } from '../db/postgres-admin.ts';
import { engineQueueName, queueIndexOf } from '../engine/engine-queues.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { RedisClusterProcess, redisClusterSuiteSkipped } from './faults/redis-cluster-process.ts';
import { eventually } from './support/eventually.ts';
import { freePort, serve, stopServing, type Serving } from './support/fleet-process.ts';
import { driveThrough } from './support/scripted-tracker.ts';

// `fleet serve` with ENGINE_QUEUES=3 on a Redis Cluster of this file's own (3 masters): three
// trackers, one per engine queue, drive through a depot and each gets its geofence events, while
// each queue's keys sit under its own hash tag on the master of its slot, so the engine's work is
// spread over the masters.

const SKIPPED = redisClusterSuiteSkipped();

const QUEUES = 3;
const DEPOT = { lat: 19.4, lng: -99.1 };
const IMEIS = ['356307042449921', '356307042449922', '356307042449923'];

let cluster: RedisClusterProcess;
let databaseName: string;
let databaseUrl: string;
let setup: DatabaseHandle;
let server: Serving | undefined;
let devices: Array<{ id: number; imei: string }>;
let trackerPort: number;

/** The hash tag of engine queue `index`'s keys for the database `name` (bullmqQueues' prefixOf). */
const hashTag = (name: string, index: number) => `{fleetcore-${name}:${engineQueueName(index)}}`;

/** The port of the master serving `key`'s slot. */
async function masterPortOf(client: Redis, key: string): Promise<number> {
  const slot = Number(await client.cluster('KEYSLOT', key));
  const ranges = await client.cluster('SLOTS');
  return Number(ranges.find(([from, to]) => slot >= from && slot <= to)![2]![1]);
}

beforeAll(async () => {
  if (SKIPPED) return;
  cluster = new RedisClusterProcess(3, 0);
  await cluster.start();
  // Where a queue's slot lands follows from the deployment's name (the database's): three queues over
  // three masters may share one. The name is chosen so that they don't, to see each master take a queue.
  const any = new Redis(cluster.nodes[0]!.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    for (let attempt = 0; !databaseName; attempt++) {
      if (attempt === 200) throw new Error('no database name put the three engine queues on three masters');
      const name = `fleetcore_eq_${process.pid}_${randomBytes(4).toString('hex')}`;
      const masters = new Set<number>();
      for (let i = 0; i < QUEUES; i++) masters.add(await masterPortOf(any, hashTag(name, i)));
      if (masters.size === QUEUES) databaseName = name;
    }
  } finally {
    any.disconnect();
  }
  const admin = adminPool(process.env.DATABASE_URL!);
  try {
    await admin.query(`CREATE DATABASE ${databaseName} TEMPLATE ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  databaseUrl = databaseUrlFor(process.env.DATABASE_URL!, databaseName);
  setup = await openDatabase({ databaseUrl, dataDir: '', embedded: 'own' });
  const make = fixtures(setup.db);
  const tenant = await make.tenant();
  devices = [];
  for (const imei of IMEIS) devices.push({ id: (await make.device(tenant.account.id, { imei, userIds: [tenant.user.id], protocol: 'teltonika' })).id, imei });
  await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
  trackerPort = await freePort();
}, 120_000);

afterAll(async () => {
  await stopServing(server);
  await setup?.close();
  if (databaseName) {
    const admin = adminPool(process.env.DATABASE_URL!);
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).finally(() => admin.end());
  }
  await cluster?.stop();
});

async function geofenceEvents(): Promise<Record<number, string[]>> {
  const rows = await setup.db.selectFrom('events').select(['device_id', 'type']).where('type', 'like', 'vehicle.geofence.%').orderBy('occurred_at').orderBy('id').execute();
  const byDevice: Record<number, string[]> = Object.fromEntries(devices.map((d) => [d.id, []]));
  for (const row of rows) byDevice[row.device_id!]!.push(row.type);
  return byDevice;
}

/** The keys under `tag` on the master at `port`, and the number of jobs ever added to the queue (its id counter). */
async function queueOnMaster(port: number, tag: string, queue: string): Promise<{ keys: number; jobsAdded: number }> {
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const keys = (await client.scan('0', 'MATCH', `${tag}:*`, 'COUNT', 10_000))[1].length;
    return { keys, jobsAdded: Number((await client.get(`${tag}:${queue}:id`)) ?? 0) };
  } finally {
    client.disconnect();
  }
}

describe.skipIf(SKIPPED !== '')(`the engine over several queues on a Redis Cluster${SKIPPED}`, () => {
  it('turns each device\'s fixes into its events, each queue on a master of its own', async () => {
    expect(devices.map((d) => queueIndexOf(d.id, QUEUES)).sort()).toEqual([0, 1, 2]);
    server = await serve(
      { DATABASE_URL: databaseUrl, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, ENGINE_QUEUES: String(QUEUES), PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort) },
      /trackers on teltonika/,
    );
    for (const device of devices) {
      await driveThrough(trackerPort, device.imei, DEPOT);
    }
    await eventually(
      geofenceEvents,
      (events) => expect(events).toEqual(Object.fromEntries(devices.map((d) => [d.id, ['vehicle.geofence.enter', 'vehicle.geofence.exit']]))),
      20_000,
    );

    const any = new Redis(cluster.nodes[0]!.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    const masters = new Set<number>();
    try {
      for (let i = 0; i < QUEUES; i++) {
        const tag = hashTag(databaseName, i);
        const port = await masterPortOf(any, tag);
        masters.add(port);
        const held = await queueOnMaster(port, tag, engineQueueName(i));
        expect(held.keys, `${engineQueueName(i)} on the master at ${port}`).toBeGreaterThan(0);
        expect(held.jobsAdded, `jobs added to ${engineQueueName(i)}`).toBeGreaterThan(0);
      }
    } finally {
      any.disconnect();
    }
    expect(masters.size).toBe(QUEUES);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  }, 180_000);
});
