import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../db/database.ts';
import { createLogger } from '../runtime/logger.ts';
import { gt06Heartbeat, gt06Login } from '../simulators/gt06-packets.ts';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';
import { runFleet } from './support/fleet-command.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * How ingest fails, through real sockets into a real database: a record the database refuses is kept
 * aside and acknowledged, an error retrying cannot fix fails fast, the wait list is bounded, a closed or
 * superseded connection's rows leave it, and what cannot be stored is counted, never dropped in silence.
 */

let database: TestDatabase;
let accountId: number;
const running: TestIngest[] = [];
const logLines: string[] = [];
const log = createLogger('info', (line) => void logLines.push(line));

beforeAll(async () => {
  database = await openTestDatabase();
  accountId = (await fixtures(database.db).account()).id;
});
afterEach(async () => {
  for (const ingest of running.splice(0)) await ingest.close();
});
afterAll(async () => {
  await database?.destroy();
});

async function ingest(options: Parameters<typeof startTestIngest>[1] = {}): Promise<TestIngest> {
  const started = await startTestIngest(database, { log, ...options });
  running.push(started);
  return started;
}

const fix = (time: string, extra: Partial<SimulatedFix> = {}): SimulatedFix => ({
  time: new Date(time), latitude: 19.43, longitude: -99.13, speedKmh: 30, heading: 90, satellites: 8, ignition: true, ...extra,
});

async function positions(deviceId: number): Promise<string[]> {
  const rows = await database.db.selectFrom('positions').select('fix_time').where('device_id', '=', deviceId).orderBy('fix_time').execute();
  return rows.map((r) => r.fix_time.toISOString());
}

async function teltonikaTracker(port: number, imei: string): Promise<RawTracker> {
  const t = await rawTracker(port);
  t.send(teltonikaLogin(imei));
  expect((await t.read(1)).toString('hex')).toBe('01');
  return t;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Holds a transaction on one connection until released: on PostgreSQL it locks the given devices'
 * latest states (every batch locks them first); on the embedded database any open transaction makes
 * the other connections wait. Either way the batches of those devices wait: a slow database.
 */
async function slowDatabase(db: Db, deviceIds: number[]): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const done = db.connection().execute(async (connection) => {
    await sql`BEGIN`.execute(connection);
    await sql`SELECT device_id FROM device_states WHERE device_id = ANY(${deviceIds}::int[]) FOR UPDATE`.execute(connection);
    locked();
    await released;
    await sql`COMMIT`.execute(connection);
  });
  await holding;
  return {
    async release() {
      release();
      await done;
    },
  };
}

