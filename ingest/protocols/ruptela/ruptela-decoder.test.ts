import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { crc16Kermit } from './ruptela-crc.ts';
import { decodeRuptela } from './ruptela-decoder.ts';

const IMEI = '863071016796572';
const hexOf = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

/** A device packet: length, IMEI, command id, payload, CRC16/Kermit. */
function packet(type: number, payload: string, imei = IMEI): Uint8Array {
  const body = Buffer.concat([Buffer.alloc(8), Buffer.from([type]), Buffer.from(payload, 'hex')]);
  body.writeBigUInt64BE(BigInt(imei), 0);
  const out = Buffer.alloc(2 + body.length + 2);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  out.writeUInt16BE(crc16Kermit(body), 2 + body.length);
  return Uint8Array.from(out);
}

const u = (value: number, bytes: number): string => value.toString(16).padStart(bytes * 2, '0');
const i32 = (value: number): string => u(value >>> 0, 4);

/** One command-1 record: 2024-01-02T03:04:05Z, 54.6872 N 25.2797 E unless told. */
function record(io: { one?: Array<[number, number]>; two?: Array<[number, number]>; four?: Array<[number, number]>; eight?: Array<[number, string]> } = {}, fix = true, event = 7): string {
  const time = u(Date.UTC(2024, 0, 2, 3, 4, 5) / 1000, 4) + '00' + '00';
  const location = fix ? i32(252797000) + i32(546872000) + u(1234, 2) + u(18050, 2) + u(9, 1) + u(57, 2) + u(12, 1) : '80000000' + '80000000' + '0000000000000000';
  const list = (items: Array<[number, number | string]> | undefined, bytes: number) =>
    u(items?.length ?? 0, 1) + (items ?? []).map(([id, v]) => u(id, 1) + (typeof v === 'string' ? v : u(v, bytes))).join('');
  return time + location + u(event, 1) + list(io.one, 1) + list(io.two, 2) + list(io.four, 4) + list(io.eight, 8);
}

