import type { SimulatedFix } from './teltonika-packets.ts';

/**
 * JT/T 808 terminal messages as a simulated terminal writes them, built from the standard: a frame is
 * 0x7e, header, body, XOR checksum of header and body, 0x7e, with 0x7e sent as 7d 02 and 0x7d as 7d 01.
 * The header is message id, body properties (body length in bits 0–9, bit 14 the 2019 version),
 * [2019: version byte], terminal number in BCD (6 bytes in 2013, 10 in 2019), message serial.
 */

const FLAG = 0x7e;
const ESCAPE = 0x7d;
const VERSION_2019 = 0x4000;
const LENGTH_MASK = 0x03ff;
/** Terminals keep Beijing time (GMT+8) in their BCD timestamps. */
const BEIJING_OFFSET_MS = 8 * 3_600_000;
/** The GSM signal every simulated terminal reports (CSQ, 0–31). */
const SIGNAL_CSQ = 23;

export const JT808 = {
  terminalResponse: 0x0001,
  registration: 0x0100,
  authentication: 0x0102,
  location: 0x0200,
  locationBatch: 0x0704,
  platformResponse: 0x8001,
  registrationAnswer: 0x8100,
  terminalControl: 0x8105,
  textMessage: 0x8300,
  vehicleControl: 0x8500,
} as const;

/** The terminal's number: up to 12 digits go in the 2013 header's 6 BCD bytes, longer (an IMEI) in the 2019 header's 10. */
export function terminalBcd(number: string): Uint8Array {
  if (!/^\d{1,20}$/.test(number)) throw new RangeError(`jt808: terminal number ${number} is not 1 to 20 digits`);
  return Uint8Array.from(Buffer.from(number.padStart(number.length > 12 ? 20 : 12, '0'), 'hex'));
}

/** A framed, escaped message; a 10-byte terminal number makes a 2019 header (version 1). */
export function jt808Frame(id: number, terminal: Uint8Array, serial: number, body: Uint8Array): Uint8Array {
  if (body.length > LENGTH_MASK) throw new RangeError(`jt808: a body of ${body.length} bytes is longer than the 1023 a message holds`);
  const v2019 = terminal.length === 10;
  const message = Buffer.alloc(4 + (v2019 ? 1 : 0) + terminal.length + 2 + body.length + 1);
  message.writeUInt16BE(id, 0);
  message.writeUInt16BE(body.length | (v2019 ? VERSION_2019 : 0), 2);
  let at = 4;
  if (v2019) message[at++] = 1;
  message.set(terminal, at);
  at += terminal.length;
  message.writeUInt16BE(serial & 0xffff, at);
  at += 2;
  message.set(body, at);
  let checksum = 0;
  for (let i = 0; i < message.length - 1; i++) checksum ^= message[i]!;
  message[message.length - 1] = checksum;
  const out: number[] = [FLAG];
  for (const b of message) {
    if (b === FLAG) out.push(ESCAPE, 0x02);
    else if (b === ESCAPE) out.push(ESCAPE, 0x01);
    else out.push(b);
  }
  out.push(FLAG);
  return Uint8Array.from(out);
}

/** `text` in a fixed-width field, padded with zero bytes (the standard's BYTE[n] strings). */
function fixed(text: string, width: number): Buffer {
  const field = Buffer.alloc(width);
  field.write(text.slice(0, width), 'latin1');
  return field;
}

/**
 * 0x0100 registration, 2019 layout: province and city (0: not given), maker id (11 bytes), model (30),
 * terminal id (30), plate colour (1, blue) and the plate.
 */
export function jt808Registration(imei: string, serial: number): Uint8Array {
  const body = Buffer.concat([
    Buffer.alloc(4), fixed('FLEETSIM', 11), fixed('SIM-808', 30), fixed(imei.slice(-7), 30), Uint8Array.of(1), Buffer.from(`SIM${imei.slice(-4)}`, 'latin1'),
  ]);
  return jt808Frame(JT808.registration, terminalBcd(imei), serial, body);
}

/** 0x0102 authentication, 2019 layout: the code's length and the code the platform gave, the IMEI (15), the software version (20). */
export function jt808Authentication(imei: string, code: Uint8Array, serial: number): Uint8Array {
  const body = Buffer.concat([Uint8Array.of(code.length), code, fixed(imei, 15), fixed('SIM 1.0', 20)]);
  return jt808Frame(JT808.authentication, terminalBcd(imei), serial, body);
}

const bcd = (n: number) => ((Math.floor(n / 10) % 10) << 4) | (n % 10);

/**
 * The location information body (0x0200's, and each item of 0x0704): alarm flags (none), status (bit 0
 * ACC, bit 1 positioned, bit 2 south, bit 3 west, bit 10 the fuel line cut once a command set it),
 * latitude and longitude in millionths of a degree, altitude (m), speed (1/10 km/h), course, the time in
 * BCD Beijing time, then items 0x01 mileage (1/10 km), 0x30 signal (CSQ), 0x31 satellites.
 */
