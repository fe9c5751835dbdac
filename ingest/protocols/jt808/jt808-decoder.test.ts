import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeJt808 } from './jt808-decoder.ts';
import { nextJt808Frame } from './jt808-framer.ts';

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const hexOf = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

/** The bytes as the framer hands them on (escapes undone). */
function framed(wire: string): Uint8Array {
  const cut = nextJt808Frame(hex(wire));
  if (cut.kind !== 'frame') throw new Error(`not a frame: ${cut.kind}`);
  return cut.frame;
}

// Captures from Traccar's tests: terminal 013511221122 registers, authenticates and reports.
const REGISTER = '7e0100002d013511221122000500000000373031303748422d52303347424400000000000000000000003233363631303402cbd5424136383630387e';
const AUTH = '7e0102000e013511221122000661757468656e7469636174696f6e3f7e';
// Terminal 001601285614's location report (corpus sample 81).
const LOCATION = '7e0200002c00160128561400020000000000040001005de1f7065c6cef00000000000017011710044201040000a9002a02000030011b3101030c7e';

/** A location report of terminal 013511221122 with the given alarm and status words (no extra items). */
function location(alarm: string, status: string, serial = '0008'): Uint8Array {
  const body = hex(alarm + status + '0158cc00' + '06ca3a5c' + 'fff6' + '01f4' + '010e' + '240131235959');
  const head = hex('0200' + body.length.toString(16).padStart(4, '0') + '013511221122' + serial);
  const message = Buffer.concat([head, body]);
  let x = 0;
  for (const b of message) x ^= b;
  return Uint8Array.from(Buffer.concat([Buffer.from([0x7e]), message, Buffer.from([x, 0x7e])]));
}

