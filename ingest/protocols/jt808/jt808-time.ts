import { utcMillis } from '../../codec/utc-millis.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';

/** JT/T 808 terminals keep Beijing time (GMT+8) in their BCD timestamps, as Traccar assumes too. */
const BEIJING_OFFSET_MS = 8 * 3_600_000;

function bcdByte(b: number): number {
  const high = b >> 4;
  const low = b & 0x0f;
  return high > 9 || low > 9 ? Number.NaN : high * 10 + low;
}

/**
 * A 6-byte BCD `YYMMDDhhmmss` in Beijing time, as a UTC Date; an invalid Date when the digits are
 * not a time (a fix-less tracker sends zeros), so the caller files the record as a report.
 */
export function readBcdTime(r: ByteReader, order: 'ymd' | 'dmy' = 'ymd', offsetMs = BEIJING_OFFSET_MS): Date {
  const a = bcdByte(r.u8());
  const b = bcdByte(r.u8());
  const c = bcdByte(r.u8());
  const [year, month, day] = order === 'ymd' ? [a, b, c] : [c, b, a];
  const hour = bcdByte(r.u8());
  const minute = bcdByte(r.u8());
  const second = bcdByte(r.u8());
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return new Date(Number.NaN);
  return new Date(utcMillis(2000 + year, month, day, hour, minute, second) - offsetMs);
}
