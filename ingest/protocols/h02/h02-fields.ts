import type { AttributeValue } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';

/** Field readings shared by the H02 text and binary forms. */

export const KMH_PER_KNOT = 1.852;

/** A UTC instant from the device's two-digit-year date and time, refusing impossible values. */
export function utcDate(day: number, month: number, year2: number, hour = 0, minute = 0, second = 0): Date {
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) {
    throw new MalformedFrameError(`H02 date ${day}/${month}/${year2} ${hour}:${minute}:${second} is impossible`);
  }
  return new Date(Date.UTC(2000 + year2, month - 1, day, hour, minute, second));
}

/** `ddmmyy` or `hhmmss` as three numbers. */
export function sixDigits(text: string): [number, number, number] {
  return [Number(text.slice(0, 2)), Number(text.slice(2, 4)), Number(text.slice(4, 6))];
}

/**
 * The status word is active-low: a cleared bit raises the flag. Bit 0 vibration, bits 1 and 18 SOS,
 * bit 2 overspeed, bit 19 external power cut; bit 10 set means ignition on. Only the most urgent
 * alarm is reported, as a tracker shows one at a time.
 */
export function statusAttributes(status: number): Record<string, AttributeValue> {
  const clear = (bit: number): boolean => Math.floor(status / 2 ** bit) % 2 === 0;
  const attributes: Record<string, AttributeValue> = {};
  if (clear(0)) attributes.alarm = 'vibration';
  else if (clear(1) || clear(18)) attributes.alarm = 'sos';
  else if (clear(2)) attributes.alarm = 'overspeed';
  else if (clear(19)) attributes.alarm = 'powerCut';
  attributes.ignition = !clear(10);
  attributes.status = status;
  return attributes;
}

/**
 * Battery byte of binary records: 1–6 are coarse levels (firmwares with a 6-step gauge), up to
 * 100 a percentage, 0xF1–0xF6 a charging level; anything else means "not reported".
 */
export function batteryLevel(value: number): number | undefined {
  if (value === 0) return undefined;
  if (value <= 3) return (value - 1) * 10;
  if (value <= 6) return (value - 1) * 20;
  if (value <= 100) return value;
  if (value >= 0xf1 && value <= 0xf6) return value - 0xf0;
  return undefined;
}
