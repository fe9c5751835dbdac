import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { eventually } from './support/eventually.ts';
import { startPrimary, startReplica, type PostgresServer } from './support/postgres-servers.ts';
import { parsePrometheusText, sampleValue } from './support/prometheus-text.ts';
import { TEST_CONFIG } from './support/test-app.ts';

/**
 * The API's stale-tolerant reads on a real streaming replica of a real primary, both started here on
 * ports of their own: what is read where, the lag rule, and the fallback to the primary.
 */
const MAX_LAG_MS = 3000;

describe.skipIf(!process.env.DATABASE_URL)('reads from a streaming replica (PostgreSQL; skipped on the embedded database, which has no replicas)', () => {
  let primary: PostgresServer | undefined;
  let replica: PostgresServer | undefined;
  let writer: DatabaseHandle | undefined;
  let served: DatabaseHandle | undefined;
  let replicaSql: pg.Client | undefined;
  let app: App;
  let key: string;
  let imei: string;
  let deviceId: number;

  const get = async (path: string) => {
    const res = await app.request(`/api/v1${path}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const vehicleName = async () => {
    const { status, body } = await get(`/vehicles/${imei}`);
    expect(status).toBe(200);
    return body.data.name as string;
  };
  const metrics = async () => parsePrometheusText(await (await app.request('/metrics')).text());
  const readsFrom = async (target: 'replica' | 'primary') => sampleValue(await metrics(), 'fleetcore_read_connections_total', { target }) ?? 0;
  /** Runs `read` and says which database answered it (the counter of connections taken for stale-tolerant reads). */
  const answeredBy = async <T>(read: () => Promise<T>) => {
    const before = { replica: await readsFrom('replica'), primary: await readsFrom('primary') };
    const value = await read();
    const after = { replica: await readsFrom('replica'), primary: await readsFrom('primary') };
    const replica = after.replica - before.replica;
    const primary = after.primary - before.primary;
    return { value, from: replica > 0 && primary > 0 ? 'both' : replica > 0 ? 'replica' : primary > 0 ? 'primary' : 'neither' };
  };
  const rename = (name: string) => writer!.db.updateTable('devices').set({ name }).where('id', '=', deviceId).execute();

  beforeAll(async () => {
    primary = await startPrimary();
    const admin = new pg.Client({ connectionString: primary.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE fleet');
    await admin.end();
    const fleet = new pg.Client({ connectionString: primary.url('fleet') });
    await fleet.connect();
    await fleet.query('CREATE EXTENSION postgis');
    await fleet.end();

    writer = await openDatabase({ databaseUrl: primary.url('fleet'), dataDir: '', embedded: 'own' });
    await migrateToLatest(writer.db);
    const f = fixtures(writer.db);
    const tenant = await f.tenant();
    key = tenant.key;
    const device = await f.device(tenant.account.id, { name: 'Before', userIds: [tenant.user.id] });
    imei = device.imei;
    deviceId = device.id;

    replica = await startReplica(primary);
    replicaSql = new pg.Client({ connectionString: replica.url('fleet') });
    await replicaSql.connect();
    replicaSql.on('error', () => undefined); // the replica is stopped in the last test
    served = await openDatabase({
      databaseUrl: primary.url('fleet'), readDatabaseUrl: replica.url('fleet'), readReplicaMaxLagMs: MAX_LAG_MS, dataDir: '', embedded: 'own',
    });
    app = createApp({
      db: served.db, staleReads: served.staleReads, log: silentLogger, config: TEST_CONFIG,
      rateLimiter: createMemoryRateLimiter(100_000, 10_000),
    });
  }, 180_000);

  afterAll(async () => {
    await replicaSql?.end().catch(() => undefined);
    await served?.close().catch(() => undefined);
    await writer?.close().catch(() => undefined);
    await replica?.destroy();
    await primary?.destroy();
  }, 60_000);

  it('answers a stale-tolerant read from the replica, skips it once it lags past READ_REPLICA_MAX_LAG_MS, and returns to it when it catches up', async () => {
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'Before', from: 'replica' });

    // Replay paused, a write on the primary by another process: the replica still shows the old name.
    await replicaSql!.query('SELECT pg_wal_replay_pause()');
    await rename('After');
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'Before', from: 'replica' });

    // The lag grows past the limit: the metric shows it, and reads go to the primary, which has the write.
    await eventually(metrics, (samples) => expect(sampleValue(samples, 'fleetcore_read_replica_lag_seconds')).toBeGreaterThan(MAX_LAG_MS / 1000), 20_000);
    expect(served!.staleReads.target()).toBe('primary');
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'After', from: 'primary' });

    await replicaSql!.query('SELECT pg_wal_replay_resume()');
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    expect(sampleValue(await metrics(), 'fleetcore_read_replica_lag_seconds')).toBeLessThan(MAX_LAG_MS / 1000);
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'After', from: 'replica' });
  }, 60_000);

  it('reads the history, the device status and the event log from the replica, and authenticates on the primary', async () => {
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    for (const path of [`/vehicles/${imei}/positions`, `/devices/${imei}/status`, '/events']) {
      const read = await answeredBy(() => get(path));
      expect(read.value.status, path).toBe(200);
      expect(read.from, path).toBe('replica');
    }
    // The key is revoked on the primary while the replica does not replay: it stops working at once.
    const f = fixtures(writer!.db);
    const tenant = await f.tenant();
    const device = await f.device(tenant.account.id, { userIds: [tenant.user.id] });
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    await replicaSql!.query('SELECT pg_wal_replay_pause()');
    try {
      await writer!.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('user_id', '=', tenant.user.id).execute();
      const res = await app.request(`/api/v1/vehicles/${device.imei}`, { headers: { Authorization: `Bearer ${tenant.key}` } });
      expect(res.status).toBe(401);
    } finally {
      await replicaSql!.query('SELECT pg_wal_replay_resume()');
    }
  }, 60_000);

  it('a client reads its own write through this process at once, even from a lagging replica', async () => {
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    await replicaSql!.query('SELECT pg_wal_replay_pause()');
    try {
      const res = await app.request(`/api/v1/vehicles/${imei}`, {
        method: 'PATCH', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Mine' }),
      });
      expect(res.status).toBe(200);
      // Well within the lag limit, yet the replica has not replayed the write: the primary answers.
      expect(served!.staleReads.target()).toBe('primary');
      expect(await answeredBy(vehicleName)).toMatchObject({ value: 'Mine', from: 'primary' });
    } finally {
      await replicaSql!.query('SELECT pg_wal_replay_resume()');
    }
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'Mine', from: 'replica' });
  }, 60_000);

  it('a replica that stops makes reads fall back to the primary without errors, until it is back', async () => {
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'));
    await rename('While down');
    await eventually(vehicleName, (name) => expect(name).toBe('While down'));
    await replica!.stop('immediate');
    // At once, before any measurement has noticed: the read that finds it gone is answered by the primary.
    for (let i = 0; i < 5; i++) expect(await vehicleName()).toBe('While down');
    await eventually(metrics, (samples) => expect(sampleValue(samples, 'fleetcore_read_replica_up')).toBe(0));
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'While down', from: 'primary' });

    await replica!.start();
    await eventually(async () => served!.staleReads.target(), (target) => expect(target).toBe('replica'), 30_000);
    expect(sampleValue(await metrics(), 'fleetcore_read_replica_up')).toBe(1);
    expect(await answeredBy(vehicleName)).toMatchObject({ value: 'While down', from: 'replica' });
  }, 90_000);
});
