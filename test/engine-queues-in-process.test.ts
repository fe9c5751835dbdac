import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceSignals } from '../engine/device-signals.ts';
import { EngineQueues, queueIndexOf } from '../engine/engine-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import type { Job, QueueBackend } from '../engine/queue/job-queue.ts';
import { startEngine, type RunningEngine } from '../engine/start-engine.ts';
import { startIngest, type RunningIngest } from '../ingest/start-ingest.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { ENGINE_TEST_SETTINGS } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { freePort } from './support/fleet-process.ts';
import { driveThrough } from './support/scripted-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The embedded default's in-process queues with ENGINE_QUEUES at 1 and at 3: ingest and the engine
// wired as `fleet serve` wires them, three trackers through a depot, each device's enter and exit.

const DEPOT = { lat: 19.4, lng: -99.1 };

let database: TestDatabase;
let make: ReturnType<typeof fixtures>;
let account: { id: number };

beforeAll(async () => {
  database = await openTestDatabase();
  make = fixtures(database.db);
  account = (await make.tenant()).account;
  await make.geofence(account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
}, 60_000);
afterAll(() => database?.destroy());

describe.each([1, 3])('the engine over %i in-process queue(s)', (count) => {
  let backend: QueueBackend;
  let engine: RunningEngine;
  let ingest: RunningIngest;
  let signals: DeviceSignals;
  /** The queues ingest's signals went to. */
  const signalled = new Set<string>();

  afterAll(async () => {
    await ingest?.close();
    await signals?.close();
    await engine?.close();
    await backend?.close();
  });

  it('turns each device\'s fixes into its events', async () => {
    backend = inProcessQueues();
    const queues = new EngineQueues(backend, count);
    // Noted on the way in: a worker of the test's own on a queue would take jobs from the engine's.
    for (const q of queues.all) {
      const add = q.add.bind(q);
      q.add = async (name, data, options) => {
        if (name === 'devices') signalled.add(q.name);
        return add(name, data, options);
      };
    }
    engine = await startEngine(database, backend, silentLogger, { ...ENGINE_TEST_SETTINGS, queues: count });
    signals = new DeviceSignals(queues, (error) => { throw error; });
    const port = await freePort();
    ingest = await startIngest(database, silentLogger, {
      host: '127.0.0.1', ports: { teltonika: port }, osmandPort: 0,
      limits: { idleTimeoutMs: 60_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 2,
      onDevicesUpdated: (ids) => signals.add(ids),
    });

    const devices = [];
    for (let i = 0; i < 3; i++) {
      const imei = `35630704245${count}${String(i).padStart(3, '0')}`;
      devices.push({ id: (await make.device(account.id, { imei, protocol: 'teltonika' })).id, imei });
    }
    expect(new Set(devices.map((d) => queueIndexOf(d.id, count))).size).toBe(count);
    for (const device of devices) {
      await driveThrough(port, device.imei, DEPOT);
    }
    const ids = devices.map((d) => d.id);
    await eventually(
      async () => {
        const rows = await database.db.selectFrom('events').select(['device_id', 'type']).where('device_id', 'in', ids).where('type', 'like', 'vehicle.geofence.%').orderBy('occurred_at').orderBy('id').execute();
        return Object.fromEntries(ids.map((id) => [id, rows.filter((r) => r.device_id === id).map((r) => r.type)]));
      },
      (events) => expect(events).toEqual(Object.fromEntries(ids.map((id) => [id, ['vehicle.geofence.enter', 'vehicle.geofence.exit']]))),
      20_000,
    );
    expect([...signalled].sort()).toEqual(queues.all.map((q) => q.name).sort());
  }, 60_000);
});