export function jt808LocationBody(fix: SimulatedFix): Buffer {
  const body = Buffer.alloc(28 + 6 + 3 + 3);
  const status = (fix.ignition ? 0x01 : 0) | (fix.satellites > 0 ? 0x02 : 0) | (fix.latitude < 0 ? 0x04 : 0) | (fix.longitude < 0 ? 0x08 : 0) | (fix.outputs?.out1 ? 0x400 : 0);
  body.writeUInt32BE(0, 0);
  body.writeUInt32BE(status, 4);
  body.writeUInt32BE(Math.round(Math.abs(fix.latitude) * 1e6), 8);
  body.writeUInt32BE(Math.round(Math.abs(fix.longitude) * 1e6), 12);
  body.writeUInt16BE(Math.max(0, Math.round(fix.altitude ?? 0)), 16);
  body.writeUInt16BE(Math.round(fix.speedKmh * 10), 18);
  body.writeUInt16BE(Math.round(fix.heading) % 360, 20);
  const t = new Date(fix.time.getTime() + BEIJING_OFFSET_MS);
  const time = [t.getUTCFullYear() % 100, t.getUTCMonth() + 1, t.getUTCDate(), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds()];
  for (const [i, v] of time.entries()) body[22 + i] = bcd(v);
  let at = 28;
  body[at++] = 0x01; body[at++] = 4; body.writeUInt32BE(Math.round((fix.odometer ?? 0) / 100), at); at += 4;
  body[at++] = 0x30; body[at++] = 1; body[at++] = SIGNAL_CSQ;
  body[at++] = 0x31; body[at++] = 1; body[at++] = Math.min(255, fix.satellites);
  return body;
}

/** One fix as 0x0200; several as one 0x0704 batch (type 0: current data), each item with its length. */
export function jt808Locations(imei: string, fixes: SimulatedFix[], serial: number): Uint8Array {
  if (fixes.length === 1) return jt808Frame(JT808.location, terminalBcd(imei), serial, jt808LocationBody(fixes[0]!));
  const items = fixes.map((fix) => {
    const body = jt808LocationBody(fix);
    const item = Buffer.alloc(2 + body.length);
    item.writeUInt16BE(body.length, 0);
    body.copy(item, 2);
    return item;
  });
  const head = Buffer.alloc(3);
  head.writeUInt16BE(fixes.length, 0);
  return jt808Frame(JT808.locationBatch, terminalBcd(imei), serial, Buffer.concat([head, ...items]));
}

/** 0x0001 terminal general response: the serial and id of the platform message it answers, and a result (0 success, 1 failure, 2 message error, 3 not supported). */
export function jt808TerminalResponse(imei: string, answered: { serial: number; id: number }, result: number, serial: number): Uint8Array {
  const body = Buffer.alloc(5);
  body.writeUInt16BE(answered.serial & 0xffff, 0);
  body.writeUInt16BE(answered.id, 2);
  body[4] = result;
  return jt808Frame(JT808.terminalResponse, terminalBcd(imei), serial, body);
}

/** A platform message as the terminal reads it: header fields and the body, unescaped. */
export interface Jt808PlatformMessage {
  consumed: number;
  id: number;
  serial: number;
  /** The terminal number's digits, leading zeros dropped. */
  terminal: string;
  body: Buffer;
}

/**
 * The platform message at the start of `received`, or undefined while incomplete. Bytes before a
 * 0x7e, and a frame whose checksum does not add up, come back with id -1 to be skipped, as a terminal
 * drops what it cannot read.
 */
export function readJt808PlatformMessage(received: Uint8Array): Jt808PlatformMessage | undefined {
  if (received.length === 0) return undefined;
  const skipped = (consumed: number): Jt808PlatformMessage => ({ consumed, id: -1, serial: 0, terminal: '', body: Buffer.alloc(0) });
  if (received[0] !== FLAG) {
    const start = received.indexOf(FLAG);
    return skipped(start < 0 ? received.length : start);
  }
  const end = received.indexOf(FLAG, 1);
  if (end < 0) return undefined;
  if (end === 1) return skipped(1); // two flags in a row: the first closed nothing
  const message: number[] = [];
  for (let i = 1; i < end; i++) {
    const b = received[i]!;
    if (b === ESCAPE && (received[i + 1] === 0x01 || received[i + 1] === 0x02)) message.push(received[++i] === 0x01 ? ESCAPE : FLAG);
    else message.push(b);
  }
  const bytes = Buffer.from(message);
  let checksum = 0;
  for (let i = 0; i < bytes.length - 1; i++) checksum ^= bytes[i]!;
  if (bytes.length < 13 || checksum !== bytes[bytes.length - 1]) return skipped(end + 1);
  const properties = bytes.readUInt16BE(2);
  const v2019 = (properties & VERSION_2019) !== 0;
  const numberAt = v2019 ? 5 : 4;
  const numberLength = v2019 ? 10 : 6;
  if (bytes.length < numberAt + numberLength + 3) return skipped(end + 1);
  const digits = bytes.subarray(numberAt, numberAt + numberLength).toString('hex');
  return {
    consumed: end + 1,
    id: bytes.readUInt16BE(0),
    serial: bytes.readUInt16BE(numberAt + numberLength),
    terminal: digits.replace(/^0+(?=\d)/, ''),
    body: bytes.subarray(numberAt + numberLength + 2, bytes.length - 1),
  };
}
