import { EventSource } from 'eventsource';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { adminPool } from '../db/postgres-admin.ts';
import { preparedStatementPool } from '../db/prepared-statement-pool.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { runFleet } from './support/fleet-command.ts';
import { freePort, freshDatabase, serve } from './support/fleet-process.ts';
import { pgbouncerInstalled, startPgBouncer, type PgBouncerPoolMode, type PgBouncerServer } from './support/pgbouncer-server.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';

// `fleet serve` with DATABASE_URL pointing at a real PgBouncer (Debian's 1.18) in transaction and in
// session pooling: a tracker's fixes stored, geofence events produced by the engine, API reads and an
// event stream answering through the pooler, and a geofence created after start used at once, which
// only a NOTIFY can do here (the geofence poll is a minute).

const OUTSIDE = { latitude: 19.3, longitude: -99.3 };
const DEPOT = { latitude: 19.4, longitude: -99.1 };

const skipReason = !process.env.DATABASE_URL ? 'needs DATABASE_URL' : !pgbouncerInstalled ? 'needs pgbouncer (apt-get install pgbouncer)' : undefined;

/** The PostgreSQL behind DATABASE_URL, for the PgBouncer in front of it. */
function upstream(): { host: string; port: number } {
  const url = new URL(process.env.DATABASE_URL!);
  return { host: url.hostname, port: Number(url.port || 5432) };
}

