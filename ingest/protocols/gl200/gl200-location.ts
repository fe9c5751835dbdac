import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import { gl200Time, hexNum, num } from './gl200-message.ts';

/**
 * Every Queclink report that has a fix carries the same run of fields, wherever its message type
 * puts it and however many times it repeats (GTFRI sends up to 15 points):
 *   <accuracy>,<speed km/h>,<azimuth>,<altitude m>,<longitude>,<latitude>,<yyyyMMddHHmmss>,
 *   <mcc>,<mnc>,<lac hex>,<cell id hex>
 * Rather than one pattern per message type and firmware (hundreds of variants), we look for the
 * run's anchor, two decimal coordinates followed by a 14-digit time, and read around it.
 */

const COORDINATE = /^-?\d{1,3}\.\d+$/;

export interface Gl200Fix {
  /** Index of the time field; the other fields sit at fixed offsets from it. */
  at: number;
  position: DecodedPosition;
}

function isAnchor(fields: string[], i: number): boolean {
  if (i < 2 || !COORDINATE.test(fields[i - 2]!) || !COORDINATE.test(fields[i - 1]!)) return false;
  const lon = Number(fields[i - 2]);
  const lat = Number(fields[i - 1]);
  return Math.abs(lon) <= 180 && Math.abs(lat) <= 90 && gl200Time(fields[i]) !== undefined;
}

function cellAttributes(fields: string[], at: number, attributes: Record<string, AttributeValue>): void {
  const mcc = num(fields[at + 1]);
  const mnc = num(fields[at + 2]);
  const lac = hexNum(fields[at + 3]);
  const cid = hexNum(fields[at + 4]);
  if (mcc === undefined || mnc === undefined || lac === undefined || cid === undefined || mcc === 0) return;
  Object.assign(attributes, { mcc, mnc, lac, cid });
}

function readFix(fields: string[], at: number): DecodedPosition {
  const accuracy = num(fields[at - 6]);
  const speedKmh = num(fields[at - 5]);
  const heading = num(fields[at - 4]);
  const altitude = num(fields[at - 3]);
  const attributes: Record<string, AttributeValue> = {};
  if (accuracy !== undefined) attributes.hdop = accuracy;
  cellAttributes(fields, at, attributes);
  return {
    fixTime: gl200Time(fields[at])!,
    // Accuracy 0 is how the device says the fix is not current (last known location).
    valid: accuracy === undefined || accuracy > 0,
    latitude: Number(fields[at - 1]),
    longitude: Number(fields[at - 2]),
    altitude: altitude !== undefined && altitude >= -12000 && altitude <= 18000 ? altitude : undefined,
    speedKmh: speedKmh !== undefined && speedKmh < 1600 ? speedKmh : undefined,
    heading: heading !== undefined && heading <= 360 ? heading : undefined,
    attributes,
  };
}

/** Every fix in the message, in order; `from` skips the envelope fields. */
export function findFixes(fields: string[], from: number): Gl200Fix[] {
  const fixes: Gl200Fix[] = [];
  for (let i = Math.max(from, 2); i < fields.length; i++) {
    if (isAnchor(fields, i)) fixes.push({ at: i, position: readFix(fields, i) });
  }
  return fixes;
}
