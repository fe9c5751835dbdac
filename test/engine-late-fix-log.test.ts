import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { ENGINE_QUEUE } from '../engine/engine-jobs.ts';
import { startEngine, type RunningEngine } from '../engine/start-engine.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { createLogger } from '../runtime/logger.ts';
import { ENGINE_TEST_SETTINGS, testQueues } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * A tracker that unloads its buffer after its live fixes went in sends late fixes batch after batch:
 * the engine counts them per device and says so, but one info line per device per hour is enough.
 */

let database: TestDatabase;
let queues: QueueBackend;
let engine: RunningEngine;
let write: BatchWrite;
let accountId: number;
const lines: Array<{ level: string; msg: string; [field: string]: unknown }> = [];

beforeAll(async () => {
  database = await openTestDatabase();
  write = fixBatchWriter(database);
  accountId = (await fixtures(database.db).account()).id;
  queues = testQueues().backend;
  const log = createLogger('debug', (line) => void lines.push(JSON.parse(line)));
  engine = await startEngine(database, queues, log, ENGINE_TEST_SETTINGS);
});
afterAll(async () => {
  await engine?.close();
  await queues?.close();
  await database?.destroy();
});

const T0 = Date.parse('2024-07-01T10:00:00Z');
const fix = (deviceId: number, minute: number): StoredFix => ({
  deviceId, fixTime: new Date(T0 + minute * 60_000), receivedAt: new Date(), valid: true, latitude: 19.5, longitude: -99.3, speedKmh: 30, attributes: {},
});

async function evaluated(deviceId: number, check: (s: { cursor: Date | null; late: number }) => boolean): Promise<void> {
  await queues.queue(ENGINE_QUEUE).add('devices', { deviceIds: [deviceId] });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await database.db.selectFrom('device_engine_states').select(['cursor_fix_time', 'late_fixes']).where('device_id', '=', deviceId).executeTakeFirst();
    if (s && check({ cursor: s.cursor_fix_time, late: Number(s.late_fixes) })) return;
    if (Date.now() > deadline) throw new Error(`device ${deviceId} not evaluated in time`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const lateLines = (level: string) => lines.filter((l) => l.level === level && l.msg.startsWith('late fixes'));

describe('the late-fix log', () => {
  it('says at info level once per device per hour, and only in debug after that', async () => {
    const make = fixtures(database.db);
    const [a, b] = [await make.device(accountId), await make.device(accountId)];
    for (const device of [a, b]) {
      await write([10, 20].map((m) => fix(device.id, m)), []);
      await evaluated(device.id, (s) => s.cursor?.getTime() === T0 + 20 * 60_000);
    }
    // Device a's buffer arrives in three batches, each after the engine evaluated the one before.
    for (const [i, minute] of [3, 4, 5].entries()) {
      await write([fix(a.id, minute)], []);
      await evaluated(a.id, (s) => s.late === i + 1);
    }
    expect(lateLines('info')).toHaveLength(1);
    expect(lateLines('info')[0]).toMatchObject({ evaluated: 1, ignored: 0, devices: [{ deviceId: a.id, evaluated: 1, ignored: 0 }] });
    expect(lateLines('debug')).toHaveLength(2);
    // Another device's first late fix is news.
    await write([fix(b.id, 7)], []);
    await evaluated(b.id, (s) => s.late === 1);
    expect(lateLines('info')).toHaveLength(2);
    expect(lateLines('info')[1]).toMatchObject({ devices: [{ deviceId: b.id, evaluated: 1, ignored: 0 }] });
  });
});