describe('a record the database refuses', () => {
  it('stores a TK103 fix whose satellite count overflows the column with satellites null, counted, and keeps the connection', async () => {
    const server = await ingest({ protocol: 'tk103' });
    const device = await fixtures(database.db).device(accountId, { imei: '864555555555555' });
    const t = await rawTracker(server.port);
    t.send('(864555555555555,DW3B,131117,A,5544.02870N,01315.08194E,1.597,223707,291.65,-0.10,99999999999)');
    await until(async () => (await positions(device.id)).length === 1);
    const row = await database.db.selectFrom('positions').select(['satellites', 'altitude']).where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ satellites: null, altitude: -0.1 });
    expect(server.counters.valuesOutOfRange).toBe(1);
    expect(t.closed).toBe(false);
    t.end();
  });

  it('keeps a record a constraint refuses as a dead letter, acknowledges it, and `fleet dead-letter` lists and replays it', async () => {
    const server = await ingest();
    const device = await fixtures(database.db).device(accountId);
    // A rule the data breaks that no range check knows of: an operator's constraint, a new column type.
    await sql`ALTER TABLE positions ADD CONSTRAINT test_no_77 CHECK (speed_kmh IS DISTINCT FROM 77)`.execute(database.db);
    try {
      const t = await teltonikaTracker(server.port, device.imei);
      t.send(teltonikaCodec8([fix('2024-06-01T10:00:00Z', { speedKmh: 77 }), fix('2024-06-01T10:00:10Z')]));
      expect((await t.read(4)).toString('hex')).toBe('00000002'); // both acknowledged: the tracker moves on
      t.send(teltonikaCodec8([fix('2024-06-01T10:00:20Z')]));
      expect((await t.read(4)).toString('hex')).toBe('00000001');
      expect(await positions(device.id)).toEqual(['2024-06-01T10:00:10.000Z', '2024-06-01T10:00:20.000Z']);
      expect(server.counters.deadLetters).toBe(1);
      t.end();

      const listed = await runFleet(['dead-letter', 'list', '--imei', device.imei, '--json'], database.env);
      expect(listed.code, listed.stderr).toBe(0);
      const [letter] = JSON.parse(listed.stdout);
      expect(letter).toMatchObject({ imei: device.imei, protocol: 'teltonika', sqlstate: '23514', replayedAt: null });
      expect(letter.record.fix).toMatchObject({ speedKmh: 77, fixTime: '2024-06-01T10:00:00.000Z' });
      expect(letter.frame).toMatch(/^00000000/);

      const refused = await runFleet(['dead-letter', 'replay', String(letter.id)], database.env);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toContain(`${letter.id} refused again`);
    } finally {
      await sql`ALTER TABLE positions DROP CONSTRAINT test_no_77`.execute(database.db);
    }
    const replayed = await runFleet(['dead-letter', 'replay', '--all', '--json'], database.env);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout).failed).toEqual([]);
    expect(await positions(device.id)).toEqual(['2024-06-01T10:00:00.000Z', '2024-06-01T10:00:10.000Z', '2024-06-01T10:00:20.000Z']);
    const after = await runFleet(['dead-letter', 'list'], database.env);
    expect(after.stdout.trim()).toBe('no dead letters');
  });
});

describe('an error retrying cannot fix', () => {
  it('fails the batch at once, logs its SQLSTATE, and closes the tracker unacknowledged; it resends once the schema is fixed', async () => {
    const server = await ingest();
    const device = await fixtures(database.db).device(accountId);
    await sql`ALTER TABLE positions RENAME COLUMN ignition TO ignition_renamed`.execute(database.db); // a bad deploy
    try {
      const t = await teltonikaTracker(server.port, device.imei);
      const started = Date.now();
      t.send(teltonikaCodec8([fix('2024-06-02T10:00:00Z')]));
      expect(await t.closedByServer(5_000)).toBe(true);
      expect(Date.now() - started).toBeLessThan(3_000); // failed fast, not retried for ever
      expect((await t.read(4, 100)).length).toBe(0); // no ACK
      expect(server.counters.failedBatches).toBe(1);
      const line = logLines.find((l) => l.includes('positions not stored and not acknowledged'));
      expect(line).toBeDefined();
      expect(JSON.parse(line!)).toMatchObject({ level: 'warn', sqlstate: '42703' });
    } finally {
      await sql`ALTER TABLE positions RENAME COLUMN ignition_renamed TO ignition`.execute(database.db);
    }
    const again = await teltonikaTracker(server.port, device.imei);
    again.send(teltonikaCodec8([fix('2024-06-02T10:00:00Z')]));
    expect((await again.read(4)).toString('hex')).toBe('00000001');
    expect(await positions(device.id)).toEqual(['2024-06-02T10:00:00.000Z']);
    again.end();
  });
});

