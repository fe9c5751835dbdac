import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
let listener: TestIngest;
let committed: number[][] = [];
let accountId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  listener = await startTestIngest(database, { limits: { idleTimeoutMs: 10_000, maxBufferedBytes: 256 * 1024 }, onDevicesUpdated: (ids) => committed.push(ids) });
  accountId = (await fixtures(database.db).account()).id;
});
afterAll(async () => {
  await listener?.close();
  await database?.destroy();
});

const tracker = () => rawTracker(listener.port);

const fix = (time: string, latitude: number, extra: Partial<SimulatedFix> = {}): SimulatedFix => ({
  time: new Date(time), latitude, longitude: -99.13, speedKmh: 30, heading: 90, satellites: 8, ignition: true, ...extra,
});

async function rows(deviceId: number) {
  return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions WHERE device_id = ${deviceId}`.execute(database.db)).rows[0]!.n;
}

describe('Teltonika over TCP', () => {
  it('accepts a registered IMEI, stores its records, then acknowledges them with their count', async () => {
    const device = await fixtures(database.db).device(accountId, { imei: '356307042441013' });
    const t = await tracker();
    t.send(teltonikaLogin(device.imei));
    expect((await t.read(1)).toString('hex')).toBe('01');
    t.send(teltonikaCodec8([fix('2024-05-01T14:00:00Z', 19.40, { power: 13.8, odometer: 1_234_500 }), fix('2024-05-01T14:00:10Z', 19.41)]));
    expect((await t.read(4)).toString('hex')).toBe('00000002');
    // The ACK came after the commit: the rows are already there.
    expect(await rows(device.id)).toBe(2);
    const state = await database.db.selectFrom('device_states').selectAll().where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(state).toMatchObject({ latitude: 19.41, ignition: true, speed_kmh: 30 });
    expect(state.fix_time!.toISOString()).toBe('2024-05-01T14:00:10.000Z');
    expect(committed.some((ids) => ids.includes(device.id))).toBe(true);
    t.end();
  });

  it('treats a resent packet as a no-op and keeps the latest state moving only forward', async () => {
    const device = await fixtures(database.db).device(accountId);
    const t = await tracker();
    t.send(teltonikaLogin(device.imei));
    await t.read(1);
    const packet = teltonikaCodec8([fix('2024-05-02T10:00:00Z', 20.0)]);
    t.send(packet);
    expect((await t.read(4)).toString('hex')).toBe('00000001');
    t.send(packet);
    expect((await t.read(4)).toString('hex')).toBe('00000001');
    expect(await rows(device.id)).toBe(1);
    t.send(teltonikaCodec8([fix('2024-05-02T09:00:00Z', 21.0)])); // from the device's buffer, older
    expect((await t.read(4)).toString('hex')).toBe('00000001');
    expect(await rows(device.id)).toBe(2);
    const state = await database.db.selectFrom('device_states').select(['latitude']).where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(state.latitude).toBe(20.0);
    t.end();
  });

  it('refuses an unknown IMEI with 0x00 and closes the connection', async () => {
    const t = await tracker();
    t.send(teltonikaLogin('999999999999999'));
    expect((await t.read(1)).toString('hex')).toBe('00');
    expect(await t.closedByServer()).toBe(true);
  });

  it('closes a connection that sends a corrupt packet, without touching another connection', async () => {
    const good = await fixtures(database.db).device(accountId);
    const bad = await fixtures(database.db).device(accountId);
    const a = await tracker();
    const b = await tracker();
    a.send(teltonikaLogin(good.imei));
    b.send(teltonikaLogin(bad.imei));
    await a.read(1);
    await b.read(1);
    const corrupt = Buffer.from(teltonikaCodec8([fix('2024-05-03T10:00:00Z', 22.0)]));
    corrupt[corrupt.length - 1] = corrupt[corrupt.length - 1]! ^ 0xff;
    b.send(corrupt);
    expect(await b.closedByServer()).toBe(true);
    a.send(teltonikaCodec8([fix('2024-05-03T10:00:00Z', 22.0)]));
    expect((await a.read(4)).toString('hex')).toBe('00000001');
    expect(await rows(bad.id)).toBe(0);
    a.end();
  });

  it('assembles frames that arrive a byte at a time', async () => {
    const device = await fixtures(database.db).device(accountId);
    const t = await tracker();
    const stream = Buffer.concat([teltonikaLogin(device.imei), teltonikaCodec8([fix('2024-05-04T10:00:00Z', 23.0)])]);
    for (const byte of stream) t.send(Uint8Array.of(byte));
    expect((await t.read(5)).toString('hex')).toBe('0100000001');
    t.end();
  });

  it('closes a connection whose packet header declares more than the maximum frame, before the body arrives', async () => {
    const device = await fixtures(database.db).device(accountId);
    const t = await tracker();
    t.send(teltonikaLogin(device.imei));
    await t.read(1);
    const header = Buffer.alloc(8);
    header.writeUInt32BE(100_000, 4); // 100 kB of AVL data: far past Teltonika's 64 KiB
    t.send(header);
    expect(await t.closedByServer()).toBe(true);
  });
});
