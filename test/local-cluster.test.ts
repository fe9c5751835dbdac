import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { clusterLayout, type ClusterLayout } from '../deploy/local-cluster/cluster-layout.ts';
import { fleetNodePid, fleetNodes, killFleetNode, type FleetNode } from '../deploy/local-cluster/fleet-nodes.ts';
import { haproxyServers } from '../deploy/local-cluster/haproxy.ts';
import { down, missingPrograms, status, takenPorts, up } from '../deploy/local-cluster/local-cluster.ts';
import { postgresUrl } from '../deploy/local-cluster/postgres-pair.ts';
import { commandTracker, type CommandTracker } from '../simulators/command-tracker.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { eventually } from './support/eventually.ts';
import { servedApi } from './support/served-api.ts';

// The local cluster (npm run local-cluster), brought up by the same code as the command: a Teltonika
// tracker on 127.0.0.2 reports through HAProxy's tracker port to one of two ingest nodes, which is then
// killed; the tracker comes back through HAProxy to the other one, resends what was not acknowledged,
// and receives a command posted through HAProxy to the API; an API node is killed and the API still
// answers. It brings its own PostgreSQL, so it runs in the PostgreSQL pass of CI only (DATABASE_URL set).

const missing = missingPrograms();
const SKIPPED = !process.env.DATABASE_URL
  ? ' (skipped: runs only where DATABASE_URL is set, in the PostgreSQL pass of the suite; it starts its own PostgreSQL)'
  : missing.length > 0
    ? ` (skipped: needs ${missing.join('; ')})`
    : '';

const IMEI = '356307042441777';
const DEPOT = { lat: 19.4, lng: -99.1 };
/** The tracker's own address: HAProxy connects to the ingest nodes from 127.0.0.1. */
const TRACKER_ADDRESS = '127.0.0.2';

// PgBouncer in session pooling, as `up` has it by default; LOCAL_CLUSTER_POOL_MODE=transaction runs it in transaction pooling.
const poolMode = process.env.LOCAL_CLUSTER_POOL_MODE === 'transaction' ? 'transaction' : 'session';
const dir = mkdtempSync(join(tmpdir(), 'fleet-local-cluster-'));
let layout: ClusterLayout = clusterLayout(21000, dir, poolMode);

/** The first port base, from one picked by this process's id, whose ports are all free: below Linux's ephemeral range (32768 and up). */
async function freeLayout(): Promise<ClusterLayout> {
  for (let i = 0; i < 22; i++) {
    const candidate = clusterLayout(21000 + ((process.pid + i) % 22) * 500, dir, poolMode);
    if ((await takenPorts(candidate)).length === 0) return candidate;
  }
  throw new Error('no port base from 21000 to 31500 has all its ports free');
}
const node = (name: string): FleetNode => fleetNodes().find((n) => n.name === name)!;

let setup: DatabaseHandle;
let key: string;
let deviceId: number;
const trackers: CommandTracker[] = [];
const api = servedApi(() => `http://127.0.0.1:${layout.apiPort}`, () => key);

beforeAll(async () => {
  if (SKIPPED) return;
  layout = await freeLayout();
  await up(layout, { fleetEnv: { GEOCODER: 'off', LOG_LEVEL: 'info' } });
  setup = await openDatabase({ databaseUrl: postgresUrl(layout.postgresPrimaryPort), dataDir: '', embedded: 'own' });
  const make = fixtures(setup.db);
  const tenant = await make.tenant();
  key = (await make.key(tenant.user.id, { permissions: ['*', 'commands:write'] })).key;
  deviceId = (await make.device(tenant.account.id, { imei: IMEI, name: 'Cluster Van', userIds: [tenant.user.id], protocol: 'teltonika' })).id;
  await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
}, 180_000);

afterAll(async () => {
  for (const t of trackers) t.close();
  await setup?.close();
  if (!SKIPPED) await down(layout, { purge: true });
}, 120_000);

async function tracker(): Promise<CommandTracker> {
  const teltonikaPort = layout.trackers.find((t) => t.protocol === 'teltonika')!.public;
  const t = await commandTracker(teltonikaPort, IMEI, teltonikaDialect, { localAddress: TRACKER_ADDRESS });
  trackers.push(t);
  return t;
}

/** Fix times stored for the device, read on the primary. */
async function storedTimes(): Promise<number[]> {
  const rows = await setup.db.selectFrom('positions').select('fix_time').where('device_id', '=', deviceId).orderBy('fix_time').execute();
  return rows.map((r) => new Date(r.fix_time as unknown as string).getTime());
}

/** The ingest node HAProxy gave the tracker's connection to (the one holding a Teltonika session). */
async function ingestHoldingTheTracker(): Promise<string[]> {
  const servers = await haproxyServers(layout);
  return servers.filter((s) => s.backend === 'ingest-teltonika' && s.sessions > 0).map((s) => s.server);
}

// Fixes ten minutes back, a second apart: the same run never reports a time twice.
const T0 = Date.now() - 10 * 60_000;
const at = (i: number) => new Date(T0 + i * 1000);

