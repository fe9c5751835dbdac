import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { commandSerial } from '../domain/commands/command-catalog.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { jt808Authentication, jt808Frame, jt808LocationBody, jt808Locations, jt808Registration, jt808TerminalResponse, terminalBcd } from '../simulators/jt808-packets.ts';
import { CANVAS_JPEG } from './support/canvas-jpeg.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { servedApi } from './support/served-api.ts';

/**
 * JT/T 808 end to end: one `fleet serve` with the JT808 port, a terminal on a real socket (its
 * messages from simulators/jt808-packets.ts), and the API over HTTP. Every byte the platform writes
 * is compared with a frame this file builds from the standard itself (header, XOR checksum, 0x7e
 * escapes), never with the decoder's own encoder, so a mistake there cannot agree with itself.
 * The command sweep is off (an hour): every delivery is pushed by the queueing or by the fix that
 * makes a stop safe.
 */

let fresh: FreshDatabase;
let server: Serving;
let key: string;
let port: number;
let device: Device;
/** A terminal that identifies with its SIM's phone number (013912345678): the 2013 header, 6 BCD bytes. */
let phone: Device;
const open: RawTracker[] = [];

const api = servedApi(() => server.url, () => key);
const imei = () => device.imei;

const FLAG = 0x7e;
const ESCAPE = 0x7d;
const VERSION_2019 = 0x4000;
const SUBPACKAGE = 0x2000;

/**
 * A JT/T 808 frame of terminal `number`: id, properties (body length, version flag, subpackage flag),
 * [2019: version 1], the number in BCD (a 15-digit IMEI needs the 2019 header's 10 bytes, a phone
 * number fits the 2013 header's 6), serial, [total and index], body, XOR of all that, each 0x7e / 0x7d
 * inside sent as 7d 02 / 7d 01, between two 0x7e.
 */
function frame(number: string, id: number, serial: number, body: Uint8Array, packet?: { total: number; index: number }): Buffer {
  const v2019 = number.length > 12;
  const terminal = Buffer.from(number.padStart(v2019 ? 20 : 12, '0'), 'hex');
  const head = Buffer.alloc(2 + 2 + (v2019 ? 1 : 0) + terminal.length + 2 + (packet ? 4 : 0));
  head.writeUInt16BE(id, 0);
  head.writeUInt16BE(body.length | (v2019 ? VERSION_2019 : 0) | (packet ? SUBPACKAGE : 0), 2);
  let at = 4;
  if (v2019) head[at++] = 1;
  at += terminal.copy(head, at);
  at = head.writeUInt16BE(serial, at);
  if (packet) head.writeUInt16BE(packet.index, head.writeUInt16BE(packet.total, at));
  const message = Buffer.concat([head, body, Buffer.alloc(1)]);
  message[message.length - 1] = message.subarray(0, -1).reduce((x, b) => x ^ b, 0);
  const wire: number[] = [FLAG];
  for (const b of message) wire.push(...(b === FLAG ? [ESCAPE, 0x02] : b === ESCAPE ? [ESCAPE, 0x01] : [b]));
  wire.push(FLAG);
  return Buffer.from(wire);
}

const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const u32 = (n: number) => [...u16(n >>> 16), ...u16(n & 0xffff)];

/**
 * The platform's side of one connection: its own messages are numbered from 0 (JT/T 808 numbers
 * each side's messages on its own), and a command carries its own serial instead.
 */
function platform(number = imei()) {
  let serial = 0;
  return {
    /** 0x8001 general response: the terminal message's serial and id, result 0 (success). */
    ok: (answered: { serial: number; id: number }) => frame(number, 0x8001, serial++, Uint8Array.of(...u16(answered.serial), ...u16(answered.id), 0)),
    /** 0x8100 registration answer: the registration's serial, result 0, the authentication code. */
    registered: (registration: number, code: string) => frame(number, 0x8100, serial++, Buffer.concat([Buffer.from([...u16(registration), 0]), Buffer.from(code, 'ascii')])),
    /** 0x8800 multimedia upload answer: the media id, the count and indexes of the packets to send again (none: complete). */
    uploaded: (mediaId: number, missing: number[] = []) => frame(number, 0x8800, serial++, Uint8Array.of(...u32(mediaId), missing.length, ...missing.flatMap(u16))),
  };
}

