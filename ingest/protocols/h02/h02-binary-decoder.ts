import type { DecodedFrame, DecodedPosition, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { KMH_PER_KNOT, batteryLevel, statusAttributes, utcDate } from './h02-fields.ts';

/**
 * Binary `$` record, all numbers packed BCD:
 *   `$` id(5, or 8 when the record is 42 bytes: a 15-digit IMEI padded) hhmmss ddmmyy
 *   lat ddmmmmmm(4) battery(1) lon dddmmmmmm + flags nibble(5)
 *   speed knots(3 digits) course(3 digits) status(4, big-endian) then model-specific bytes.
 * Flags: 0x2 valid fix, 0x4 north, 0x8 east.
 */

const LONG_ID_RECORD = 42;

/** Reads BCD nibbles one by one so odd-length fields (lon, speed) need no special case. */
class Nibbles {
  private at: number;
  constructor(private readonly bytes: Uint8Array, byteOffset: number) {
    this.at = byteOffset * 2;
  }
  nibble(): number {
    const b = this.bytes[this.at >> 1];
    if (b === undefined) throw new MalformedFrameError('H02 binary record is truncated');
    const n = this.at % 2 === 0 ? b >> 4 : b & 0x0f;
    this.at++;
    return n;
  }
  digits(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++) {
      const d = this.nibble();
      if (d > 9) throw new MalformedFrameError(`H02 binary record has a non-decimal BCD digit at nibble ${this.at - 1}`);
      value = value * 10 + d;
    }
    return value;
  }
  get byteOffset(): number {
    return this.at >> 1;
  }
}

export function decodeH02Binary(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const idBytes = frame.length === LONG_ID_RECORD ? 8 : 5;
  if (frame.length < 1 + idBytes + 23) throw new MalformedFrameError(`H02 binary record of ${frame.length} bytes is too short`);
  const hex = Buffer.from(frame.subarray(1, 1 + idBytes)).toString('hex');
  const deviceId = idBytes === 8 ? hex.slice(0, 15) : hex;
  session.deviceId = deviceId;

  const r = new Nibbles(frame, 1 + idBytes);
  const [hour, minute, second] = [r.digits(2), r.digits(2), r.digits(2)];
  const [day, month, year] = [r.digits(2), r.digits(2), r.digits(2)];
  const fixTime = utcDate(day, month, year, hour, minute, second);
  let latitude = r.digits(2) + r.digits(6) / 10000 / 60;
  // The battery byte sits between the coordinates and is binary, not BCD.
  const battery = (r.nibble() << 4) | r.nibble();
  let longitude = r.digits(3) + r.digits(6) / 10000 / 60;
  const flags = r.nibble();
  if ((flags & 0x04) === 0) latitude = -latitude;
  if ((flags & 0x08) === 0) longitude = -longitude;
  const speedKnots = r.digits(3);
  const heading = r.nibble() * 100 + r.digits(2);
  const at = r.byteOffset;
  const status = ((frame[at]! << 24) >>> 0) + (frame[at + 1]! << 16) + (frame[at + 2]! << 8) + frame[at + 3]!;
  if (!(Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180 && heading <= 360)) {
    throw new MalformedFrameError(`H02 binary record has impossible coordinates ${latitude},${longitude} or course ${heading}`);
  }

  const attributes = statusAttributes(status);
  const level = batteryLevel(battery);
  if (level !== undefined) attributes.batteryLevel = level;
  const position: DecodedPosition = { fixTime, valid: (flags & 0x02) !== 0, latitude, longitude, speedKmh: speedKnots * KMH_PER_KNOT, heading, attributes };
  return { deviceId, positions: [position] };
}