describe.skipIf(SKIPPED !== '')(`the local cluster (PgBouncer in ${poolMode} pooling)${SKIPPED}`, () => {
  it('is up: every part running, and up again starts nothing new', async () => {
    expect(status(layout).filter((p) => !p.running)).toEqual([]);
    const pids = fleetNodes().map((n) => fleetNodePid(layout, n));
    await up(layout, { fleetEnv: { GEOCODER: 'off' } });
    expect(fleetNodes().map((n) => fleetNodePid(layout, n))).toEqual(pids);
  }, 60_000);

  it('puts every node\'s DATABASE_URL through PgBouncer, in the pool mode asked for', async () => {
    // PgBouncer's admin console (the `pgbouncer` database; postgres is an admin user).
    const admin = new pg.Client({ connectionString: postgresUrl(layout.pgbouncerPort, 'pgbouncer') });
    await admin.connect();
    try {
      const config = (await admin.query('SHOW CONFIG')).rows as Array<{ key: string; value: string }>;
      expect(config.find((c) => c.key === 'pool_mode')?.value).toBe(poolMode);
      // Clients of the fleet database from at least as many processes as there are nodes.
      const clients = (await admin.query('SHOW CLIENTS')).rows as Array<{ database: string; addr: string; port: number }>;
      expect(clients.filter((c) => c.database === 'fleet').length).toBeGreaterThanOrEqual(fleetNodes().length);
    } finally {
      await admin.end();
    }
  });

  it('stores a tracker\'s fixes through HAProxy with the tracker\'s own address, and the engine makes geofence events the API serves through HAProxy', async () => {
    const t = await tracker();
    await t.report({ time: at(0), latitude: DEPOT.lat, longitude: DEPOT.lng - 0.02, speedKmh: 40 });
    await t.report({ time: at(1), latitude: DEPOT.lat, longitude: DEPOT.lng, speedKmh: 40 });
    await t.report({ time: at(2), latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02, speedKmh: 40 });
    expect(await storedTimes()).toEqual([0, 1, 2].map((i) => at(i).getTime()));

    // The PROXY protocol: the address stored is the tracker's, not HAProxy's 127.0.0.1.
    const connection = await setup.db.selectFrom('device_connections').select('remote_address').where('device_id', '=', deviceId).executeTakeFirst();
    expect(connection?.remote_address).toBe(TRACKER_ADDRESS);

    const geofenceEvents = async () => (await api('/events?types=vehicle.geofence.*&order=asc')).body.data.map((e: { type: string }) => e.type);
    await eventually(geofenceEvents, (types) => expect(types).toEqual(['vehicle.geofence.enter', 'vehicle.geofence.exit']), 30_000);

    // Round robin: a few requests reach both API nodes.
    for (let i = 0; i < 4; i++) expect((await api(`/devices/${IMEI}/status`)).status).toBe(200);
    const apiServers = (await haproxyServers(layout)).filter((s) => s.backend === 'api');
    expect(apiServers.map((s) => [s.server, s.total > 0])).toEqual([['api-1', true], ['api-2', true]]);
  }, 60_000);

  it('loses nothing acknowledged when the ingest node holding the tracker is killed: the tracker reconnects to the other through HAProxy and resends the rest, and a command reaches it there', async () => {
    const first = trackers[0]!;
    const [holding, ...others] = await ingestHoldingTheTracker();
    expect(others).toEqual([]);
    expect(holding).toMatch(/^ingest-[12]$/);
    const survivor = holding === 'ingest-1' ? 'ingest-2' : 'ingest-1';

    // Fixes 3…7 in flight, then SIGKILL in the same tick as fix 7 is written: it cannot have been acknowledged.
    const acknowledged: number[] = [];
    const unacknowledged: number[] = [];
    const sends = [3, 4, 5, 6, 7].map(async (i, n) => {
      await new Promise((r) => setTimeout(r, n * 30));
      const report = first.report({ time: at(i), latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02, speedKmh: 40 });
      if (i === 7) process.kill(fleetNodePid(layout, node(holding!))!, 'SIGKILL');
      await report.then(() => acknowledged.push(i), () => unacknowledged.push(i));
    });
    await Promise.all(sends);
    await killFleetNode(layout, node(holding!)); // reaped, pid file removed
    expect(unacknowledged).toContain(7);
    expect(first.closed).toBe(true);
    // Every acknowledged fix was committed before its acknowledgement.
    expect(await storedTimes()).toEqual(expect.arrayContaining([0, 1, 2, ...acknowledged].map((i) => at(i).getTime())));

    // The tracker reconnects through the same public port: HAProxy sends it to the node that is left.
    const second = await tracker();
    expect(await ingestHoldingTheTracker()).toEqual([survivor]);
    for (const i of unacknowledged.sort((a, b) => a - b)) {
      await second.report({ time: at(i), latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02, speedKmh: 40 });
    }
    await second.report({ time: at(8), latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02, speedKmh: 0 });
    expect(await storedTimes()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => at(i).getTime()));

    // A command posted through HAProxy to an API node reaches the tracker on its new connection.
    const posted = await api('/commands', { method: 'POST', body: { deviceId: IMEI, type: 'siren_on' } });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const received = await second.nextCommand(15_000);
    expect(received?.text).toBe('setdigout ?1');
    second.answer(received!);
    await eventually(async () => (await api(`/commands/${posted.body.data.id}`)).body.data.status, (s) => expect(s).toBe('acknowledged'), 15_000);
  }, 90_000);

  it('still answers the API through HAProxy after an API node is killed', async () => {
    await killFleetNode(layout, node('api-1'));
    // At once: before HAProxy's checks mark it down, a request refused by the dead node is sent to the other.
    const answers: number[] = [];
    for (let i = 0; i < 10; i++) answers.push((await api(`/devices/${IMEI}/status`)).status);
    expect(answers).toEqual(Array(10).fill(200));
    await eventually(async () => (await haproxyServers(layout)).find((s) => s.backend === 'api' && s.server === 'api-1')?.status, (s) => expect(s).toMatch(/^DOWN/), 10_000);
  }, 30_000);

  it('stops every part with down, the killed ones included', async () => {
    await down(layout);
    expect(status(layout).filter((p) => p.running)).toEqual([]);
  }, 60_000);
});