const connect = async () => {
  const t = await rawTracker(port);
  open.push(t);
  return t;
};
/** Exactly `expected` comes back, and nothing before it. */
const replies = async (t: RawTracker, expected: Uint8Array) => {
  const got = await t.read(expected.length);
  expect(got.toString('hex')).toBe(Buffer.from(expected).toString('hex'));
};
const silent = async (t: RawTracker) => expect((await t.read(1, 1_000)).toString('hex')).toBe('');

/** Whole seconds, `secondsAgo` before now: terminals stamp their fixes to the second. */
const now = (secondsAgo = 0) => new Date(Math.floor(Date.now() / 1000) * 1000 - secondsAgo * 1000);
/** `at` as the terminal's BCD `yymmddhhmmss` in Beijing time (GMT+8), written out digit by digit. */
function beijingBcd(at: Date): string {
  const t = new Date(at.getTime() + 8 * 3_600_000);
  const two = (n: number) => String(n).padStart(2, '0');
  return [t.getUTCFullYear() % 100, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()].map(two).join('');
}

const status = async () => {
  const res = await api(`/devices/${imei()}/status`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};
const history = async () => {
  const res = await api(`/vehicles/${imei()}/positions`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Array<{ fixTime: string; lat: number; lng: number; speedKmh: number | null; heading: number | null; altitude: number | null; satellites: number | null; valid: boolean; attributes: Record<string, unknown> }>;
};
const fixAt = async (at: Date) => {
  const fix = (await history()).find((p) => Date.parse(p.fixTime) === at.getTime());
  expect(fix, `no stored fix at ${at.toISOString()}`).toBeDefined();
  return fix!;
};
const queue = async (body: Record<string, unknown>) => {
  const res = await api('/commands', { method: 'POST', body: { deviceId: imei(), ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data as { id: string; status: string };
};
const command = async (id: string) => (await api(`/commands/${id}`)).body.data;
const settled = (id: string, state: string) => eventually(() => command(id), (c) => expect(c.status).toBe(state));

/** A 0x0200 of a parked, positioned vehicle at `at`, acknowledged once stored. */
async function parkedFix(t: RawTracker, side: ReturnType<typeof platform>, serial: number, at: Date) {
  t.send(jt808Frame(0x0200, terminalBcd(imei()), serial, jt808LocationBody({ time: at, latitude: 22.543096, longitude: 114.057865, speedKmh: 0, heading: 0, satellites: 9, ignition: false })));
  await replies(t, side.ok({ serial, id: 0x0200 }));
}

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*', 'commands:write', 'commands:custom'] })).key;
  device = await make.device(account.id, { userIds: [user.id], protocol: 'jt808', name: 'JT808 van' });
  phone = await make.device(account.id, { userIds: [user.id], protocol: 'jt808', name: 'JT808 2013 truck', imei: '13912345678' });
  await setup.close();
  port = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', COMMAND_SWEEP_S: '3600', JT808_PORT: String(port),
    // History is polled where a fix has no other moment to read it at: more reads than one key's default window allows.
    RATE_LIMIT_MAX: '10000', OVERVIEW_RATE_LIMIT_MAX: '10000',
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.end();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe('JT/T 808', () => {
  it('answers registration with 0x8100 and a code, authentication with that code and the heartbeat with 0x8001', async () => {
    const t = await connect();
    const side = platform();
    t.send(jt808Registration(imei(), 1));
    // The platform knows terminals by their number, so the code it hands out is that number.
    await replies(t, side.registered(1, imei()));
    t.send(jt808Authentication(imei(), Buffer.from(imei(), 'ascii'), 2));
    await replies(t, side.ok({ serial: 2, id: 0x0102 }));
    t.send(jt808Frame(0x0002, terminalBcd(imei()), 3, new Uint8Array()));
    await replies(t, side.ok({ serial: 3, id: 0x0002 }));
    // A serial that needs escaping (0x7e7d) is echoed, escaped again, in the answer.
    t.send(jt808Frame(0x0002, terminalBcd(imei()), 0x7e7d, new Uint8Array()));
    await replies(t, side.ok({ serial: 0x7e7d, id: 0x0002 }));
    t.end();
  });

  it('stores a 0x0200 with its Beijing time as UTC, its signal and its SOS flag, and acknowledges it after the commit', async () => {
    const t = await connect();
    const side = platform();
    const at = now(120);
    // The simulator's items (0x01 mileage, 0x30 signal, 0x31 satellites) and 0x02 fuel 50.0 L, 0x03 speed 30.0 km/h: 20 bytes
    // of items, as long as the fixed trailer some trackers send instead, and still read as items.
    const body = Buffer.concat([
      jt808LocationBody({ time: at, latitude: -33.868820, longitude: 151.209296, altitude: 58, speedKmh: 72.4, heading: 187, satellites: 11, ignition: true, odometer: 123_456_700 }),
      Buffer.from('020201f4' + '0302012c', 'hex'),
    ]);
    expect(body.length).toBe(28 + 20);
    body.writeUInt32BE(0x00000001, 0); // alarm flags: bit 0, the emergency (SOS) button
    // What the terminal sends is Beijing time: 8 hours ahead of the UTC the API must show.
    expect(body.subarray(22, 28).toString('hex')).toBe(beijingBcd(at));
    t.send(jt808Frame(0x0200, terminalBcd(imei()), 7, body));
    await replies(t, side.ok({ serial: 7, id: 0x0200 }));

    // The answer comes after the commit: the fix is there at once.
    const fix = await fixAt(at);
    expect(fix).toMatchObject({ valid: true, lat: -33.86882, lng: 151.209296, altitude: 58, speedKmh: 72.4, heading: 187, satellites: 11 });
    expect(fix.attributes).toMatchObject({ rssi: 23, sat: 11, ignition: true, odometer: 123_456_700, fuel: 50, obdSpeed: 30, alarm: 'sos' });
    const s = await status();
    expect(s).toMatchObject({ latitude: -33.86882, longitude: 151.209296, speedKmh: 72, heading: 187, satellites: 11, signalStrength: 23, engineStatus: 'On', status: 'Moving' });
    expect(Date.parse(s.lastReportUtc)).toBeGreaterThanOrEqual(at.getTime());

    const panics = await eventually(() => api(`/events?types=vehicle.panic&deviceIds=${imei()}`), (r) => expect(r.body.data.length).toBeGreaterThan(0));
    expect(panics.body.data).toHaveLength(1);
    expect(panics.body.data[0]).toMatchObject({ type: 'vehicle.panic', timestamp: at.toISOString(), data: { alarm: 'sos' } });
    expect(panics.body.data[0].data.position).toMatchObject({ lat: -33.86882, lng: 151.209296 });
    t.end();
  });

  it('sends engine_stop after a parked fix as 0x8105 with command word 0xF0, and the 0x0001 answer acknowledges it', async () => {
    const t = await connect();
    const side = platform();
    await parkedFix(t, side, 20, now(1));
    const queued = await queue({ type: 'engine_stop' });
    // Numbered with the command's own serial (its id, modulo the 16 bits the field holds), not the connection's.
    const serial = commandSerial(queued.id) & 0xffff;
    await replies(t, frame(imei(), 0x8105, serial, Uint8Array.of(0xf0)));
    await settled(queued.id, 'sent');

    // A general response naming another serial settles nothing.
    t.send(jt808TerminalResponse(imei(), { serial: (serial + 1) & 0xffff, id: 0x8105 }, 0, 21));
    await new Promise((r) => setTimeout(r, 300));
    expect((await command(queued.id)).status).toBe('sent');
    t.send(jt808TerminalResponse(imei(), { serial, id: 0x8105 }, 0, 22));
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: 'success', error: null, acknowledgedAt: expect.any(String) });
    await silent(t); // the platform does not answer a general response
    const events = await api(`/events?types=command.*&deviceIds=${imei()}&order=asc`);
    expect(events.body.data.filter((e: any) => e.data.command.id === queued.id).map((e: any) => e.type)).toEqual(['command.sent', 'command.acknowledged']);
    t.end();
  });

  it('takes a photo: 0x8801, the picture in three 0x0801 packets each answered, then 0x8800, stored byte for byte', async () => {
    const t = await connect();
    const side = platform();
    const shotAt = now(2);
    await parkedFix(t, side, 30, now(3));
    const queued = await queue({ type: 'take_photo' });
    const serial = commandSerial(queued.id) & 0xffff;
    // Channel 1, one picture, no interval, upload at once, 640×480 (2), quality 5, brightness 128, contrast 64, saturation 64, hue 128.
    await replies(t, frame(imei(), 0x8801, serial, Uint8Array.of(1, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 5, 128, 64, 64, 128)));
    await settled(queued.id, 'sent');
    // The camera's "started" answer leaves the command waiting for its picture.
    t.send(jt808TerminalResponse(imei(), { serial, id: 0x8801 }, 0, 31));
    await new Promise((r) => setTimeout(r, 300));
    expect((await command(queued.id)).status).toBe('sent');

    // Media id 0x7e00017d: its bytes need escaping, in the upload and in the platform's answer.
    const mediaId = 0x7e00017d;
    // Multimedia header: id, type 0 (image), format 0 (JPEG), event 0 (a platform command), channel 1, the 28-byte location.
    const location = jt808LocationBody({ time: shotAt, latitude: 22.543096, longitude: 114.057865, speedKmh: 0, heading: 0, satellites: 9, ignition: false }).subarray(0, 28);
    const header = Buffer.concat([Buffer.from([...u32(mediaId), 0, 0, 0, 1]), location]);
    const pieces = [CANVAS_JPEG.subarray(0, 400), CANVAS_JPEG.subarray(400, 800), CANVAS_JPEG.subarray(800)];
    for (const [i, piece] of pieces.entries()) {
      const packet = { total: pieces.length, index: i + 1 };
      const packetSerial = 40 + i;
      t.send(frame(imei(), 0x0801, packetSerial, i === 0 ? Buffer.concat([header, piece]) : piece, packet));
      await replies(t, side.ok({ serial: packetSerial, id: 0x0801 }));
    }
    await replies(t, side.uploaded(mediaId));

    const done = await settled(queued.id, 'acknowledged');
    const stored = /^media (\d+)$/.exec(done.response)?.[1];
    expect(stored, done.response).toBeDefined();
    const list = await api(`/media?vehicleId=${imei()}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([{
      id: stored, vehicleId: imei(), takenAt: shotAt.toISOString(), receivedAt: expect.any(String), contentType: 'image/jpeg', size: CANVAS_JPEG.length,
      fileName: `${mediaId}-ch1-ev0.jpg`, sha256: createHash('sha256').update(CANVAS_JPEG).digest('hex'), protocol: 'jt808', commandId: queued.id,
      url: `/api/v1/media/${stored}`,
    }]);
    const res = await fetch(`${server.url}/api/v1/media/${stored}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await res.arrayBuffer()).equals(CANVAS_JPEG)).toBe(true);
    const events = await api(`/events?types=vehicle.media,command.*&deviceIds=${imei()}&order=asc`);
    expect(events.body.data.filter((e: any) => e.type === 'vehicle.media' || e.data.command?.id === queued.id).map((e: any) => e.type))
      .toEqual(['command.sent', 'vehicle.media', 'command.acknowledged']);
    t.end();
  });

  it('serves a 2013 terminal known by its phone number: 6-byte header answers, a 0x0704 batch, engine_resume refused by 0x0001', async () => {
    const number = phone.imei;
    const t = await connect();
    const side = platform(number);
    t.send(jt808Registration(number, 1));
    // The number's leading zero pads the BCD; the code is the number the terminal is known by.
    await replies(t, side.registered(1, number));
    const [first, second] = [now(50), now(40)];
    const fix = (time: Date, speedKmh: number) => ({ time, latitude: 39.908722, longitude: 116.397499, speedKmh, heading: 270, satellites: 6, ignition: true });
    t.send(jt808Locations(number, [fix(first, 12.3), fix(second, 0)], 2));
    await replies(t, side.ok({ serial: 2, id: 0x0704 }));
    const fixes = await eventually(async () => (await api(`/vehicles/${number}/positions`)).body.data as Array<{ fixTime: string; speedKmh: number }>, (all) => expect(all).toHaveLength(2));
    // Times come in the key's user's timezone: compared as instants.
    expect(fixes.map((p) => [Date.parse(p.fixTime), p.speedKmh]).sort()).toEqual([[first.getTime(), 12.3], [second.getTime(), 0]]);

    const res = await api('/commands', { method: 'POST', body: { deviceId: number, type: 'engine_resume' } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.data.id as string;
    const serial = commandSerial(id) & 0xffff;
    await replies(t, frame(number, 0x8105, serial, Uint8Array.of(0xf1)));
    await settled(id, 'sent');
    t.send(jt808TerminalResponse(number, { serial, id: 0x8105 }, 3, 3));
    expect(await settled(id, 'failed')).toMatchObject({ response: 'not supported', error: 'the tracker refused the command (see response)' });
    t.end();
  });

  it('asks again with 0x8800 for a picture packet that never came, and stores the picture once the terminal resends it', async () => {
    const number = phone.imei;
    const t = await connect();
    const side = platform(number);
    const shotAt = now(5);
    // A picture the terminal took on its own (event 1, a timed shot) on camera 2: no command awaits it.
    const mediaId = 0x00000102;
    const location = jt808LocationBody({ time: shotAt, latitude: 39.908722, longitude: 116.397499, speedKmh: 0, heading: 0, satellites: 6, ignition: false }).subarray(0, 28);
    const header = Buffer.concat([Buffer.from([...u32(mediaId), 0, 0, 1, 2]), location]);
    const pieces = [CANVAS_JPEG.subarray(0, 500), CANVAS_JPEG.subarray(500, 700), CANVAS_JPEG.subarray(700)];
    const send = (index: number, serial: number) =>
      t.send(frame(number, 0x0801, serial, index === 1 ? Buffer.concat([header, pieces[0]!]) : pieces[index - 1]!, { total: 3, index }));
    send(1, 60);
    await replies(t, side.ok({ serial: 60, id: 0x0801 }));
    send(3, 62); // packet 2 lost on the way
    await replies(t, side.ok({ serial: 62, id: 0x0801 }));
    await replies(t, side.uploaded(mediaId, [2]));
    expect((await api(`/media?vehicleId=${number}`)).body.data).toEqual([]);

    send(2, 63);
    await replies(t, side.ok({ serial: 63, id: 0x0801 }));
    await replies(t, side.uploaded(mediaId));
    const list = await api(`/media?vehicleId=${number}`);
    expect(list.body.data).toEqual([expect.objectContaining({ takenAt: shotAt.toISOString(), size: CANVAS_JPEG.length, fileName: `${mediaId}-ch2-ev1.jpg`, protocol: 'jt808', commandId: null })]);
    const res = await fetch(`${server.url}${list.body.data[0].url}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(Buffer.from(await res.arrayBuffer()).equals(CANVAS_JPEG)).toBe(true);
    t.end();
  });
});
