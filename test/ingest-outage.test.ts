import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { simulatedImei } from '../simulators/simulated-devices.ts';
import { teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type Serving } from './support/fleet-process.ts';

const TRACKERS = 12;
const SEED = 77;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A running `fleet serve` takes a simulated fleet over TCP while its database goes away and comes back.
 * On PostgreSQL the database refuses connections and every session is terminated for a few seconds:
 * the server must hold the trackers' frames unanswered (they wait for the ACK) and store them once
 * it can. On the embedded default the database lives inside the server, so the outage is the server
 * process killed with SIGKILL and started again: what was acknowledged must have been on disk.
 * Either way, every fix a tracker generated is stored exactly once, and the API shows the fleet.
 */
describe('ingest through a database outage', () => {
  it('loses no acknowledged position and stores each fix once', async () => {
    const fresh = await freshDatabase();
    const trackerPort = await freePort();
    const env = { ...fresh.env, PORT: '0', TELTONIKA_PORT: String(trackerPort), LOG_LEVEL: 'warn' };
    const imeis = Array.from({ length: TRACKERS }, (_, i) => simulatedImei(SEED, i));

    // Devices, a user who sees them and a key, written before the server owns the database.
    const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.env.DATA_DIR ?? '', embedded: 'own' });
    const make = fixtures(setup.db);
    const account = await make.account();
    const user = await make.user(account.id);
    const { key } = await make.key(user.id);
    for (const imei of imeis) await make.device(account.id, { imei, userIds: [user.id] });
    await setup.close();

    let server: Serving | undefined = await serve(env);
    const admin = fresh.name ? new pg.Client({ connectionString: process.env.DATABASE_URL }) : undefined;
    try {
      const trackers = startFleetSimulation({
        imeis, dialect: teltonikaDialect, server: { host: '127.0.0.1', port: trackerPort }, intervalMs: 200, seed: SEED, stops: [],
        center: { latitude: 19.43, longitude: -99.13 },
      });
      await sleep(2_000);
      const ackedBefore = trackers.reduce((n, t) => n + t.stats.acknowledged, 0);
      expect(ackedBefore, server.output()).toBeGreaterThan(0);

      if (admin) {
        await admin.connect();
        await admin.query(`ALTER DATABASE ${fresh.name} WITH ALLOW_CONNECTIONS false`);
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [fresh.name]);
        await sleep(3_000);
        // Nothing could be stored, so nothing was acknowledged; the server is still up, waiting.
        const ackedDuring = trackers.reduce((n, t) => n + t.stats.acknowledged, 0);
        expect(ackedDuring - ackedBefore).toBeLessThanOrEqual(TRACKERS * 2); // frames committed just before the cut
        expect(server.process.exitCode, server.output()).toBeNull();
        await admin.query(`ALTER DATABASE ${fresh.name} WITH ALLOW_CONNECTIONS true`);
      } else {
        server.process.kill('SIGKILL');
        await server.exited;
        await sleep(1_000);
        server = await serve(env);
      }

      await sleep(2_000);
      await Promise.all(trackers.map((t) => t.stop(30_000)));
      expect(trackers.every((t) => t.pending === 0 && !t.stats.refused), server.output()).toBe(true);
      if (admin) expect(server.output()).toMatch(/cannot store positions; retrying/);

      const check = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.env.DATA_DIR ?? '', embedded: 'share' });
      try {
        const { rows } = await sql<{ imei: string; n: number }>`
          SELECT d.imei, count(p.*)::int AS n FROM devices d LEFT JOIN positions p ON p.device_id = d.id
          WHERE d.account_id = ${account.id} GROUP BY d.imei`.execute(check.db);
        const stored = Object.fromEntries(rows.map((r) => [r.imei, r.n]));
        for (const t of trackers) expect(stored[t.imei], t.imei).toBe(t.stats.generated);
      } finally {
        await check.close();
      }

      const api = server.url.replace('//localhost:', '//127.0.0.1:');
      const response = await fetch(`${api}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${key}` } });
      const body = (await response.json()) as { data: Array<{ deviceId: string; latitude: number | null; lastReportUtc: string | null }> };
      expect(body.data.map((d) => d.deviceId).sort()).toEqual([...imeis].sort());
      for (const d of body.data) {
        expect(d.latitude).not.toBeNull();
        expect(Date.now() - Date.parse(d.lastReportUtc!)).toBeLessThan(60_000);
      }
    } finally {
      if (admin) {
        await admin.query(`ALTER DATABASE ${fresh.name} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
        await admin.end().catch(() => undefined);
      }
      server?.process.kill('SIGTERM');
      await server?.exited;
      await fresh.destroy();
    }
  }, 120_000);
});
