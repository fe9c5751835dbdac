import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedisCluster } from '../cli/redis-connection.ts';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { RedisClusterProcess, redisClusterSuiteSkipped } from './faults/redis-cluster-process.ts';
import { openEventStream } from './support/event-stream.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, stopServing, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { driveThrough } from './support/scripted-tracker.ts';
import { startupRefusal } from './support/startup-refusal.ts';

// A Redis Cluster whose nodes require a password (requirepass and masterauth), as operators run one:
// REDIS_PASSWORD reaches every connection fleet makes to it (the queues and their workers, command
// routing, the position feed's publish and subscribe), and a start without it is refused in one line.

const SKIPPED = redisClusterSuiteSkipped();

const PASSWORD = 'fleet cluster p@ss';
const IMEI = '356307042449902';
const DEPOT = { lat: 19.4, lng: -99.1 };

let cluster: RedisClusterProcess;
let fresh: FreshDatabase;
let setup: DatabaseHandle;
let server: Serving | undefined;

beforeAll(async () => {
  if (SKIPPED) return;
  cluster = new RedisClusterProcess(3, 0, [], PASSWORD);
  await cluster.start();
  fresh = await freshDatabase();
  setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
}, 120_000);

afterAll(async () => {
  await stopServing(server);
  await setup?.close();
  await fresh?.destroy();
  await cluster?.stop();
});

describe.skipIf(SKIPPED !== '')(`a Redis Cluster with a password (REDIS_PASSWORD)${SKIPPED}`, () => {
  it('refuses to start without the password, or with a wrong one, in one line that does not show it', async () => {
    const named = `REDIS_CLUSTER_NODES ${cluster.nodesVariable}`;
    expect(await startupRefusal(connectRedisCluster({ ...cluster.settings, password: undefined }))).toBe(`${named} requires a password (NOAUTH): set REDIS_PASSWORD`);
    const wrong = await startupRefusal(connectRedisCluster({ ...cluster.settings, password: 'not it' }));
    expect(wrong).toBe(`${named} refused REDIS_PASSWORD (WRONGPASS): it is not the nodes' password`);
    expect(wrong).not.toContain('not it');
  });

  it('carries every connection: fixes stored, streamed and turned into events', async () => {
    const make = fixtures(setup.db);
    const tenant = await make.tenant();
    const device = await make.device(tenant.account.id, { imei: IMEI, name: 'Locked Van', userIds: [tenant.user.id], protocol: 'teltonika' });
    await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
    const trackerPort = await freePort();
    server = await serve(
      { ...fresh.env, REDIS_URL: '', REDIS_CLUSTER_NODES: cluster.nodesVariable, REDIS_PASSWORD: PASSWORD, ENGINE_QUEUES: '3', PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort) },
      /trackers on teltonika/,
    );
    const headers = { Authorization: `Bearer ${tenant.key}` };
    // The stream's positions come through the cluster's pub/sub, on connections of their own.
    const positions: string[] = [];
    const source = await openEventStream(server.url, tenant.key, 'vehicle.position');
    source.addEventListener('vehicle.position', (m) => positions.push(JSON.parse(m.data as string).id));

    await driveThrough(trackerPort, IMEI, DEPOT);
    await eventually(
      async () => {
        const response = await fetch(`${server!.url}/api/v1/events?types=vehicle.geofence.*&order=asc&vehicleId=${device.id}`, { headers });
        return ((await response.json()) as { data: Array<{ type: string }> }).data.map((e) => e.type);
      },
      (types) => expect(types).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit']),
      20_000,
    );
    await eventually(async () => positions.length, (n) => expect(n).toBe(3), 10_000);
    source.close();
    expect(server.output()).not.toMatch(/NOAUTH|WRONGPASS/);
  }, 120_000);
});