describe('ruptela decoder', () => {
  it('reads a records packet into positions and acknowledges it with 0002640113bc', () => {
    const frame = packet(1, '00' + '01' + record({ one: [[27, 17], [251, 1], [5, 1]], two: [[29, 12485], [32, 0xffec]], four: [[65, 30714], [150, 24602]] }));
    const session = newSession();
    const decoded = decodeRuptela(frame, session);
    expect(decoded.deviceId).toBe(IMEI);
    expect(session.deviceId).toBe(IMEI);
    expect(hexOf(decoded.reply)).toBe('0002640113bc');
    expect(decoded.positions).toEqual([
      {
        fixTime: new Date('2024-01-02T03:04:05Z'),
        valid: true,
        latitude: 54.6872,
        longitude: 25.2797,
        altitude: 123.4,
        heading: 180.5,
        satellites: 9,
        speedKmh: 57,
        signalStrength: 17,
        attributes: { hdop: 1.2, event: 7, rssi: 17, ignition: true, in4: 1, power: 12.485, deviceTemp: -20, odometer: 30714, operator: 24602 },
      },
    ]);
  });

  it('gives a record without a fix as a report, with unknown signal left out', () => {
    const decoded = decodeRuptela(packet(1, '00' + '01' + record({ one: [[27, 255]] }, false)), newSession());
    expect(decoded.positions).toEqual([]);
    expect(decoded.reports).toEqual([{ time: new Date('2024-01-02T03:04:05Z'), attributes: { event: 7, rssi: 255 } }]);
    expect(hexOf(decoded.reply)).toBe('0002640113bc');
  });

  it('raises alarms, joins driver ids and keeps unknown IO as io<N>, 8-byte values exactly', () => {
    const driver = Buffer.from('DRIVER0000000042', 'latin1').toString('hex');
    const decoded = decodeRuptela(
      packet(1, '00' + '01' + record({ one: [[88, 1], [134, 1], [200, 3]], eight: [[126, driver.slice(0, 16)], [127, driver.slice(16)], [99, 'ffffffffffffffff']] })),
      newSession(),
    );
    expect(decoded.positions[0]!.attributes).toMatchObject({ alarm: 'jamming,hardBraking', io200: 3, driverUniqueId: 'DRIVER0000000042', io99: '18446744073709551615' });
    expect(decoded.positions[0]!.attributes.io126).toBeUndefined();
  });

  it('reads extended records (68) with 2-byte ids and events, merging a record sent in parts', () => {
    const ext = (part: string, io: string) => u(Date.UTC(2024, 0, 2, 3, 4, 5) / 1000, 4) + '00' + part + '00' + i32(252797000) + i32(546872000) + '04d24682' + '09' + '0039' + '0c' + u(300, 2) + io;
    const io1 = '01' + u(409, 2) + '01' + '00' + '00' + '00';
    const io2 = '01' + u(2, 2) + '01' + '00' + '00' + '00';
    const decoded = decodeRuptela(packet(68, '00' + '02' + ext('10', io1) + ext('11', io2)), newSession());
    expect(decoded.positions).toHaveLength(1);
    expect(decoded.positions[0]!.attributes).toMatchObject({ event: 300, ignition: true, in1: 1 });
    expect(hexOf(decoded.reply)).toBe('0002640113bc');
  });

  it('answers identification and heartbeat packets with their acknowledgement', () => {
    expect(hexOf(decodeRuptela(packet(15, '00'), newSession()).reply)).toBe('00027301cb25');
    const heartbeat = decodeRuptela(packet(16, ''), newSession());
    expect(heartbeat.positions).toEqual([]);
    expect(hexOf(heartbeat.reply)).toBe('00027401' + crc16Kermit(Uint8Array.of(0x74, 1)).toString(16).padStart(4, '0'));
  });

  it('reads DTC packets and acknowledges them with 00026d01c4a4', () => {
    const decoded = decodeRuptela(packet(9, '01' + 'ff' + u(1318891308, 4) + i32(131467505) + i32(437551290) + '02' + Buffer.from('P0011').toString('hex')), newSession());
    expect(decoded.positions[0]).toMatchObject({ latitude: 43.755129, longitude: 13.1467505, attributes: { dtcs: 'P0011', archive: true } });
    expect(hexOf(decoded.reply)).toBe('00026d01c4a4');
  });

  it('takes text (7) and set-IO (17) packets as command answers', () => {
    const text = decodeRuptela(packet(7, Buffer.from('DOUT1=1\r\n').toString('hex')), newSession());
    expect(text.answer).toEqual({ text: 'DOUT1=1' });
    expect(text.reports).toEqual([{ attributes: { type: 7, result: 'DOUT1=1' } }]);
    const io = decodeRuptela(packet(17, '01'), newSession());
    expect(io.answer).toEqual({ text: '1' });
    expect(io.reply).toBeUndefined();
  });

  it('assembles a picture from its chunks, asking for each next one', () => {
    const session = newSession();
    const name = Buffer.from('5DDA1FAD').toString('hex');
    const first = decodeRuptela(packet(37, '0200' + name + '0002' + '0000' + 'ffd8ff'), session);
    expect(first.media).toBeUndefined();
    const request = '000d8902' + '00' + name + '0001';
    expect(hexOf(first.reply)?.slice(0, -4)).toBe(request);
    expect(hexOf(first.reply)?.slice(-4)).toBe(crc16Kermit(Buffer.from(request.slice(4), 'hex')).toString(16).padStart(4, '0'));
    const last = decodeRuptela(packet(37, '0200' + name + '0002' + '0001' + 'e0ffd9'), session);
    expect(last.media).toEqual({ bytes: Uint8Array.from(Buffer.from('ffd8ffe0ffd9', 'hex')), contentType: 'image/jpeg', fileName: '5DDA1FAD.jpg' });
    expect(last.reply).toBeUndefined();
  });

  it('gives up a picture larger than the session allows', () => {
    const session = { ...newSession(), mediaMaxBytes: 2 };
    const name = Buffer.from('5DDA1FAD').toString('hex');
    expect(decodeRuptela(packet(37, '0200' + name + '0002' + '0000' + 'ffd8ff'), session).mediaDropped).toMatch(/larger/);
  });

  it('refuses a packet that ends inside a record', () => {
    const whole = packet(1, '00' + '01' + record());
    const cut = Uint8Array.from(Buffer.concat([whole.subarray(0, 30), Buffer.from('0000', 'hex')]));
    expect(() => decodeRuptela(cut, newSession())).toThrow(MalformedFrameError);
    expect(() => decodeRuptela(Uint8Array.of(0, 9, 1), newSession())).toThrow(MalformedFrameError);
  });
});
