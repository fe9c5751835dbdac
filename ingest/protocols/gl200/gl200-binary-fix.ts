import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';

/**
 * The fix layouts of Queclink's binary reports. Most reports carry the same 32-byte run the text
 * protocol spells out field by field:
 *   <accuracy u8>,<speed u24>,<azimuth u16>,<altitude i16>,<longitude i32 µ°>,<latitude i32 µ°>,
 *   <time: year u16, month, day, hour, minute, second>,<mcc u16>,<mnc u16>,<lac u16>,<cell id u16>,<reserved u8>
 * The compressed report (+RSP type 100) packs a track into bit fields, and the record format
 * (`+\0`) keeps its fix in a tagged data item.
 */

/** yyyy MM dd HH mm ss as bytes (UTC), or undefined when not a date. */
export function readBinaryTime(r: ByteReader): Date | undefined {
  const [y, mo, d, h, mi, s] = [r.u16(), r.u8(), r.u8(), r.u8(), r.u8(), r.u8()];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

/** MCC and MNC come as hex digits meant as decimal (0x0268 is Portugal's 268), as the text protocol writes them. */
function hexDigitsAsDecimal(value: number): number | undefined {
  const digits = value.toString(16);
  return /^\d+$/.test(digits) ? Number(digits) : undefined;
}

function inRange(p: Pick<DecodedPosition, 'latitude' | 'longitude'>): boolean {
  return Math.abs(p.latitude) <= 90 && Math.abs(p.longitude) <= 180;
}

/** One full fix; undefined when its time or coordinates cannot be real (the bytes were not a fix). */
export function readFullFix(r: ByteReader): DecodedPosition | undefined {
  const accuracy = r.u8();
  // Speed is an integer km/h in two bytes and its tenth in the third: a vehicle capture reads
  // 00 16 01 as 22.1 km/h, where one 24-bit count of tenths would make it 563.3.
  const speedKmh = r.u16() + r.u8() / 10;
  const heading = r.u16();
  const altitude = r.i16();
  const longitude = r.i32() / 1e6;
  const latitude = r.i32() / 1e6;
  const fixTime = readBinaryTime(r);
  const [mcc, mnc, lac, cid] = [hexDigitsAsDecimal(r.u16()), hexDigitsAsDecimal(r.u16()), r.u16(), r.u16()];
  r.skip(1); // reserved
  const attributes: Record<string, AttributeValue> = { hdop: accuracy };
  if (mcc !== undefined && mnc !== undefined && mcc !== 0) Object.assign(attributes, { mcc, mnc, lac, cid });
  const position: DecodedPosition = {
    fixTime: fixTime!,
    // Accuracy 0 is the device's last known location, as in the text protocol.
    valid: accuracy > 0,
    latitude,
    longitude,
    altitude,
    speedKmh: speedKmh < 1600 ? speedKmh : undefined,
    heading: heading <= 360 ? heading : undefined,
    attributes,
  };
  return fixTime && inRange(position) ? position : undefined;
}

/** Reads fields of 1 to 32 bits, most significant bit first, from a slice of the frame. */
class BitReader {
  private bit = 0;
  constructor(private readonly bytes: Uint8Array) {}

  unsigned(width: number): number {
    let value = 0;
    for (let i = 0; i < width; i++, this.bit++) {
      const byte = this.bytes[this.bit >> 3]!;
      value = value * 2 + ((byte >> (7 - (this.bit & 7))) & 1);
    }
    return value;
  }

  signed(width: number): number {
    const value = this.unsigned(width);
    return value >= 2 ** (width - 1) ? value - 2 ** width : value;
  }
}

/**
 * The compressed track: `<count u16>` points, each led by a 2-bit kind. Kind 1 is a whole point
 * (3 bytes of bits: kind, fix type, speed in 0.1 km/h (12), azimuth (9); then longitude and latitude
 * i32 µ°, and the Unix time on the first whole point only); kind 2 is a 5-byte difference from the
 * point before (speed 7, azimuth 7, longitude 12, latitude 11 bits); anything else is one byte for a
 * point without a fix. Points follow one second apart.
 */
export function readCompressedTrack(r: ByteReader): DecodedPosition[] {
  const count = r.u16();
  const positions: DecodedPosition[] = [];
  let speed = 0;
  let heading = 0;
  let longitude = 0;
  let latitude = 0;
  let time = 0;
  for (let i = 0; i < count; i++) {
    if (time > 0) time += 1;
    const kind = r.peekU8() >> 6;
    if (kind === 1) {
      const bits = new BitReader(r.slice(3));
      bits.unsigned(3); // kind, fix type
      speed = bits.unsigned(12);
      heading = bits.unsigned(9);
      longitude = r.i32();
      latitude = r.i32();
      if (time === 0) time = r.u32();
    } else if (kind === 2) {
      const bits = new BitReader(r.slice(5));
      bits.unsigned(3);
      speed += bits.signed(7);
      heading += bits.signed(7);
      longitude += bits.signed(12);
      latitude += bits.signed(11);
    } else {
      r.skip(1);
      continue;
    }
    const position: DecodedPosition = {
      fixTime: new Date(time * 1000),
      valid: true,
      latitude: latitude / 1e6,
      longitude: longitude / 1e6,
      speedKmh: speed / 10,
      heading: heading >= 0 && heading <= 360 ? heading : undefined,
      attributes: {},
    };
    // A difference chain that ran off the globe or a point before any time is not a fix to keep.
    if (time > 0 && inRange(position) && speed >= 0) positions.push(position);
  }
  return positions;
}

/**
 * The GNSS data item (id 0x52) of the record format: `<status>` (bits 2-3 `10`: a current fix),
 * longitude and latitude i32 µ°, Unix time u32, speed u16 in 0.1 km/h, HDOP u8 in tenths,
 * azimuth u16, altitude u24 in 0.1 m, satellites u8.
 */
export function readRecordFix(r: ByteReader): DecodedPosition | undefined {
  const status = r.u8();
  const longitude = r.i32() / 1e6;
  const latitude = r.i32() / 1e6;
  const time = r.u32();
  const speedKmh = r.u16() / 10;
  const hdop = r.u8() / 10;
  const heading = r.u16();
  const altitude = r.u24() / 10;
  const satellites = r.u8();
  const position: DecodedPosition = {
    fixTime: new Date(time * 1000),
    valid: ((status >> 2) & 3) === 2,
    latitude,
    longitude,
    altitude: altitude <= 18000 ? altitude : undefined,
    speedKmh,
    heading: heading <= 360 ? heading : undefined,
    satellites,
    attributes: { hdop },
  };
  return time > 0 && inRange(position) ? position : undefined;
}
