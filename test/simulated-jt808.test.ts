import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueCommand } from '../db/commands.ts';
import { InProcessCommandBus } from '../ingest/commands/command-bus.ts';
import { CommandDelivery } from '../ingest/commands/command-delivery.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { jt808Dialect } from '../simulators/tracker-dialect.ts';
import { eventually } from './support/eventually.ts';
import { startTestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Simulated JT/T 808-2019 terminals (numbered by their IMEI) against the jt808 listener: two-step login,
// 0x0200 and 0x0704 uploads each answered 0x8001 after commit, 0x8105 engine control answered 0x0001.

let database: TestDatabase;
let delivery: CommandDelivery;
const center = { latitude: 19.43, longitude: -99.13 };

beforeAll(async () => {
  database = await openTestDatabase();
  delivery = new CommandDelivery(database.db, new InProcessCommandBus(), silentLogger, { answerTimeoutMs: 5_000, safeStopKmh: 20, safeStopMaxFixAgeMs: 60_000, sweepMs: 200 });
  await delivery.start();
}, 60_000);
afterAll(async () => {
  await delivery?.close();
  await database?.destroy();
});

describe('simulated JT/T 808 terminals over TCP', () => {
  it('register, authenticate and store every fix exactly once, single and batched, with the engine cut and restored on command', async () => {
    const account = await fixtures(database.db).account();
    const imeis = await ensureSimulatedDevices(database.db, account.id, 48, 5, 'jt808');
    const ingest = await startTestIngest(database, { protocol: 'jt808', commands: delivery });
    // Three fixes an upload: 0x0704 batches, and 0x0200 when the backlog holds one.
    const trackers = startFleetSimulation({
      imeis, dialect: jt808Dialect, server: { host: '127.0.0.1', port: ingest.port }, intervalMs: 1_000, recordsPerUpload: 3, seed: 48, stops: [], center,
    });
    try {
      // Seed 48's first vehicle sets off at once: on the road when its relay is cut.
      const device = await database.db.selectFrom('devices').selectAll().where('imei', '=', imeis[0]!).executeTakeFirstOrThrow();
      const latest = async (n: number) =>
        (await sql<{ speed_kmh: number; attributes: Record<string, unknown> }>`
          SELECT speed_kmh, attributes FROM positions WHERE device_id = ${device.id} ORDER BY fix_time DESC LIMIT ${n}`.execute(database.db)).rows;
      await eventually(() => latest(1), (rows) => expect(rows[0]?.speed_kmh).toBeGreaterThan(0));
      const queue = async (type: 'engine_stop' | 'engine_resume') => {
        const { command } = await queueCommand(database.db, {
          accountId: account.id, deviceId: device.id, apiKeyId: null, userId: null, type, params: { force: true }, text: null, idempotencyKey: null,
          expiresAt: new Date(Date.now() + 60_000),
        });
        await eventually(
          async () => (await sql<{ status: string; response: string | null }>`SELECT status, response FROM commands WHERE id = ${command.id}`.execute(database.db)).rows[0],
          (c) => expect(c).toEqual({ status: 'acknowledged', response: 'success' }),
        );
      };
      await queue('engine_stop');
      // The cut shows in the status word (bit 10) and the vehicle comes to a stop.
      await eventually(() => latest(2), (rows) => {
        expect(rows.map((r) => r.attributes.blocked)).toEqual([true, true]);
        expect(rows.map((r) => r.speed_kmh)).toEqual([0, 0]);
      }, 20_000);
      await queue('engine_resume');
      await eventually(() => latest(1), (rows) => expect(rows[0]).toMatchObject({ attributes: { blocked: false } }), 20_000);
      expect(trackers[0]!.stats.commands).toBe(2);
    } finally {
      await Promise.all(trackers.map((t) => t.stop(15_000)));
      await ingest.close();
    }
    const generated = trackers.reduce((n, t) => n + t.stats.generated, 0);
    expect(trackers.every((t) => t.pending === 0 && !t.stats.refused && t.stats.acknowledged === t.stats.generated)).toBe(true);
    const { rows } = await sql<{ imei: string; n: number }>`
      SELECT d.imei, count(p.*)::int AS n FROM devices d LEFT JOIN positions p ON p.device_id = d.id WHERE d.account_id = ${account.id} GROUP BY d.imei`.execute(database.db);
    expect(rows.reduce((n, r) => n + r.n, 0)).toBe(generated);
    for (const t of trackers) expect(rows.find((r) => r.imei === t.imei)?.n).toBe(t.stats.generated);
  }, 90_000);
});
