import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueCommand } from '../db/commands.ts';
import { InProcessCommandBus } from '../ingest/commands/command-bus.ts';
import { CommandDelivery } from '../ingest/commands/command-delivery.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { gps103Dialect } from '../simulators/tracker-dialect.ts';
import { eventually } from './support/eventually.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// GPS103 acknowledges no report: the simulated tracker counts its lines delivered when the heartbeat
// after them is answered ON. These runs check that this count is the stored truth.

let database: TestDatabase;
let bus: InProcessCommandBus;
let delivery: CommandDelivery;
const center = { latitude: 19.43, longitude: -99.13 };

beforeAll(async () => {
  database = await openTestDatabase();
  bus = new InProcessCommandBus();
  delivery = new CommandDelivery(database.db, bus, silentLogger, { answerTimeoutMs: 5_000, safeStopKmh: 20, safeStopMaxFixAgeMs: 60_000, sweepMs: 200 });
  await delivery.start();
}, 60_000);
afterAll(async () => {
  await delivery?.close();
  await database?.destroy();
});

const storedPerImei = async (accountId: number) => {
  const { rows } = await sql<{ imei: string; n: number }>`
    SELECT d.imei, count(p.*)::int AS n FROM devices d LEFT JOIN positions p ON p.device_id = d.id
    WHERE d.account_id = ${accountId} GROUP BY d.imei`.execute(database.db);
  return Object.fromEntries(rows.map((r) => [r.imei, r.n]));
};

describe('simulated GPS103 trackers over TCP', () => {
  // GPS103 times are whole seconds: one fix a second per tracker, several lines per upload.
  it('store every fix exactly once, each upload counted only once ON answers its heartbeat, also across a server restart', async () => {
    const account = await fixtures(database.db).account();
    const imeis = await ensureSimulatedDevices(database.db, account.id, 44, 10, 'gps103');
    let listener: TestIngest = await startTestIngest(database, { protocol: 'gps103' });
    const port = listener.port;
    const trackers = startFleetSimulation({
      imeis, dialect: gps103Dialect, server: { host: '127.0.0.1', port }, intervalMs: 1_000, recordsPerUpload: 2, seed: 44, stops: [], center,
    });
    await new Promise((r) => setTimeout(r, 4_500));
    // Every connection drops; what ON did not answer stays in the trackers and goes again.
    await listener.close();
    await new Promise((r) => setTimeout(r, 1_500));
    listener = await startTestIngest(database, { protocol: 'gps103', port });
    await new Promise((r) => setTimeout(r, 3_000));
    await Promise.all(trackers.map((t) => t.stop(15_000)));
    await listener.close();

    const generated = trackers.reduce((n, t) => n + t.stats.generated, 0);
    expect(generated).toBeGreaterThanOrEqual(60);
    expect(trackers.every((t) => t.pending === 0 && !t.stats.refused && t.stats.acknowledged === t.stats.generated)).toBe(true);
    expect(trackers.reduce((n, t) => n + t.stats.reconnects, 0)).toBeGreaterThanOrEqual(10);
    const stored = await storedPerImei(account.id);
    for (const t of trackers) expect(stored[t.imei]).toBe(t.stats.generated);
    const { rows } = await sql<{ latitude: number; longitude: number }>`
      SELECT p.latitude, p.longitude FROM positions p JOIN devices d ON d.id = p.device_id WHERE d.account_id = ${account.id}`.execute(database.db);
    // The hemispheres came through: every fix is around the simulation's center (north, west).
    expect(rows).toHaveLength(generated);
    for (const r of rows) expect(Math.abs(r.latitude - center.latitude) + Math.abs(r.longitude - center.longitude)).toBeLessThan(0.5);
  }, 60_000);

  it('cuts the engine on J and restores it on K, each acknowledged with the device\'s answer, and drives accordingly', async () => {
    const account = await fixtures(database.db).account();
    const [imei] = await ensureSimulatedDevices(database.db, account.id, 48, 1, 'gps103');
    const ingest = await startTestIngest(database, { protocol: 'gps103', commands: delivery });
    const [tracker] = startFleetSimulation({ imeis: [imei!], dialect: gps103Dialect, server: { host: '127.0.0.1', port: ingest.port }, intervalMs: 1_000, seed: 48, stops: [], center });
    const queue = (deviceId: number, type: 'engine_stop' | 'engine_resume') =>
      queueCommand(database.db, {
        accountId: account.id, deviceId, apiKeyId: null, userId: null, type, params: { force: true }, text: null, idempotencyKey: null, expiresAt: new Date(Date.now() + 60_000),
      });
    const answered = (id: string, response: string) =>
      eventually(
        async () => (await sql<{ status: string; response: string | null }>`SELECT status, response FROM commands WHERE id = ${id}`.execute(database.db)).rows[0],
        (c) => expect(c).toEqual({ status: 'acknowledged', response }),
      );
    const speeds = async (deviceId: number, n: number) =>
      (await sql<{ speed_kmh: number }>`SELECT speed_kmh FROM positions WHERE device_id = ${deviceId} ORDER BY fix_time DESC LIMIT ${n}`.execute(database.db)).rows.map((r) => Math.round(r.speed_kmh));
    try {
      const device = await database.db.selectFrom('devices').selectAll().where('imei', '=', imei!).executeTakeFirstOrThrow();
      // Seed 48's vehicle sets off at once: on the road when the relay is cut.
      await eventually(() => speeds(device.id, 1), (s) => expect(s[0]).toBeGreaterThan(0));
      await answered((await queue(device.id, 'engine_stop')).command.id, 'jt');
      // The relay is cut: about 10 km/h less a second, then standing still.
      await eventually(() => speeds(device.id, 2), (s) => expect(s).toEqual([0, 0]), 20_000);
      await answered((await queue(device.id, 'engine_resume')).command.id, 'kt');
      await eventually(() => speeds(device.id, 1), (s) => expect(s[0]).toBeGreaterThan(0), 20_000);
      expect(tracker!.stats.commands).toBe(2);
    } finally {
      await tracker!.stop(2_000);
      await ingest.close();
    }
  }, 60_000);
});
