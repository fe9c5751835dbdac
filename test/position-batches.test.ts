import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../db/position-batches.ts';
import { GroupCommitWriter } from '../ingest/group-commit.ts';
import { fixtures } from './support/fixtures.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// On PostgreSQL this is the COPY writer, on the embedded database the multi-row INSERT one: same rules.
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
  deviceId, receivedAt: new Date(), fixTime: new Date(time), valid: true, latitude: 19.43, longitude: -99.13,
  altitude: 2240, speedKmh: 30, heading: 90, satellites: 8, ignition: true, attributes: {}, ...extra,
});

async function stored(deviceId: number) {
  const { rows } = await sql<{ fix_time: Date; altitude: number | null; satellites: number | null; attributes: Record<string, unknown> }>`
    SELECT fix_time, altitude, satellites, attributes FROM positions WHERE device_id = ${deviceId} ORDER BY fix_time
  `.execute(database.db);
  return rows;
}

describe(`the batch writer (${process.env.DATABASE_URL ? 'COPY on PostgreSQL' : 'INSERT on the embedded database'})`, () => {
  it('stores text attributes exactly, whatever characters they hold', async () => {
    const device = await fixtures(database.db).device(accountId);
    const attributes = { note: 'tab\there, newline\nthere, back\\slash, "quotes", \\N, ñandú ✓', io239: 1, flag: true };
    await write([fix(device.id, '2024-05-01T10:00:00Z', { attributes })], []);
    expect((await stored(device.id))[0]!.attributes).toEqual(attributes);
  });

  it('stores a batch that repeats already stored fixes once, and the new ones too', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-01T10:00:00Z'), fix(device.id, '2024-05-01T10:00:10Z')], []);
    await write([fix(device.id, '2024-05-01T10:00:10Z'), fix(device.id, '2024-05-01T10:00:20Z'), fix(device.id, '2024-05-01T10:00:20Z')], []);
    expect((await stored(device.id)).map((r) => r.fix_time.toISOString())).toEqual([
      '2024-05-01T10:00:00.000Z', '2024-05-01T10:00:10.000Z', '2024-05-01T10:00:20.000Z',
    ]);
    const state = await database.db.selectFrom('device_states').select('fix_time').where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(state.fix_time.toISOString()).toBe('2024-05-01T10:00:20.000Z');
  });

  it('keeps NULL for numbers a device sent as NaN or as a fraction where a count belongs', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-01T10:00:00Z', { altitude: Number.NaN, satellites: 7.5, signalStrength: 2.5 })], []);
    expect(await stored(device.id)).toMatchObject([{ altitude: null, satellites: null }]);
  });

  it('refuses only the submitter whose row the database rejects; the others in its batch are stored', async () => {
    const [good, bad] = [await fixtures(database.db).device(accountId), await fixtures(database.db).device(accountId)];
    const writer = new GroupCommitWriter(write, () => undefined, { maxBatch: 1000, maxDelayMs: 20, maxInFlight: 1 });
    const outcomes = await Promise.allSettled([
      writer.submit([fix(good.id, '2024-05-01T10:00:00Z')]),
      writer.submit([fix(bad.id, '2024-05-01T10:00:00Z', { latitude: 95 })]), // past the CHECK on latitude
      writer.submit([fix(good.id, '2024-05-01T10:00:10Z')]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await stored(good.id)).toHaveLength(2);
    expect(await stored(bad.id)).toHaveLength(0);
  });
});
