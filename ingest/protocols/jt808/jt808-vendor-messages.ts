import { ByteReader } from '../../codec/byte-reader.ts';
import { text, trimmed } from './jt808-fields.ts';
import { emptyPosition, readLocation } from './jt808-location.ts';
import { addAlarm, newReport, placeRecord, replyTo, type Jt808Message, type Jt808Result } from './jt808-message.ts';
import { readBcdTime } from './jt808-time.ts';

/** Packed BCD digits as a number (`digits` nibbles, the last one the high nibble of the next byte when odd). */
function bcdNumber(r: ByteReader, digits: number): number {
  let value = 0;
  for (let i = 0; i < Math.floor(digits / 2); i++) {
    const b = r.u8();
    value = value * 100 + (b >> 4) * 10 + (b & 0x0f);
  }
  if (digits % 2 === 1) value = value * 10 + (r.peekU8() >> 4);
  return value;
}

/** `dddmmmmmm` (degrees, minutes in 1/10000) to degrees. */
function degrees(raw: number): number {
  return Math.trunc(raw / 1e6) + (raw % 1e6) / 10000 / 60;
}

/** The tilt item's axes: two's complement, with 0x8000 itself read as positive (as the e-locks send it). */
function axis(r: ByteReader): number {
  const v = r.u16();
  return v > 0x8000 ? v - 0x10000 : v;
}

/**
 * 0x5501 / 0x5502 (e-locks with a JT600-style body): BCD date (day first, UTC) and coordinates in
 * degrees and minutes, flags (valid, hemispheres), speed, course/2, then signal, satellites, mileage,
 * battery, cell, product, status, alarms and items. 0x5502 carries stored (blind-area) fixes. A set
 * bit 15 in the body properties asks for the 0x4401 answer.
 */
export function decodeElockLocation(msg: Jt808Message, askedForAnswer: boolean): Jt808Result {
  const r = msg.body;
  const p = emptyPosition();
  p.fixTime = readBcdTime(r, 'dmy', 0);
  const latitude = degrees(bcdNumber(r, 8));
  const longitude = degrees(bcdNumber(r, 9));
  const flags = r.u8();
  p.latitude = flags & 0x02 ? latitude : -latitude;
  p.longitude = flags & 0x04 ? longitude : -longitude;
  p.speedKmh = bcdNumber(r, 2) * 1.852; // knots, as the JT600 family sends them
  p.heading = r.u8() * 2;
  p.valid = msg.id !== 0x5502;
  const a = p.attributes;
  a.rssi = r.u8();
  a.sat = r.u8();
  p.satellites = a.sat;
  a.odometer = r.u32() * 1000;
  const battery = r.u8();
  if (battery <= 100) a.batteryLevel = battery;
  else if (battery === 0xaa || battery === 0xab) a.charge = true;
  r.skip(6); // cell id, area code
  const product = r.u8();
  const status = r.u16();
  const alarms = r.u16();
  if ((product === 1 || product === 2) && alarms & 0x01) addAlarm(p, 'lowPower');
  if (product === 3) {
    a.blocked = (status & 0x20) !== 0;
    const names: Array<[number, string]> = [[0, 'overspeed'], [1, 'lowPower'], [2, 'vibration'], [3, 'lowBattery'], [5, 'geofenceEnter'], [6, 'geofenceExit']];
    for (const [bit, name] of names) if (alarms & (1 << bit)) addAlarm(p, name);
  }
  a.status = status;
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    if (length > r.remaining) break;
    const end = r.offset + length;
    if (id === 0x02 && length >= 2) p.altitude = r.i16();
    else if (id === 0x10 && length >= 1) a.wakeSource = r.u8();
    else if (id === 0x0b && length >= 1) {
      a.lockCommand = r.u8();
      if (length >= 5 && length <= 6) a.lockCard = r.u32();
      else if (length >= 7) a.lockPassword = text(r, 6);
      if (length % 2 === 0) a.unlockResult = r.u8();
    } else if (id === 0x0c && length >= 6) a.tilt = `[${axis(r)},${axis(r)},${axis(r)}]`;
    else if (id === 0xfc && length >= 1) a.geofence = r.u8();
    r.offset = end;
  }
  const result: Jt808Result = { positions: [] };
  placeRecord(p, result);
  if (askedForAnswer) result.reply = replyTo(msg, 0x4401, Uint8Array.of(msg.id >> 8, msg.id & 0xff, 0));
  return result;
}

/** 0x2070 acceleration samples: BCD time and three signed axes each, as a `gSensor` list. */
export function decodeAcceleration(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  const samples: string[] = [];
  const signed = (v: number) => (v & 0x8000 ? -(v & 0x7fff) : v);
  while (r.remaining >= 12) {
    r.skip(6);
    samples.push(`[${signed(r.u16())},${signed(r.u16())},${signed(r.u16())}]`);
  }
  return { positions: [], reports: [newReport({ gSensor: `[${samples.join(',')}]` })] };
}

/** 0x0702 driver identity (IC card): status, time, result, name, qualification code, agency, validity. */
export function decodeDriverIdentity(msg: Jt808Message, reply: Uint8Array): Jt808Result {
  const r = msg.body;
  const report = newReport({ cardStatus: r.u8() });
  const time = readBcdTime(r);
  if (!Number.isNaN(time.getTime())) report.time = time;
  report.attributes.cardResult = r.u8();
  report.attributes.driver = text(r, r.u8());
  report.attributes.cardCode = trimmed(text(r, 20));
  report.attributes.cardAgency = text(r, r.u8());
  report.attributes.cardValidity = Buffer.from(r.slice(4)).toString('hex');
  return { positions: [], reports: [report], reply };
}

/**
 * 0x0210: a battery level and BCD time when the body is 7 bytes (a heartbeat of some asset trackers),
 * otherwise a batch of locations each prefixed by a one-byte length.
 */
export function decodeBatch2(msg: Jt808Message, reply: Uint8Array): Jt808Result {
  const r = msg.body;
  const result: Jt808Result = { positions: [], reply };
  if (r.remaining === 7) {
    const report = newReport({ batteryLevel: r.u8() });
    const time = readBcdTime(r);
    if (!Number.isNaN(time.getTime())) report.time = time;
    result.reports = [report];
    return result;
  }
  while (r.remaining > 0) {
    const length = r.u8();
    const item = r.slice(length);
    placeRecord(readLocation(new ByteReader(item)), result);
  }
  return result;
}
