import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueCommand } from '../db/commands.ts';
import { InProcessCommandBus } from '../ingest/commands/command-bus.ts';
import { CommandDelivery } from '../ingest/commands/command-delivery.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { ensureSimulatedDevices } from '../simulators/simulated-devices.ts';
import { gt06Dialect, teltonikaDialect, type TrackerDialect } from '../simulators/tracker-dialect.ts';
import type { VirtualTracker } from '../simulators/virtual-tracker.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The simulated fleet (`fleet simulate`, the demo) answers commands as real devices do: a dispatcher
// cuts an engine, the tracker answers, its next fixes report the relay, and the vehicle comes to a stop.

let database: TestDatabase;
let bus: InProcessCommandBus;
let delivery: CommandDelivery;
const running: Array<{ ingest: TestIngest; trackers: VirtualTracker[] }> = [];

beforeAll(async () => {
  database = await openTestDatabase();
  bus = new InProcessCommandBus();
  // A sweep of its own every 200 ms: it also stands in for a notification, as one queued here sends none.
  delivery = new CommandDelivery(database.db, bus, silentLogger, { answerTimeoutMs: 5_000, safeStopKmh: 20, safeStopMaxFixAgeMs: 60_000, sweepMs: 200 });
  await delivery.start();
}, 60_000);

afterAll(async () => {
  for (const { ingest, trackers } of running) {
    await Promise.all(trackers.map((t) => t.stop(1_000)));
    await ingest.close();
  }
  await delivery?.close();
  await database?.destroy();
});

async function fleet(dialect: TrackerDialect, seed: number) {
  const account = await fixtures(database.db).account();
  const [imei] = await ensureSimulatedDevices(database.db, account.id, seed, 1, dialect.protocol);
  const ingest = await startTestIngest(database, { protocol: dialect.protocol, commands: delivery });
  const trackers = startFleetSimulation({
    imeis: [imei!], dialect, server: { host: '127.0.0.1', port: ingest.port }, intervalMs: 1_000, seed, stops: [], center: { latitude: 19.43, longitude: -99.13 },
  });
  running.push({ ingest, trackers });
  const device = await database.db.selectFrom('devices').selectAll().where('imei', '=', imei!).executeTakeFirstOrThrow();
  return { account, device, tracker: trackers[0]! };
}

const queue = (accountId: number, deviceId: number, type: 'engine_stop' | 'engine_resume', params: Record<string, unknown> = {}) =>
  queueCommand(database.db, { accountId, deviceId, apiKeyId: null, userId: null, type, params, text: null, idempotencyKey: null, expiresAt: new Date(Date.now() + 60_000) });

const statusOf = async (id: string) => (await sql<{ status: string; response: string | null }>`SELECT status, response FROM commands WHERE id = ${id}`.execute(database.db)).rows[0]!;

/** The newest stored fixes of a device, newest first. */
const latest = async (deviceId: number, n: number) =>
  (await sql<{ speed_kmh: number; attributes: Record<string, unknown>; fix_time: Date }>`
    SELECT speed_kmh, attributes, fix_time FROM positions WHERE device_id = ${deviceId} ORDER BY fix_time DESC LIMIT ${n}`.execute(database.db)).rows;

/** A simulated vehicle on the road, then a forced engine stop it must answer with `answer`. */
async function cutEngine(dialect: TrackerDialect, seed: number, answer: string) {
  const { account, device, tracker } = await fleet(dialect, seed);
  await eventually(() => latest(device.id, 1), (rows) => expect(rows).toHaveLength(1));
  const stop = (await queue(account.id, device.id, 'engine_stop', { force: true })).command;
  await eventually(() => statusOf(stop.id), (c) => expect(c).toEqual({ status: 'acknowledged', response: answer }));
  expect(tracker.stats.commands).toBe(1);
  return { account, device };
}

describe('a simulated tracker', () => {
  it('(Teltonika) cuts its relay on engine_stop, answers, reports DOUT1 in its fixes and stops; engine_resume restores it', async () => {
    const { account, device } = await cutEngine(teltonikaDialect, 71, 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED');
    // Within a few fixes at about 10 km/h less a second, the vehicle stands, its relay open.
    await eventually(() => latest(device.id, 2), (rows) => {
      expect(rows.map((r) => r.attributes.out1)).toEqual([true, true]);
      expect(rows.map((r) => r.speed_kmh)).toEqual([0, 0]);
    }, 20_000);

    const resume = (await queue(account.id, device.id, 'engine_resume')).command;
    await eventually(() => statusOf(resume.id), (c) => expect(c.status).toBe('acknowledged'));
    await eventually(() => latest(device.id, 1), (rows) => {
      expect(rows[0]!.attributes.out1).toBe(false);
      expect(rows[0]!.speed_kmh).toBeGreaterThan(0);
    }, 20_000);
  }, 60_000);

  it('(GT06) answers Relay,1# in its firmware\'s words and reports the cut in its status byte', async () => {
    const { account, device } = await cutEngine(gt06Dialect, 72, 'Cut off the fuel supply: Success!');
    await eventually(() => latest(device.id, 1), (rows) => expect(rows[0]!.attributes).toMatchObject({ blocked: true }), 20_000);
    // A command the connection's protocol cannot carry (accepted while the vehicle was on record with
    // another) fails with the reason instead of blocking the ones behind it.
    const siren = (await queueCommand(database.db, { accountId: account.id, deviceId: device.id, apiKeyId: null, userId: null, type: 'siren_on', params: {}, text: null, idempotencyKey: null, expiresAt: new Date(Date.now() + 60_000) })).command;
    const resume = (await queue(account.id, device.id, 'engine_resume')).command;
    const failed = await eventually(
      () => sql<{ status: string; status_reason: string }>`SELECT status, status_reason FROM commands WHERE id = ${siren.id}`.execute(database.db),
      ({ rows }) => expect(rows[0]!.status).toBe('failed'),
    );
    expect(failed.rows[0]!.status_reason).toBe('the tracker connected over gt06: the gt06 protocol cannot express siren_on (it can: engine_stop, engine_resume, custom)');
    await eventually(() => statusOf(resume.id), (c) => expect(c).toEqual({ status: 'acknowledged', response: 'Restore fuel supply: Success!' }));
  }, 60_000);
});

describe('a tracker registered without a protocol', () => {
  it('is on record with the protocol it connects with', async () => {
    const make = fixtures(database.db);
    const account = await make.account();
    const device = await make.device(account.id);
    expect(device.protocol).toBeNull();
    const ingest = await startTestIngest(database, { protocol: 'gt06', commands: delivery });
    const trackers = startFleetSimulation({
      imeis: [device.imei], dialect: gt06Dialect, server: { host: '127.0.0.1', port: ingest.port }, intervalMs: 1_000, seed: 73, stops: [], center: { latitude: 19.43, longitude: -99.13 },
    });
    running.push({ ingest, trackers });
    await eventually(() => database.db.selectFrom('devices').select('protocol').where('id', '=', device.id).executeTakeFirstOrThrow(), (r) => expect(r.protocol).toBe('gt06'));
  }, 60_000);
});