describe.skipIf(skipReason !== undefined)(`fleet serve behind PgBouncer${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('names DATABASE_POOL_MODE=transaction when a prepared statement is lost to transaction pooling', async () => {
    const bouncer = await startPgBouncer({ ...upstream(), poolMode: 'transaction' });
    const database = new URL(process.env.DATABASE_URL!).pathname.slice(1);
    const pool = new pg.Pool({ connectionString: bouncer.url(database), max: 1 });
    const other = new pg.Client({ connectionString: bouncer.url(database) });
    const client = await preparedStatementPool(pool).connect();
    try {
      await client.query('SELECT 1 AS one', []); // prepared on the only server session
      await other.connect();
      await other.query('BEGIN'); // holds that session: the next statement gets a new one
      await expect(client.query('SELECT 1 AS one', [])).rejects.toThrow(/does not exist.*set DATABASE_POOL_MODE=transaction/);
    } finally {
      client.release();
      await other.end().catch(() => undefined);
      await pool.end();
      await bouncer.stop();
    }
  }, 30_000);

  it('migrates an empty database through transaction pooling and leaves no migration lock held', async () => {
    const bouncer = await startPgBouncer({ ...upstream(), poolMode: 'transaction', poolSize: 3 });
    const admin = adminPool(process.env.DATABASE_URL!);
    const name = `fleetcore_pgbouncer_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    // Other clients keep the three server connections busy in turn, so each of the migration's
    // transactions gets whichever is free: a session lock taken on one would be left there.
    let busy = true;
    const others = Array.from({ length: 4 }, () => new pg.Client({ connectionString: bouncer.url(name) }));
    const traffic = others.map(async (client) => {
      await client.connect();
      while (busy) await client.query('SELECT pg_sleep(0.002)');
    });
    try {
      const env = { DATABASE_URL: bouncer.url(name), DATABASE_POOL_MODE: 'transaction' };
      const first = await runFleet(['migrate'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^applied 0001-foundation, .*\(transaction pooling\)$/m);
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = $1",
        [name],
      );
      expect(rows[0].n).toBe(0);
      const again = await runFleet(['migrate'], env, 20_000);
      expect(again.stdout, again.stderr).toMatch(/^schema is current/m);
    } finally {
      busy = false;
      await Promise.allSettled(traffic);
      await Promise.allSettled(others.map((client) => client.end()));
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await bouncer.stop();
    }
  }, 60_000);

  // Without DATABASE_LISTEN_URL in transaction mode nothing listens: the geofence poll (the default
  // 500 ms) finds the change, and the start says so.
  describe.each<{ mode: PgBouncerPoolMode; listenDirect: boolean; geofencePollMs: string }>([
    { mode: 'transaction', listenDirect: true, geofencePollMs: '60000' },
    { mode: 'session', listenDirect: false, geofencePollMs: '60000' },
    { mode: 'transaction', listenDirect: false, geofencePollMs: '500' },
  ])('pool_mode = $mode, DATABASE_LISTEN_URL $listenDirect', ({ mode, listenDirect, geofencePollMs }) => {
    let bouncer: PgBouncerServer;
    beforeAll(async () => {
      // Transaction mode: few server connections for the process's ten, so consecutive transactions of
      // one client land on different sessions. Session mode: one for each connection the process holds.
      bouncer = await startPgBouncer({ ...upstream(), poolMode: mode, poolSize: mode === 'transaction' ? 3 : 20 });
    });
    afterAll(async () => bouncer?.stop());

    it('stores fixes, produces geofence events, answers the API and follows a new geofence at once', async () => {
      const fresh = await freshDatabase();
      try {
        const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
        const make = fixtures(setup.db);
        const { account, user, key } = await make.tenant();
        const imei = '356307042449601';
        await make.device(account.id, { imei, name: 'Pooled Van', userIds: [user.id] });
        await setup.close();
        // JIT as a session of fleetcore's role gets it (fleetcore's own connections turn it off).
        const plain = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
        await plain.connect();
        const { rows: jit } = await plain.query<{ on: boolean }>(`SELECT current_setting('jit') = 'on' AND pg_jit_available() AS "on"`);
        await plain.end();

        const trackerPort = await freePort();
        const server = await serve({
          DATABASE_URL: bouncer.url(fresh.name!),
          DATABASE_POOL_MODE: mode,
          ...(listenDirect ? { DATABASE_LISTEN_URL: fresh.env.DATABASE_URL! } : {}),
          GEOFENCE_POLL_MS: geofencePollMs,
          PORT: '0',
          TELTONIKA_PORT: String(trackerPort),
        });
        const auth = { Authorization: `Bearer ${key}` };
        const api = async (path: string, init: RequestInit = {}) => {
          const response = await fetch(`${server.url}/api/v1${path}`, { ...init, headers: { ...auth, 'Content-Type': 'application/json' } });
          return { status: response.status, body: (await response.json()) as any };
        };
        const stream = new EventSource(`${server.url}/api/v1/events/stream?types=vehicle.geofence.*`, {
          fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...auth } }),
        });
        const streamed: string[] = [];
        stream.addEventListener('vehicle.geofence.enter', () => streamed.push('enter'));
        stream.addEventListener('vehicle.geofence.exit', () => streamed.push('exit'));
        const tracker = await scriptedTracker(trackerPort, imei);
        try {
          // Before every later fix, so none of them arrives behind the engine's cursor (a late fix).
          await tracker.report({ ...OUTSIDE, time: new Date(Date.now() - 120_000) });
          // Created after start: the engine only learns of it from the change log, read at NOTIFY (the poll
          // is a minute away) or, with nothing listening, at the next poll.
          const created = await api('/geofences', { method: 'POST', body: JSON.stringify({ name: 'Depot', type: 'circle', center: { lat: DEPOT.latitude, lng: DEPOT.longitude }, radiusMeters: 300 }) });
          expect(created.status, JSON.stringify(created.body)).toBe(201);
          await new Promise((r) => setTimeout(r, 1_000));
          const at = Date.now();
          // In and out a few times: many transactions from every pool client, each on whichever server session is free.
          for (let i = 0; i < 4; i++) {
            await tracker.report({ ...DEPOT, time: new Date(at - 60_000 + i * 10_000) });
            await tracker.report({ ...OUTSIDE, time: new Date(at - 55_000 + i * 10_000) });
          }
          const expected = ['enter', 'exit', 'enter', 'exit', 'enter', 'exit', 'enter', 'exit'];
          const logged = async () => ((await api('/events?types=vehicle.geofence.*&order=asc&limit=100')).body.data as Array<{ type: string }>).map((e) => e.type.slice('vehicle.geofence.'.length));
          const deadline = Date.now() + 20_000;
          while ((await logged()).length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
          expect((await logged()).join(' '), server.output()).toBe(expected.join(' '));
          while (streamed.length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          expect(streamed.join(' ')).toBe(expected.join(' '));

          const status = await api('/devices/status');
          expect(status.body.data.find((d: { deviceId: string }) => d.deviceId === imei)).toMatchObject({ latitude: OUTSIDE.latitude });
          const history = await api(`/vehicles/${imei}/positions?limit=100`);
          expect(history.status).toBe(200);
          expect(history.body.data).toHaveLength(9);
          expect(server.output()).not.toMatch(/prepared statement|does not exist|error/i);
          expect(server.output().includes('without DATABASE_LISTEN_URL: no LISTEN')).toBe(mode === 'transaction' && !listenDirect);
          // Session mode turns JIT off itself; transaction mode cannot, and says how.
          expect(server.output().includes('ALTER ROLE postgres SET jit = off')).toBe(mode === 'transaction' && jit[0]!.on);
        } finally {
          tracker.close();
          stream.close();
          server.process.kill('SIGTERM');
          expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
        }
      } finally {
        await fresh.destroy();
      }
    }, 120_000);
  });
});
