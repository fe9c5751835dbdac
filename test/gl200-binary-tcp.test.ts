import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { servedApi } from './support/served-api.ts';

/**
 * Queclink's binary reports end to end: one `fleet serve` with the GL200 port, where text and binary
 * frames share one port and one connection, a tracker on a real socket, and the API over HTTP. The
 * binary report is a real capture (ingest/conformance/corpus/traccar-protocol-samples-2.json,
 * `gl200bin`) with its 8 id bytes rewritten to the test device's IMEI (read as one decimal number) and
 * its clocks made current; every other byte is the capture's.
 */

let fresh: FreshDatabase;
let server: Serving;
let key: string;
let port: number;
let device: Device;
const open: RawTracker[] = [];

const api = servedApi(() => server.url, () => key);
const imei = () => device.imei;

/**
 * Capture: +RSP report type 7, mask 00fc1fbf, length 93, device type 0x45, protocol 0102, firmware
 * 0209, id, battery 100 %, supply 14,206 mV, motion 0x42, 7 satellites, report index, one fix
 * (accuracy 0: the last known location; no speed, heading 0, altitude 126 m, 9.068207° W 39.611009° N,
 * 2017-08-01 08:26:42, cell 268/3/189c/1ac5), then the masked fields, send time, count, checksum, \r\n.
 */
const RSP_CAPTURE = '2b5253500700fc1fbf005d4501020209563254030003430564377e42071001000000000000007eff75a151025c6a8107e10801081a2a02680003189c1ac500000000000002100700000000000000000007e1080108241019e17ebe0d0a';
/**
 * Capture: +EVT report type 45 (VGN: ignition on), the same header fields (supply 14,328 mV, motion
 * 0x22), 7 reserved bytes of the event, one fix (accuracy 0; 22.1 km/h, heading 242, 2017-08-01 08:36:26), the rest as above.
 */
const EVT_CAPTURE = '2b4556542d00fc1fbf0063450102020956325403000343056437f8220700000200000000010000160100f2007eff75a1f0025c6b1a07e1080108241a02680003189c1ac500000000000002100800000000000000000007e1080108241a19e24e4e0d0a';
/** Where each capture keeps its 8 id bytes, its fix's time and (13 bytes from the end) its send time. */
const ID_AT = 16;
const FIX_TIME_AT = { rsp: 47, evt: 53 };
const SEND_TIME_FROM_END = 13;

/** Queclink's binary time: year u16, month, day, hour, minute, second (UTC). */
function binaryTime(at: Date): Buffer {
  const out = Buffer.alloc(7);
  out.writeUInt16BE(at.getUTCFullYear(), 0);
  [at.getUTCMonth() + 1, at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()].forEach((v, i) => (out[2 + i] = v));
  return out;
}

/** A capture, re-addressed to the test device and stamped `at`, sent `sentAt`. */
function binaryReport(capture: 'rsp' | 'evt', at: Date, sentAt: Date): Buffer {
  const frame = Buffer.from(capture === 'rsp' ? RSP_CAPTURE : EVT_CAPTURE, 'hex');
  expect(frame.readUInt16BE(9)).toBe(frame.length); // the capture's own length field
  frame.writeBigUInt64BE(BigInt(imei()), ID_AT);
  binaryTime(at).copy(frame, FIX_TIME_AT[capture]);
  binaryTime(sentAt).copy(frame, frame.length - SEND_TIME_FROM_END);
  return frame;
}

