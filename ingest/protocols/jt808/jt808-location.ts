import type { ByteReader } from '../../codec/byte-reader.ts';
import type { DecodedPosition } from '../../protocol.ts';
import { decodeExtras } from './jt808-extras.ts';
import { addAlarm, type Jt808Record } from './jt808-message.ts';
import { readBcdTime } from './jt808-time.ts';

/**
 * Alarm flags (JT/T 808 table 24) to the shared alarm names, as Traccar names them, but for bit 8:
 * the standard's "main power supply lost" is an external power cut (`powerCut`), not the tracker
 * switching off. Warnings that precede an alarm (bits 13, 14) and the unassigned bits raise nothing.
 */
const ALARM_BITS: ReadonlyArray<[number, string]> = [
  [0, 'sos'],
  [1, 'overspeed'],
  [2, 'fatigueDriving'],
  [4, 'fault'],
  [5, 'gpsAntennaCut'],
  [6, 'gpsAntennaCut'],
  [7, 'lowBattery'],
  [8, 'powerCut'],
  [9, 'fault'],
  [10, 'fault'],
  [11, 'fault'],
  [15, 'vibration'],
  [16, 'tampering'],
  [17, 'tampering'],
  [18, 'lowBattery'],
  [19, 'parking'],
  [20, 'geofence'],
  [26, 'general'],
  [28, 'movement'],
  [29, 'accident'],
  [30, 'accident'],
];

export function applyAlarmFlags(record: Jt808Record, flags: number): void {
  for (const [bit, alarm] of ALARM_BITS) if (flags & (1 << bit)) addAlarm(record, alarm);
}

/**
 * Status word, latitude and longitude (millionths of a degree; the hemispheres in status bits 2 and
 * 3): ACC (bit 0) is the ignition, bit 1 a valid fix, bit 10 the fuel line cut (relay engaged),
 * bit 26 charging as the trackers that set it use it.
 */
export function readStatusAndCoordinates(r: ByteReader, p: DecodedPosition): void {
  const status = r.u32();
  p.attributes.status = status;
  p.attributes.ignition = (status & 0x01) !== 0;
  p.attributes.blocked = (status & (1 << 10)) !== 0;
  p.attributes.charge = (status & (1 << 26)) !== 0;
  p.valid = (status & 0x02) !== 0;
  const latitude = r.u32() / 1e6;
  const longitude = r.u32() / 1e6;
  p.latitude = status & 0x04 ? -latitude : latitude;
  p.longitude = status & 0x08 ? -longitude : longitude;
}

export function emptyPosition(): DecodedPosition {
  return { fixTime: new Date(Number.NaN), valid: false, latitude: 0, longitude: 0, attributes: {} };
}

/**
 * The 28-byte basic location (alarm flags, status, latitude, longitude, altitude in metres, speed in
 * 1/10 km/h, course, BCD time) that 0x0200, 0x0201, 0x0500, 0x0704 and 0x0801 share.
 */
export function readBasicLocation(r: ByteReader): DecodedPosition {
  const p = emptyPosition();
  const alarms = r.u32();
  readStatusAndCoordinates(r, p);
  applyAlarmFlags(p, alarms);
  p.altitude = r.i16();
  p.speedKmh = r.u16() / 10;
  p.heading = r.u16();
  p.fixTime = readBcdTime(r);
  return p;
}

/** Whether the bytes left walk as additional information items (id, length, value) to exactly their end. */
function isItemRun(r: ByteReader): boolean {
  let at = r.offset;
  while (at + 2 <= r.end) at += 2 + r.bytes[at + 1]!;
  return at === r.end;
}

/**
 * A location report: the basic location, then the additional information items. A few trackers
 * send a fixed 20-byte trailer instead of items (battery, mileage in km, voltage, area, signal).
 * Standard items can add up to 20 bytes too (mileage, fuel, speed, signal, satellites do), so the
 * trailer is only taken when the bytes do not read as items.
 */
export function readLocation(r: ByteReader): DecodedPosition {
  const p = readBasicLocation(r);
  if (r.remaining === 20 && !isItemRun(r)) {
    r.skip(4);
    p.attributes.odometer = r.u32() * 1000;
    p.attributes.battery = r.u16() / 10;
    r.skip(4);
    p.attributes.rssi = r.u8();
    return p;
  }
  decodeExtras(r, p);
  return p;
}
