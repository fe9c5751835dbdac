import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixBatchWriter, type BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { insertDeadLetters, listDeadLetters } from '../db/dead-letters.ts';
import { insertFixesSkippingStored } from '../db/position-batches.ts';
import { copyFixBatch } from '../db/position-copy.ts';
import { GroupCommitWriter } from '../ingest/group-commit.ts';
import { fixtures } from '../simulators/fleet-records.ts';
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
    expect(state.fix_time!.toISOString()).toBe('2024-05-01T10:00:20.000Z');
  });

  it('keeps NULL for numbers a device sent as NaN or as a fraction where a count belongs', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-01T10:00:00Z', { altitude: Number.NaN, satellites: 7.5, signalStrength: 2.5 })], []);
    expect(await stored(device.id)).toMatchObject([{ altitude: null, satellites: null }]);
  });

  it('keeps a row the database still rejects as a dead letter and acknowledges its submitter; the others in its batch are stored', async () => {
    const [good, bad] = [await fixtures(database.db).device(accountId), await fixtures(database.db).device(accountId)];
    const writer = new GroupCommitWriter(write, (letters) => insertDeadLetters(database.db, letters), { committed: () => undefined }, {
      maxBatch: 1000, maxDelayMs: 20, maxInFlight: 1, maxWaitingRows: 1000, maxWaitingBytes: 1 << 20,
    });
    const outcomes = await Promise.allSettled([
      writer.submit({ fixes: [fix(good.id, '2024-05-01T10:00:00Z')] }),
      // past the CHECK on latitude; ingest never sends such a row, a new constraint could refuse another
      writer.submit({ fixes: [fix(bad.id, '2024-05-01T10:00:00Z', { latitude: 95 }), fix(bad.id, '2024-05-01T10:00:05Z')], protocol: 'teltonika', frame: Uint8Array.of(1, 2) }),
      writer.submit({ fixes: [fix(good.id, '2024-05-01T10:00:10Z')] }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(await stored(good.id)).toHaveLength(2);
    // The bad submitter's other row is stored; the refused one waits as a dead letter.
    expect((await stored(bad.id)).map((r) => r.fix_time.toISOString())).toEqual(['2024-05-01T10:00:05.000Z']);
    const letters = await listDeadLetters(database.db, { limit: 10 });
    const letter = letters.find((l) => l.deviceId === bad.id)!;
    expect(letter).toMatchObject({ protocol: 'teltonika', frameHex: '0102', sqlstate: '23514', replayedAt: null });
    expect(letter.record).toMatchObject({ kind: 'fix', fix: { latitude: 95, fixTime: new Date('2024-05-01T10:00:00Z') } });
  });

  it('lists a fix older than its device\'s newest stored one as late, once; not an in-order fix, nor a resent one', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-01T10:00:00Z'), fix(device.id, '2024-05-01T10:00:10Z')], []);
    await write([fix(device.id, '2024-05-01T10:00:20Z')], []); // in order
    await write([fix(device.id, '2024-05-01T10:00:10Z')], []); // resent: already stored, already evaluated
    await write([fix(device.id, '2024-05-01T10:00:05Z'), fix(device.id, '2024-05-01T10:00:30Z')], []); // one late, one new
    await write([fix(device.id, '2024-05-01T10:00:05Z')], []); // the late one resent
    expect(await lateFixes(device.id)).toEqual(['2024-05-01T10:00:05.000Z']);
  });

  it('keeps the last known backup voltage, signal and network type when a newer fix does not report them', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-01T10:00:00Z', { backupVoltage: 4.1, signalStrength: 23, connectionType: '4G' })], []);
    await write([fix(device.id, '2024-05-01T10:00:10Z')], []);
    expect(await latestState(device.id)).toMatchObject({ backup_voltage: 4.1, signal_strength: 23, connection_type: '4G' });
    await write([fix(device.id, '2024-05-01T10:00:20Z', { signalStrength: 8, connectionType: '2G' })], []);
    expect(await latestState(device.id)).toMatchObject({ backup_voltage: 4.1, signal_strength: 8, connection_type: '2G' });
  });

  it('keeps telemetry without a fix: the latest state takes its battery, signal and attributes, and the report is kept', async () => {
    const device = await fixtures(database.db).device(accountId);
    const at = new Date('2024-05-01T10:05:00Z');
    const radio = { signalStrength: 21, connectionType: '4G' };
    await write([], [{ deviceId: device.id, receivedAt: at, time: at, ...radio, attributes: { alarm: 'sos', battery: 4.05, rssi: 4 } }]);
    let state = await latestState(device.id);
    // A device that never had a fix still shows its report time and telemetry.
    expect(state).toMatchObject({ fix_time: null, latitude: null, backup_voltage: 4.05, signal_strength: 21, connection_type: '4G', attributes: { alarm: 'sos' } });
    expect(state.last_report_at!.toISOString()).toBe(at.toISOString());

    await write([fix(device.id, '2024-05-01T10:10:00Z', { receivedAt: new Date('2024-05-01T10:10:00Z'), backupVoltage: 3.9, attributes: { io1: 1 } })], []);
    // A report older than the newest fix moves the report time but not the telemetry.
    const late = new Date('2024-05-01T10:11:00Z');
    await write([], [{ deviceId: device.id, receivedAt: late, time: new Date('2024-05-01T10:09:00Z'), attributes: { battery: 3.1 } }]);
    state = await latestState(device.id);
    expect(state).toMatchObject({ backup_voltage: 3.9, attributes: { io1: 1 } });
    expect(state.last_report_at!.toISOString()).toBe(late.toISOString());
    // A plain heartbeat (no attributes) is not kept as a report row; the two that said something are.
    await write([], [{ deviceId: device.id, receivedAt: new Date('2024-05-01T10:12:00Z') }]);
    const reports = await database.db.selectFrom('device_reports').select(['report_time', 'attributes']).where('device_id', '=', device.id).orderBy('id').execute();
    expect(reports.map((r) => r.attributes)).toEqual([{ alarm: 'sos', battery: 4.05, rssi: 4 }, { battery: 3.1 }]);
  });
});

