import { newReport, readGps } from './gt06-fix.ts';
import { skipLbs } from './gt06-location.ts';
import { ack, buildFrame, emit, type Gt06Message, type Gt06Record, type Gt06Result } from './gt06-message.ts';
import { ascii, hex, isText } from './gt06-text.ts';

/** 0x61: IMEI, fix, cell, and a numeric driver id in the last four bytes. */
export function decodeGpsImei(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  r.skip(8); // IMEI, already known from the login
  const p = readGps(r, msg.state)!;
  if (r.remaining >= 4) {
    r.offset = r.end - 4;
    const driver = r.u32();
    if (driver > 0) p.attributes.driverUniqueId = String(driver);
  }
  return emit(p, ack(msg));
}

/**
 * 0x36. VL103 sends a fix, a 4-byte cell id, ACC, battery in 0.1 V and a driver tag; other
 * firmwares send (id, length, value) records where id 0x18 is the battery voltage.
 */
export function decode36(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  if (msg.model === 'VL103' && r.remaining >= 18 + 9 + 12) {
    const p = readGps(r, msg.state)!;
    skipLbs(r, 'short', false);
    r.offset = r.end - 12;
    p.attributes.battery = r.u8() / 10;
    r.offset = r.end - 8;
    const tag = r.slice(8);
    if (tag.some((b) => b !== 0)) p.attributes.driverUniqueId = hex(tag);
    return emit(p, ack(msg));
  }
  const p = newReport();
  r.skip(Math.min(3, r.remaining)); // record count header
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    if (length > r.remaining) break;
    if (id === 0x18 && length === 2) p.attributes.battery = r.u16() / 100;
    else r.skip(length);
  }
  return Object.keys(p.attributes).length > 0 ? emit(p, ack(msg)) : { positions: [], reply: ack(msg) };
}

function putRaw(p: Gt06Record, id: number, value: Uint8Array): void {
  p.attributes[`io${id}`] = value.length <= 4 ? value.reduce((n, b) => n * 256 + b, 0) : isText(value) ? ascii(value) : hex(value);
}

/** 0xF1: Unix time, then (id 2 bytes, length 1 byte, value) records; id 5 is the supply voltage. */
export function decodeF1(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport(new Date(r.u32() * 1000));
  while (r.remaining >= 3) {
    const id = r.u16();
    const value = r.slice(Math.min(r.u8(), r.remaining));
    if (id === 0x0005 && value.length === 2) p.attributes.power = ((value[0]! << 8) | value[1]!) / 100;
    else putRaw(p, id, value);
  }
  return emit(p, ack(msg));
}

/** 0xF2: Unix time, a flags byte, then (id, length) records; id 0 escapes to a 2-byte length. */
export function decodeF2(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport(new Date(r.u32() * 1000));
  r.u8();
  while (r.remaining >= 2) {
    let id = r.u8();
    let length: number;
    if (id === 0 && r.remaining >= 3) {
      id = r.u8();
      length = r.u16();
    } else length = r.u8();
    putRaw(p, id, r.slice(Math.min(length, r.remaining)));
  }
  return emit(p, ack(msg));
}

const AZ735_ALARMS = new Map<number, string>([
  [0xa2, 'lowBattery'],
  [0xa3, 'lowBattery'],
  [0xa4, 'general'],
  [0xa5, 'door'],
]);

/** AZ735 extended 0x32 (position) / 0x33 (alarm): optional fix and cell, status, length-prefixed extras. */
export function decodeAz735(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const start = r.offset;
  const fix = readGps(r, msg.state, { lengthByte: true });
  let p: Gt06Record;
  if (fix) p = fix;
  else {
    r.offset = start;
    const time = new Date(Date.UTC(2000 + r.u8(), r.u8() - 1, r.u8(), r.u8(), r.u8(), r.u8()) - msg.state.utcOffsetMs);
    r.u8();
    p = newReport(time);
  }
  const cellLength = r.u8();
  if (cellLength > 0) {
    r.skip(cellLength - 1); // MCC, MNC, LAC, cell id; the signal strength closes the block
    p.attributes.rssi = r.u8();
  }
  r.skip(r.u8()); // additional cells
  r.skip(r.u8()); // WiFi access points
  const status = r.u8();
  p.attributes.status = status;
  if (msg.type === 0x33) {
    if (status === 0xa0 || status === 0xa1) p.attributes.armed = status === 0xa0;
    const alarm = AZ735_ALARMS.get(status);
    if (alarm) p.attributes.alarm = alarm;
  }
  return emit(p, buildFrame(msg.type, msg.serial, undefined, true));
}
