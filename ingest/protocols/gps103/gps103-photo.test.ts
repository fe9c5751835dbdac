import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeGps103 } from './gps103-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const IMEI = '864180034124375';
const ANNOUNCE = (count: number) => `imei:${IMEI},vt${count},190116192753,,F,172750.000,A,3649.2186,N,00235.8411,W,0.00,0,,0,0,51.93%,,+22;`;

/** index (LE16), length (LE16), data, two trailing bytes, in hex. */
function chunk(index: number, data: number[]): string {
  const bytes = Buffer.alloc(6 + data.length);
  bytes.writeUInt16LE(index, 0);
  bytes.writeUInt16LE(data.length, 2);
  Buffer.from(data).copy(bytes, 4);
  return `imei:${IMEI},vr,${bytes.toString('hex')};`;
}

describe('gps103 pictures', () => {
  it('assembles the chunks announced by vt<count> into one JPEG', () => {
    const session = newSession();
    const announced = decodeGps103(text(ANNOUNCE(3)), session);
    expect(announced.positions).toHaveLength(1);
    expect(announced.positions[0]!.attributes.event).toBeUndefined();
    expect(decodeGps103(text(chunk(0, [0xff, 0xd8, 0xff])), session)).toEqual({ deviceId: IMEI, positions: [] });
    expect(decodeGps103(text(chunk(1, [0x01, 0x02])), session).media).toBeUndefined();
    const last = decodeGps103(text(chunk(2, [0xff, 0xd9])), session);
    expect(last.media).toEqual({ bytes: Uint8Array.from([0xff, 0xd8, 0xff, 0x01, 0x02, 0xff, 0xd9]), contentType: 'image/jpeg' });
    expect(last.positions).toEqual([]);
    // The transfer is over: a stray chunk adds to nothing.
    expect(decodeGps103(text(chunk(0, [0xff])), session)).toEqual({ deviceId: IMEI, positions: [] });
  });

  it('gives a picture up when a chunk is out of order or it grows past mediaMaxBytes', () => {
    const session = newSession();
    decodeGps103(text(ANNOUNCE(3)), session);
    expect(decodeGps103(text(chunk(1, [1])), session).mediaDropped).toMatch(/chunk 1 came when 0 was expected/);
    expect(decodeGps103(text(chunk(2, [1])), session).media).toBeUndefined();
    const small = { ...newSession(), mediaMaxBytes: 4 };
    decodeGps103(text(ANNOUNCE(2)), small);
    expect(decodeGps103(text(chunk(0, [1, 2, 3])), small).mediaDropped).toBeUndefined();
    expect(decodeGps103(text(chunk(1, [4, 5])), small).mediaDropped).toMatch(/past 4 bytes/);
  });

  it('refuses a chunk that is not hexadecimal or shorter than it says', () => {
    const session = newSession();
    decodeGps103(text(ANNOUNCE(2)), session);
    expect(() => decodeGps103(text(`imei:${IMEI},vr,0g00;`), session)).toThrow(MalformedFrameError);
    expect(() => decodeGps103(text(`imei:${IMEI},vr,0000ff00aabbccdd;`), session)).toThrow(/says 255 bytes/);
  });
});
