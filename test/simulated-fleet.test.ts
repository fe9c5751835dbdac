import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { gt06Dialect, teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
const listen = (port: number | undefined, protocol = 'teltonika') => startTestIngest(database, { port, protocol });

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

describe('a simulated fleet over TCP', () => {
  it('stores every fix exactly once, also when the server drops every connection mid-run', async () => {
    const account = await fixtures(database.db).account();
    const imeis = await ensureSimulatedDevices(database.db, account.id, 42, 25);
    let listener: TestIngest = await listen(undefined);
    const port = listener.port;
    const trackers = startFleetSimulation({
      imeis, dialect: teltonikaDialect, server: { host: '127.0.0.1', port }, intervalMs: 100, seed: 42, stops: [], center: { latitude: 19.43, longitude: -99.13 },
    });
    await new Promise((r) => setTimeout(r, 1_500));
    // A server restart: every connection drops; trackers keep what was not acknowledged and resend.
    await listener.close();
    await new Promise((r) => setTimeout(r, 500));
    listener = await listen(port);
    await new Promise((r) => setTimeout(r, 1_500));
    await Promise.all(trackers.map((t) => t.stop(15_000)));
    await listener.close();

    const generated = trackers.reduce((n, t) => n + t.stats.generated, 0);
    expect(trackers.every((t) => t.pending === 0 && !t.stats.refused)).toBe(true);
    expect(trackers.reduce((n, t) => n + t.stats.reconnects, 0)).toBeGreaterThanOrEqual(25);
    const { rows } = await sql<{ imei: string; n: number }>`
      SELECT d.imei, count(p.*)::int AS n FROM devices d LEFT JOIN positions p ON p.device_id = d.id
      WHERE d.account_id = ${account.id} GROUP BY d.imei`.execute(database.db);
    const stored = Object.fromEntries(rows.map((r) => [r.imei, r.n]));
    // Every generated fix is in the history once: resends were no-ops, nothing acknowledged was lost.
    expect(Object.values(stored).reduce((a, b) => a + b, 0)).toBe(generated);
    for (const t of trackers) expect(stored[t.imei]).toBe(t.stats.generated);
    const states = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM device_states s JOIN devices d ON d.id = s.device_id WHERE d.account_id = ${account.id}`.execute(database.db);
    expect(states.rows[0]!.n).toBe(25);
  }, 60_000);

  // GT06 times are whole seconds, so one fix a second per tracker: two in the same second would be one fix.
  it('works the same with GT06 trackers, one fix per message, each echoed', async () => {
    const account = await fixtures(database.db).account();
    const imeis = await ensureSimulatedDevices(database.db, account.id, 43, 10);
    const listener = await listen(undefined, 'gt06');
    const trackers = startFleetSimulation({
      imeis, dialect: gt06Dialect, server: { host: '127.0.0.1', port: listener.port }, intervalMs: 1_000, seed: 43, stops: [], center: { latitude: 19.43, longitude: -99.13 },
    });
    await new Promise((r) => setTimeout(r, 3_500));
    await Promise.all(trackers.map((t) => t.stop(15_000)));
    await listener.close();
    const generated = trackers.reduce((n, t) => n + t.stats.generated, 0);
    expect(generated).toBeGreaterThanOrEqual(25);
    expect(trackers.every((t) => t.pending === 0)).toBe(true);
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM positions p JOIN devices d ON d.id = p.device_id WHERE d.account_id = ${account.id}`.execute(database.db);
    expect(rows[0]!.n).toBe(generated);
  }, 60_000);
});
