import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import { migrateTo } from '../db/migrator.ts';
import type { Db } from '../db/database.ts';
import { positionsAfter } from '../db/position-history.ts';
import { positionPartitions } from '../db/position-partitions.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { startEngine } from '../engine/start-engine.ts';
import { maintainPositionPartitions } from '../engine/workers/maintain-position-partitions.ts';
import { silentLogger } from '../runtime/logger.ts';
import { openEmptyDatabase } from '../db/empty-database.ts';
import { ENGINE_TEST_SETTINGS, testQueues } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestApp } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The position history partitioned by fix time (migration 0013, engine/workers/maintain-position-partitions.ts),
// on PostgreSQL (COPY writer, real concurrency) or the embedded database (INSERT writer), as DATABASE_URL says.

const DAY = 86_400_000;
const at = (iso: string) => new Date(iso);
const midnight = (ms: number) => Math.floor(ms / DAY) * DAY;
const partitionOfDay = (ms: number) => `positions_p${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;

let database: TestDatabase;
let write: BatchWrite;
let accountId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  write = fixBatchWriter(database);
  accountId = (await fixtures(database.db).account()).id;
});
afterAll(async () => {
  await database?.destroy();
});

const fix = (deviceId: number, time: string, extra: Partial<StoredFix> = {}): StoredFix => ({
  deviceId, receivedAt: new Date(), fixTime: at(time), valid: true, latitude: 19.43, longitude: -99.13,
  altitude: 2240, speedKmh: 30, heading: 90, satellites: 8, ignition: true, attributes: { odometer: 1000 }, ...extra,
});

/** Each stored fix of the device with the partition holding it, oldest first. */
async function placed(db: Db, deviceId: number): Promise<Array<{ partition: string; fixTime: string; latitude: number }>> {
  const { rows } = await sql<{ partition: string; fix_time: Date; latitude: number }>`
    SELECT tableoid::regclass::text AS partition, fix_time, latitude FROM positions WHERE device_id = ${deviceId} ORDER BY fix_time
  `.execute(db);
  return rows.map((r) => ({ partition: r.partition, fixTime: r.fix_time.toISOString(), latitude: r.latitude }));
}

const partitionNames = async (db: Db) => (await positionPartitions(db)).ranges.map((r) => r.name);

describe('migration 0013', () => {
  /** Every column of every row, as text, in key order: what the migration must not change. */
  const everyRow = async (db: Db) =>
    (await sql<{ row: string }>`
      SELECT concat_ws('|', device_id, fix_time, server_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites, ignition, attributes) AS row
      FROM positions ORDER BY device_id, fix_time`.execute(db)).rows.map((r) => r.row);

  it('keeps every row of the unpartitioned table, recent ones in daily partitions and the rest in the default one; down and up again keep them too', async () => {
    const empty = await openEmptyDatabase();
    try {
      await migrateTo(empty.db, '0012-access');
      const today = midnight(Date.now());
      const times = [
        today - 400 * DAY, // older than the year the migration makes partitions for
        today - 3 * DAY + 5_000, today - DAY + 3_600_000, today + 60_000,
        Date.UTC(1970, 0, 1, 0, 0, 5), Date.UTC(2080, 0, 1), // trackers with a lost clock
        today + 10 * DAY, // beyond the week ahead
      ];
      for (const [i, t] of times.entries()) {
        await sql`
          INSERT INTO positions (device_id, fix_time, server_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites, ignition, attributes)
          VALUES (${1 + (i % 2)}, ${new Date(t).toISOString()}::timestamptz, ${new Date(Date.UTC(2024, 4, 1) + i * 1000).toISOString()}::timestamptz, ${i % 3 !== 0},
            ${19 + i / 10}, ${-99 - i / 10}, ${i === 2 ? null : 2240.5}, ${i * 7.25}, ${i === 4 ? null : 90}, ${i === 5 ? null : 9}, ${i === 1 ? null : i % 2 === 0},
            ${JSON.stringify({ odometer: 1000 + i, note: `row ${i}`, nested: { ok: true } })}::jsonb)`.execute(empty.db);
      }
      const before = await everyRow(empty.db);
      expect(before).toHaveLength(times.length);

      await migrateTo(empty.db, '0013-positions-partitions');
      expect(await everyRow(empty.db)).toEqual(before);
      // One partition a day from the oldest row of the last year through a week ahead.
      const expected = Array.from({ length: 11 }, (_, i) => partitionOfDay(today + (i - 3) * DAY));
      expect(await partitionNames(empty.db)).toEqual(expected);
      const { rows } = await sql<{ partition: string; fix_time: Date }>`SELECT tableoid::regclass::text AS partition, fix_time FROM positions ORDER BY fix_time`.execute(empty.db);
      expect(rows.map((r) => r.partition)).toEqual([
        'positions_default', 'positions_default', partitionOfDay(today - 3 * DAY), partitionOfDay(today - DAY), partitionOfDay(today), 'positions_default', 'positions_default',
      ]);

      await migrateTo(empty.db, '0012-access');
      expect(await everyRow(empty.db)).toEqual(before);
      const kind = await sql<{ relkind: string }>`SELECT relkind FROM pg_class WHERE oid = 'positions'::regclass`.execute(empty.db);
      expect(kind.rows[0]!.relkind).toBe('r');

      await migrateTo(empty.db, '0013-positions-partitions');
      expect(await everyRow(empty.db)).toEqual(before);
    } finally {
      await empty.destroy();
    }
  }, 180_000);
});

describe('partition maintenance', () => {
  it('makes one partition a day from today through aheadDays ahead, each once, also when two engine processes run it at once', async () => {
    const now = at('2031-03-10T15:00:00Z');
    const [a, b] = await Promise.all([
      maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 3 }, now),
      maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 3 }, now),
    ]);
    const made = ['positions_p20310310', 'positions_p20310311', 'positions_p20310312', 'positions_p20310313'];
    expect([...a.created, ...b.created].sort()).toEqual(made);
    expect(await partitionNames(database.db)).toEqual(expect.arrayContaining(made));
    expect((await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 3 }, now)).created).toEqual([]);

    // A fix of one of those days is stored in its partition.
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2031-03-12T23:59:59.999Z')], []);
    expect((await placed(database.db, device.id)).map((p) => p.partition)).toEqual(['positions_p20310312']);
  });

  it('stores fixes no partition covers (a tracker in 1970 or 2080) in the default partition and reads them back', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '1970-01-01T00:00:05Z', { latitude: 1 }), fix(device.id, '2080-01-01T00:00:00Z', { latitude: 2 })], []);
    expect(await placed(database.db, device.id)).toEqual([
      { partition: 'positions_default', fixTime: '1970-01-01T00:00:05.000Z', latitude: 1 },
      { partition: 'positions_default', fixTime: '2080-01-01T00:00:00.000Z', latitude: 2 },
    ]);
    const read = await positionsAfter(database.db, { deviceId: device.id, from: at('1969-12-31T00:00:00Z'), to: at('2099-01-01T00:00:00Z') }, undefined, 10);
    expect(read.map((r) => r.fix_time.toISOString())).toEqual(['1970-01-01T00:00:05.000Z', '2080-01-01T00:00:00.000Z']);
  });

  it('moves the rows the default partition holds for a new partition into it, and a retransmit of them stays a no-op', async () => {
    const device = await fixtures(database.db).device(accountId);
    // No partition yet for these days (no engine ran): they go to the default partition.
    await write([fix(device.id, '2032-06-15T01:00:00Z', { latitude: 10 }), fix(device.id, '2032-06-16T01:00:00Z', { latitude: 11 }), fix(device.id, '2032-06-25T01:00:00Z', { latitude: 12 })], []);
    expect((await placed(database.db, device.id)).map((p) => p.partition)).toEqual(['positions_default', 'positions_default', 'positions_default']);

    const kept = await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 1 }, at('2032-06-15T08:00:00Z'));
    expect(kept.created).toEqual(['positions_p20320615', 'positions_p20320616']);
    expect(kept.movedFromDefault).toBe(2);
    expect(await placed(database.db, device.id)).toEqual([
      { partition: 'positions_p20320615', fixTime: '2032-06-15T01:00:00.000Z', latitude: 10 },
      { partition: 'positions_p20320616', fixTime: '2032-06-16T01:00:00.000Z', latitude: 11 },
      { partition: 'positions_default', fixTime: '2032-06-25T01:00:00.000Z', latitude: 12 },
    ]);

    // The tracker missed our ACK and sends them again (with a new one): the key is per partition, and
    // fix time picks the partition, so each resent fix meets its first copy and is skipped.
    await write([fix(device.id, '2032-06-15T01:00:00Z', { latitude: 20 }), fix(device.id, '2032-06-15T02:00:00Z', { latitude: 21 }), fix(device.id, '2032-06-25T01:00:00Z', { latitude: 22 })], []);
    await write([fix(device.id, '2032-06-16T01:00:00Z', { latitude: 23 })], []);
    expect(await placed(database.db, device.id)).toEqual([
      { partition: 'positions_p20320615', fixTime: '2032-06-15T01:00:00.000Z', latitude: 10 },
      { partition: 'positions_p20320615', fixTime: '2032-06-15T02:00:00.000Z', latitude: 21 },
      { partition: 'positions_p20320616', fixTime: '2032-06-16T01:00:00.000Z', latitude: 11 },
      { partition: 'positions_default', fixTime: '2032-06-25T01:00:00.000Z', latitude: 12 },
    ]);
  });

  it('makes today\'s partition and those ahead when the engine starts', async () => {
    const { backend } = testQueues();
    const engine = await startEngine(database, backend, silentLogger, { ...ENGINE_TEST_SETTINGS, positionHistory: { partitionDays: 1, aheadDays: 2 } });
    try {
      const today = midnight(Date.now());
      const { ranges } = await positionPartitions(database.db);
      for (let day = today; day < today + 3 * DAY; day += DAY) expect(ranges.some((r) => r.from <= day && day + DAY <= r.to), new Date(day).toISOString()).toBe(true);
    } finally {
      await engine.close();
      await backend.close();
    }
  });

  // These two last: their clocks are years ahead, so they drop every partition the other tests made.
  it('makes the partitions of past days within the retention that the default partition holds fixes of, and leaves older fixes there', async () => {
    const device = await fixtures(database.db).device(accountId);
    // No engine ran from 1 to 9 September: those days' fixes went to the default partition.
    await write([
      fix(device.id, '2032-09-01T10:00:00Z', { receivedAt: at('2032-09-01T10:00:01Z') }),
      fix(device.id, '2032-09-05T10:00:00Z', { receivedAt: at('2032-09-05T10:00:01Z') }),
      fix(device.id, '2032-09-05T11:00:00Z', { receivedAt: at('2032-09-05T11:00:01Z') }),
      // A tracker's buffer of July, older than the retention, sent yesterday.
      fix(device.id, '2032-07-01T10:00:00Z', { receivedAt: at('2032-09-09T00:00:00Z') }),
    ], []);
    const kept = await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 1, retentionDays: 30 }, at('2032-09-10T12:00:00Z'));
    expect(kept.created).toEqual(['positions_p20320910', 'positions_p20320911', 'positions_p20320901', 'positions_p20320905']);
    expect(kept.movedFromDefault).toBe(3);
    expect((await placed(database.db, device.id)).map((p) => `${p.partition} ${p.fixTime}`)).toEqual([
      'positions_default 2032-07-01T10:00:00.000Z',
      'positions_p20320901 2032-09-01T10:00:00.000Z',
      'positions_p20320905 2032-09-05T10:00:00.000Z',
      'positions_p20320905 2032-09-05T11:00:00.000Z',
    ]);
  });

  it('drops the partitions wholly past the retention, keeps newer ones, and deletes from the default partition the fixes that arrived before the retention', async () => {
    const device = await fixtures(database.db).device(accountId);
    await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 10 }, at('2033-05-10T00:00:00Z'));
    const days = Array.from({ length: 11 }, (_, i) => `2033-05-${String(10 + i).padStart(2, '0')}`);
    await write(days.map((d) => fix(device.id, `${d}T12:00:00Z`)), []);
    await write([
      fix(device.id, '2033-05-01T12:00:00Z', { receivedAt: at('2033-05-01T12:00:01Z') }), // before any partition, received long ago
      fix(device.id, '2080-01-01T00:00:00Z', { receivedAt: at('2033-01-01T00:00:00Z') }), // from the future, received long ago
      fix(device.id, '2081-01-01T00:00:00Z', { receivedAt: at('2033-05-20T11:00:00Z') }), // from the future, received recently
      fix(device.id, '1970-01-01T00:00:05Z', { receivedAt: at('2033-05-20T11:00:00Z') }), // from 1970, received recently
    ], []);

    const kept = await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 1, retentionDays: 5 }, at('2033-05-20T12:00:00Z'));
    // The cutoff is 15 May 12:00: the partition of the 15th holds a fix at the cutoff and stays.
    expect(kept.dropped).toEqual(expect.arrayContaining(['positions_p20330510', 'positions_p20330511', 'positions_p20330512', 'positions_p20330513', 'positions_p20330514']));
    expect(kept.dropped).not.toContain('positions_p20330515');
    expect(kept.created).toEqual(['positions_p20330521']);
    expect(kept.prunedFromDefault).toBeGreaterThanOrEqual(2);
    expect((await positionPartitions(database.db)).ranges.every((r) => r.to > Date.parse('2033-05-15T12:00:00Z'))).toBe(true);
    expect((await placed(database.db, device.id)).map((p) => `${p.partition} ${p.fixTime}`)).toEqual([
      'positions_default 1970-01-01T00:00:05.000Z',
      ...days.slice(5).map((d) => `positions_p${d.replaceAll('-', '')} ${d}T12:00:00.000Z`),
      'positions_default 2081-01-01T00:00:00.000Z',
    ]);
    expect((await maintainPositionPartitions(database.db, { partitionDays: 1, aheadDays: 1, retentionDays: 5 }, at('2033-05-20T12:00:00Z')))).toEqual({
      created: [], movedFromDefault: 0, dropped: [], prunedFromDefault: 0, busy: false,
    });
  });
});

describe('the position history API across partitions', () => {
  it('reads a range that spans two daily partitions and the default one, page by page and as CSV', async () => {
    const t = await startTestApp();
    try {
      const { account, key } = await t.fixtures.tenant('UTC');
      const device = await t.fixtures.device(account.id);
      await maintainPositionPartitions(t.database.db, { partitionDays: 1, aheadDays: 1 }, at('2034-02-01T00:00:00Z'));
      // Every 30 minutes from 1 February 20:00 to 3 February 04:00 UTC: the 3rd has no partition.
      const times = Array.from({ length: 65 }, (_, i) => new Date(Date.UTC(2034, 1, 1, 20) + i * 1_800_000).toISOString());
      await fixBatchWriter(t.database)(times.map((time, i) => fix(device.id, time, { attributes: { seq: i } })), []);
      const partitions = new Set((await placed(t.database.db, device.id)).map((p) => p.partition));
      expect([...partitions].sort()).toEqual(['positions_default', 'positions_p20340201', 'positions_p20340202']);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: any = await t.json(`/api/v1/vehicles/${device.imei}/positions?from=2034-02-01&to=2034-02-03&limit=7${cursor ? `&cursor=${cursor}` : ''}`, { key });
        expect(page.status).toBe(200);
        seen.push(...page.body.data.map((p: any) => p.fixTime));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(times.map((time) => time.replace('.000Z', '+00:00')));

      const csv = await t.call(`/api/v1/vehicles/${device.imei}/positions?from=2034-02-01&to=2034-02-03&format=csv`, { key });
      const lines = (await csv.text()).trim().split('\r\n').slice(1);
      expect(lines.map((line) => line.split(',')[0])).toEqual(times);
    } finally {
      await t.close();
    }
  });
});