/** Queclink's text clock `yyyyMMddHHmmss` (UTC). */
function textClock(at: Date): string {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * A binary heartbeat as Queclink's air interface protocol lays it out (no capture of one at hand):
 * +HBD, the +HBD mask 0xEF (every field but the device name: length, device type, protocol version,
 * firmware, send time, count, the IMEI as unique id), length, device type 0x45, protocol version 0102,
 * firmware 0209, the IMEI, send time, count, checksum, \r\n.
 */
function heartbeat(count: number, sentAt: Date): Buffer {
  const body = Buffer.concat([Buffer.from('+HBD', 'latin1'), Buffer.from([0xef, 0x00, 0x45, 0x01, 0x02, 0x02, 0x09]), Buffer.alloc(8), binaryTime(sentAt), Buffer.alloc(4), Buffer.from('\r\n', 'latin1')]);
  body[5] = body.length;
  body.writeBigUInt64BE(BigInt(imei()), 11);
  body.writeUInt16BE(count, body.length - 6);
  return body;
}

const connect = async () => {
  const t = await rawTracker(port);
  open.push(t);
  return t;
};
const silent = async (t: RawTracker) => expect((await t.read(1, 1_000)).toString('latin1')).toBe('');

/** Whole seconds, `secondsAgo` before now: trackers stamp their fixes to the second. */
const now = (secondsAgo = 0) => new Date(Math.floor(Date.now() / 1000) * 1000 - secondsAgo * 1000);

const history = async () => {
  const res = await api(`/vehicles/${imei()}/positions`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Array<{ fixTime: string; lat: number; lng: number; speedKmh: number | null; heading: number | null; altitude: number | null; satellites: number | null; valid: boolean; attributes: Record<string, unknown> }>;
};
/** The fix of `at` once stored: reports get no answer, so there is no other moment to read it at. */
const storedFix = async (at: Date) => {
  const fixes = await eventually(() => history(), (all) => expect(all.map((p) => Date.parse(p.fixTime))).toContain(at.getTime()));
  return fixes.find((p) => Date.parse(p.fixTime) === at.getTime())!;
};
const status = async () => {
  const res = await api(`/devices/${imei()}/status`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*'] })).key;
  device = await make.device(account.id, { userIds: [user.id], protocol: 'gl200', name: 'Queclink binary' });
  await setup.close();
  port = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', COMMAND_SWEEP_S: '3600', GL200_PORT: String(port),
    RATE_LIMIT_MAX: '10000', OVERVIEW_RATE_LIMIT_MAX: '10000',
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.end();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe('Queclink binary reports on the GL200 port', () => {
  it('stores a binary +RSP, then a text +RESP on the same connection, and answers a binary +HBD with +SACK:GTHBD', async () => {
    const t = await connect();
    const binaryAt = now(120);
    t.send(binaryReport('rsp', binaryAt, now(110)));
    const binary = await storedFix(binaryAt);
    // Accuracy 0: the device's last known location, kept but not valid.
    expect(binary).toMatchObject({ valid: false, lat: 39.611009, lng: -9.068207, altitude: 126, speedKmh: 0, heading: 0, satellites: 7 });
    expect(binary.attributes).toMatchObject({ hdop: 0, mcc: 268, mnc: 3, lac: 0x189c, cid: 0x1ac5, reportType: 7, versionFw: '0209', batteryLevel: 100, power: 14.206 });
    await silent(t); // reports are not answered, in binary as in text

    // Capture: +RESP:GTFRI,8020040200,866314060109269,,,10,1,1,0.0,0,9.0,-71.596601,-33.524595,20230722145338,0730,0001,772A,052B253E,00,0.0,,,,,100,210100,,,,20230722145341,0F4C$
    const textAt = now(60);
    t.send(`+RESP:GTFRI,8020040200,${imei()},,,10,1,1,0.0,0,9.0,-71.596601,-33.524595,${textClock(textAt)},0730,0001,772A,052B253E,00,0.0,,,,,100,210100,,,,${textClock(now(55))},0F4C$`);
    const text = await storedFix(textAt);
    expect(text).toMatchObject({ valid: true, lat: -33.524595, lng: -71.596601, altitude: 9, speedKmh: 0, heading: 0 });
    expect(text.attributes).toMatchObject({ type: 'FRI', hdop: 1, mcc: 730, mnc: 1, lac: 0x772a, cid: 0x052b253e, batteryLevel: 100, ignition: true });
    const s = await status();
    expect(s).toMatchObject({ latitude: -33.524595, longitude: -71.596601, speedKmh: 0, engineStatus: 'On' });
    expect(Date.parse(s.lastReportUtc)).toBeGreaterThanOrEqual(textAt.getTime());

    // The heartbeat's answer: the device type and protocol version, and the heartbeat's count, in hex.
    t.send(heartbeat(0x7e3f, now()));
    const answer = Buffer.from('+SACK:GTHBD,450102,7E3F$', 'latin1');
    expect((await t.read(answer.length)).toString('latin1')).toBe(answer.toString('latin1'));
    await silent(t);
    expect(t.closed).toBe(false);
    t.end();
  });

  it('answers a +HBD split across writes on a new connection, then reads text and binary reports sent in one write', async () => {
    const t = await connect();
    // The heartbeat comes first here: it is answered before the connection knows its device.
    const hbd = heartbeat(0x0001, now());
    t.send(hbd.subarray(0, 3)); // `+HB`: text or binary is not known yet
    await new Promise((r) => setTimeout(r, 100));
    t.send(hbd.subarray(3, 12));
    await new Promise((r) => setTimeout(r, 100));
    t.send(hbd.subarray(12));
    const answer = Buffer.from('+SACK:GTHBD,450102,0001$', 'latin1');
    expect((await t.read(answer.length)).toString('latin1')).toBe(answer.toString('latin1'));

    // One TCP write holding a text report and a binary one: the framer switches form frame by frame.
    const [textAt, binaryAt] = [now(30), now(20)];
    t.send(Buffer.concat([
      Buffer.from(`+RESP:GTFRI,8020040200,${imei()},,,10,1,1,0.0,0,9.0,-71.596601,-33.524595,${textClock(textAt)},0730,0001,772A,052B253E,00,0.0,,,,,100,210100,,,,${textClock(now(25))},0F4C$`, 'latin1'),
      binaryReport('rsp', binaryAt, now(15)),
    ]));
    expect(await storedFix(textAt)).toMatchObject({ valid: true, lat: -33.524595, lng: -71.596601 });
    expect(await storedFix(binaryAt)).toMatchObject({ valid: false, lat: 39.611009, lng: -9.068207 });
    expect(t.closed).toBe(false);
    t.end();
  });

  it('stores a binary +EVT ignition-on report with its event type, speed and heading', async () => {
    const t = await connect();
    const at = now(10);
    t.send(binaryReport('evt', at, now(9)));
    const fix = await storedFix(at);
    expect(fix).toMatchObject({ valid: false, lat: 39.611162, lng: -9.068048, altitude: 126, speedKmh: 22.1, heading: 242, satellites: 7 });
    expect(fix.attributes).toMatchObject({ type: 'VGN', reportType: 45, ignition: true, power: 14.328, batteryLevel: 100 });
    await silent(t);
    t.end();
  });
});