async function lateFixes(deviceId: number): Promise<string[]> {
  const rows = await database.db.selectFrom('late_fixes').select('fix_time').where('device_id', '=', deviceId).orderBy('fix_time').execute();
  return rows.map((r) => r.fix_time.toISOString());
}

async function latestState(deviceId: number) {
  return database.db.selectFrom('device_states').selectAll().where('device_id', '=', deviceId).executeTakeFirstOrThrow();
}

describe.skipIf(!process.env.DATABASE_URL)('concurrent batches of one device (PostgreSQL)', () => {
  it('the second to commit sees the first one\'s newest fix, so its older fix is listed as late', async () => {
    const device = await fixtures(database.db).device(accountId);
    await write([fix(device.id, '2024-05-02T10:00:00Z')], []);
    // A batch holding the device's newer fix is open (not committed) on its own connection…
    const first = await database.pool!.connect();
    try {
      await first.query('BEGIN');
      await first.query('SELECT device_id FROM device_states WHERE device_id = $1 FOR UPDATE', [device.id]);
      await first.query(`INSERT INTO positions (device_id, fix_time, valid, latitude, longitude) VALUES ($1, '2024-05-02T10:00:20Z', true, 19.4, -99.1)`, [device.id]);
      await first.query(`UPDATE device_states SET fix_time = '2024-05-02T10:00:20Z' WHERE device_id = $1`, [device.id]);
      // …while another batch brings an older one: it must wait, then list it as late.
      const second = write([fix(device.id, '2024-05-02T10:00:10Z')], []);
      await new Promise((r) => setTimeout(r, 200));
      await first.query('COMMIT');
      await second;
    } finally {
      first.release();
    }
    expect(await lateFixes(device.id)).toEqual(['2024-05-02T10:00:10.000Z']);
  });
});


describe.skipIf(!process.env.DATABASE_URL)('the two writers (PostgreSQL)', () => {
  it('store a fix through COPY exactly as through the INSERT, odd values included', async () => {
    const viaCopy = await fixtures(database.db).device(accountId);
    const viaInsert = await fixtures(database.db).device(accountId);
    const receivedAt = new Date('2024-05-03T10:00:01.250Z');
    const odd: Partial<StoredFix> = {
      receivedAt, altitude: Number.NaN, speedKmh: 12.5, heading: null, satellites: 2 ** 40, ignition: null, valid: false,
      attributes: { note: 'tab\tnew\nline\rback\\slash \\N', nested: { io: [1, 2] }, text: 'naïve ✓ 😀' },
    };
    // Times before PostgreSQL's epoch (2000) and far after it, in COPY's binary form.
    const times = ['2024-05-03T10:00:00.125Z', '1999-12-31T23:59:59.999Z', '1980-02-29T12:00:00.001Z', '2079-06-01T00:00:00.000Z'];
    await copyFixBatch(database.pool!, database.db, times.map((t) => fix(viaCopy.id, t, odd)), []);
    await insertFixesSkippingStored(times.map((t) => fix(viaInsert.id, t, odd))).execute(database.db);
    const rows = (deviceId: number) =>
      database.db.selectFrom('positions').selectAll().where('device_id', '=', deviceId).orderBy('fix_time').execute().then((all) => all.map(({ device_id, ...rest }) => rest));
    const copied = await rows(viaCopy.id);
    expect(copied.map((r) => r.fix_time.toISOString())).toEqual([...times].sort());
    expect(copied[0]).toMatchObject({ altitude: null, speed_kmh: 12.5, satellites: null, valid: false, server_time: receivedAt, attributes: odd.attributes });
    expect(copied).toEqual(await rows(viaInsert.id));
  });
});