describe('the commit wait list', () => {
  it('refuses frames unacknowledged past its cap, drops the rows of a closed connection, and stores the rest once the database is back', async () => {
    const server = await ingest({ maxWaitingRows: 3, batchDelayMs: 1 });
    const devices = await Promise.all(Array.from({ length: 6 }, () => fixtures(database.db).device(accountId)));
    const trackers = await Promise.all(devices.map((d) => teltonikaTracker(server.port, d.imei)));
    const slow = await slowDatabase(database.db, devices.map((d) => d.id));
    let released = false;
    try {
      for (const [i, t] of trackers.entries()) {
        t.send(teltonikaCodec8([fix(`2024-06-03T10:00:0${i}Z`)]));
        await new Promise((r) => setTimeout(r, 30));
      }
      // Three frames wait; the other three are refused at once: closed without an answer, counted.
      await until(() => trackers.filter((t) => t.closed).length === 3);
      expect(server.counters.refusedBusy).toBe(3);
      expect(server.writer.held.rows).toBe(3);
      const waiting = trackers.filter((t) => !t.closed);
      // A tracker that gives up while its frame waits: its row leaves the list.
      waiting[2]!.end();
      await until(() => server.writer.held.rows === 2);
      await slow.release();
      released = true;
      for (const t of waiting.slice(0, 2)) expect((await t.read(4)).toString('hex')).toBe('00000001');
      expect(server.writer.held.rows).toBe(0);
    } finally {
      if (!released) await slow.release();
      for (const t of trackers) t.end();
    }
  });

  it('holds the rows of a tracker that reconnected once: the newer connection supersedes the older', async () => {
    const server = await ingest({ batchDelayMs: 1 });
    const device = await fixtures(database.db).device(accountId);
    const first = await teltonikaTracker(server.port, device.imei);
    const packet = teltonikaCodec8([fix('2024-06-04T10:00:00Z'), fix('2024-06-04T10:00:10Z')]);
    const slow = await slowDatabase(database.db, [device.id]);
    let second: RawTracker | undefined;
    try {
      first.send(packet);
      await until(() => server.writer.held.rows === 2);
      // The tracker saw no ACK, reconnects, and sends the same records again.
      second = await teltonikaTracker(server.port, device.imei);
      expect(await first.closedByServer()).toBe(true);
      second.send(packet);
      await new Promise((r) => setTimeout(r, 100));
      expect(server.writer.held.rows).toBe(2);
      expect(server.counters.connectionsSuperseded).toBe(1);
    } finally {
      await slow.release();
    }
    expect((await second!.read(4)).toString('hex')).toBe('00000002');
    expect(await positions(device.id)).toEqual(['2024-06-04T10:00:00.000Z', '2024-06-04T10:00:10.000Z']);
    second!.end();
  });
});

describe('what cannot be stored as a fix', () => {
  it('counts a position out of range, logs it once per device, acknowledges it, and moves the report time', async () => {
    const server = await ingest();
    const device = await fixtures(database.db).device(accountId);
    const t = await teltonikaTracker(server.port, device.imei);
    const before = Date.now();
    for (const second of ['00', '10']) {
      t.send(teltonikaCodec8([fix(`2024-06-05T10:00:${second}Z`, { latitude: 95 })]));
      expect((await t.read(4)).toString('hex')).toBe('00000001');
    }
    expect(await positions(device.id)).toEqual([]);
    expect(server.counters.unstorablePositions).toBe(2);
    expect(logLines.filter((l) => l.includes('position not stored') && l.includes(device.imei))).toHaveLength(1);
    const state = await database.db.selectFrom('device_states').select(['last_report_at', 'fix_time']).where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(state.fix_time).toBeNull();
    expect(state.last_report_at!.getTime()).toBeGreaterThanOrEqual(before - 1);
    t.end();
  });

  it('takes a heartbeat\'s alarm, battery, signal and ignition into the latest state and keeps it as a report', async () => {
    const server = await ingest({ protocol: 'gt06' });
    const device = await fixtures(database.db).device(accountId, { imei: '356307042441099' });
    const t = await rawTracker(server.port);
    t.send(gt06Login(device.imei));
    await t.read(10);
    t.send(gt06Heartbeat({ ignition: true, voltageLevel: 5, gsm: 4, alarmCode: 1 }, 2));
    expect((await t.read(10)).subarray(3, 4).toString('hex')).toBe('13'); // the heartbeat's answer, after the commit
    const state = await database.db.selectFrom('device_states').select(['ignition', 'signal_strength', 'attributes', 'last_report_at']).where('device_id', '=', device.id).executeTakeFirstOrThrow();
    // GSM level 4 of Concox's 0–4 is the top of the specification's 0–31; the raw level stays as rssi.
    expect(state).toMatchObject({ ignition: true, signal_strength: 31, attributes: { alarm: 'sos', batteryLevel: 83, rssi: 4 } });
    const reports = await database.db.selectFrom('device_reports').select('attributes').where('device_id', '=', device.id).execute();
    expect(reports).toEqual([{ attributes: expect.objectContaining({ alarm: 'sos', ignition: true, rssi: 4 }) }]);
    t.end();
  });
});