describe('jt808 decoder', () => {
  it('answers a registration with 0x8100: its serial, result 0, the terminal number as authentication code', () => {
    const session = newSession();
    const decoded = decodeJt808(hex(REGISTER), session);
    expect(decoded).toMatchObject({ deviceId: '13511221122', positions: [] });
    expect(session.deviceId).toBe('13511221122');
    expect(hexOf(decoded.reply)).toBe('7e8100000e01351122112200000005003133353131323231313232897e');
  });

  it('answers authentication, heartbeats and locations with 0x8001 naming their serial and id, numbering its own messages', () => {
    const session = newSession();
    expect(hexOf(decodeJt808(hex(AUTH), session).reply)).toBe('7e8001000501351122112200000006010200b57e');
    // Second platform message on the connection: serial 0001, and the checksum changes with it.
    expect(hexOf(decodeJt808(hex(LOCATION), session).reply)).toBe('7e8001000500160128561400010002020000f87e');
    const heartbeat = decodeJt808(hex('7e0002000004304832546500b7ca7e'), newSession());
    expect(heartbeat).toMatchObject({ deviceId: '43048325465', positions: [] });
    expect(hexOf(heartbeat.reply)).toBe('7e80010005043048325465000000b70002004e7e');
  });

  it('reads a location: coordinates, altitude, speed, course, Beijing time as UTC, ignition, fix flag, items', () => {
    const decoded = decodeJt808(hex(LOCATION), newSession());
    expect(decoded.deviceId).toBe('1601285614');
    expect(decoded.positions).toEqual([
      {
        fixTime: new Date('2017-01-17T02:04:42Z'),
        valid: false,
        latitude: 6.152695,
        longitude: 106.720495,
        altitude: 0,
        speedKmh: 0,
        heading: 0,
        satellites: 3,
        signalStrength: 27,
        attributes: { status: 0x00040001, ignition: true, blocked: false, charge: false, odometer: 4_326_400, rssi: 27, sat: 3 },
      },
    ]);
  });

  it('turns alarm flags into alarms, and status bits into hemispheres, ignition and the relay state', () => {
    const decoded = decodeJt808(location('00000103', '0000040e'), newSession());
    const p = decoded.positions[0]!;
    expect(p.attributes.alarm).toBe('sos,overspeed,powerCut');
    expect(p).toMatchObject({ valid: true, latitude: -22.596608, longitude: -113.916508, altitude: -10, speedKmh: 50, heading: 270 });
    expect(p.attributes).toMatchObject({ ignition: false, blocked: true });
    expect(p.fixTime).toEqual(new Date('2024-01-31T15:59:59Z'));
  });

  it('escapes 0x7e and 0x7d in what it sends', () => {
    // The terminal's serial 0x007e comes back escaped as 7d 02 in the general response.
    expect(hexOf(decodeJt808(location('00000000', '00000002', '007e'), newSession()).reply)).toBe('7e800100050135112211220000007d02020000cc7e');
  });

  it('answers a 2019 registration in the 2019 header: version byte and the 10-byte terminal number', () => {
    const wire =
      '7e0100405c010000086649607758216452180000000000000000000000000000004d443330300000000000000000000000000000000000000000000000000038363634393630373735383231363400000000000000000000000000000004000000000000000000000000000000007a7e';
    const decoded = decodeJt808(framed(wire), newSession());
    expect(decoded.deviceId).toBe('866496077582164');
    expect(hexOf(decoded.reply)).toBe('7e81004012010000086649607758216400005218003836363439363037373538323136348a7e');
  });

  it('reads a batch (0x0704) of backlog positions, each marked archive', () => {
    const wire =
      '7e070400f30303000002450064000401003a000000000000000301618ac606c31f20000000000029180514202847010400000000eb16000c00b28986061708003732585700060089fffffffe003a000000000000000301618ae806c31eb800000000009f180514202917010400000000eb16000c00b28986061708003732585700060089fffffffe003a000000000000000301618ae806c31eb800000000009f180514202947010400000000eb16000c00b28986061708003732585700060089fffffffe003a000001000000080301618ae806c31eb800000000009f180514203006010400000000eb16000c00b28986061708003732585700060089fffffffed77e';
    const decoded = decodeJt808(framed(wire), newSession());
    expect(decoded.positions.map((p) => p.fixTime.toISOString())).toEqual(['2018-05-14T12:28:47.000Z', '2018-05-14T12:29:17.000Z', '2018-05-14T12:29:47.000Z', '2018-05-14T12:30:06.000Z']);
    for (const p of decoded.positions) expect(p.attributes).toMatchObject({ archive: true, iccid: '89860617080037325857' });
    // The fourth carries alarm bit 8 (main power lost), status 0x0803 (ACC on, fix), and the vendor's 0xEB power flag off.
    expect(decoded.positions[3]).toMatchObject({ valid: true, latitude: 23.169768, attributes: { alarm: 'powerCut,powerOff', ignition: true, status: 0x0803 } });
    expect(decoded.positions[0]!.attributes.alarm).toBe('powerOff'); // alarm flags clear: only the vendor's flag
    expect(hexOf(decoded.reply)).toMatch(/^7e80010005030300000245/);
  });

  it('reads the tracker that leaves 0x7d unescaped (its 7d 01 is data: only the bytes as sent add up)', () => {
    const wire = '7e090000344f07788ef87d0138f02305151230460102020001ffffffff000100001457000000020006503134353700000c000a029dc63004b99a98230515132726787e';
    const decoded = decodeJt808(framed(wire), newSession());
    expect(decoded.positions[0]!.attributes.dtcs).toBe('P1457');
  });

  it('reads an e-lock 0x5501 report (day-first UTC date, degrees and minutes) and answers 0x4401 when bit 15 asks for it', () => {
    const wire =
      '7e55018c418560090010174701022106242122348476113550490700001c06000000074e0000000000000308100000100102020200000a030000000b0803363839363037650c0600000001000afa7e';
    const decoded = decodeJt808(hex(wire), newSession());
    expect(decoded.deviceId).toBe('856009001017');
    expect(decoded.positions[0]).toMatchObject({ fixTime: new Date('2021-02-01T06:24:21Z'), valid: true, latitude: 22 + 34.8476 / 60, longitude: 113 + 55.049 / 60 });
    expect(decoded.positions[0]!.attributes).toMatchObject({ lockPassword: '689607', unlockResult: 0x65, batteryLevel: 78 });
    // One-byte serial in the answer's header, like the report's.
    expect(hexOf(decoded.reply)).toBe('7e4401000385600900101700550100f97e');
  });

  it('refuses a frame whose checksum does not match, or too short for a header', () => {
    const bad = location('00000000', '00000002');
    bad[bad.length - 2] = bad[bad.length - 2]! ^ 0xff;
    expect(() => decodeJt808(bad, newSession())).toThrow(MalformedFrameError);
    expect(() => decodeJt808(hex('7e00027e'), newSession())).toThrow(MalformedFrameError);
  });

  it('answers the e-locks\' time request with UTC, and takes their other text as a command result once identified', () => {
    const session = newSession();
    const now = new Date('2026-11-29T10:20:30Z');
    const time = decodeJt808(Buffer.from('(794104004140,1,001,BASE,2,TIME)'), session, now);
    expect(Buffer.from(time.reply!).toString()).toBe('(794104004140,1,001,BASE,2,20261129102030)');
    expect(decodeJt808(Buffer.from('(740190311185,1,001,ELOCK,3,529439)'), session).answer).toBeUndefined();
    decodeJt808(hex(AUTH), session);
    expect(decodeJt808(Buffer.from('(740190311185,1,001,ELOCK,3,529439)'), session).answer).toEqual({ text: '(740190311185,1,001,ELOCK,3,529439)' });
  });
});
