import { ByteReader } from '../../codec/byte-reader.ts';
import { bcdDigits } from '../../codec/bcd.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { CommandAnswer, DecodedMedia, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { checksumMatches, escapeFrame, xorChecksum } from './jt808-escape.ts';

/** Body properties: the body length (10 bits), the subpackage flag and the 2019 version flag. */
const LENGTH_MASK = 0x03ff;
const SUBPACKAGE = 0x2000;
const VERSION_2019 = 0x4000;

/**
 * Vendor location reports (JT600-style 0x5501 / 0x5502) and the e-locks' 0x4401 answer to them number
 * their messages with one byte, not two.
 */
const SHORT_SERIAL = new Set([0x5501, 0x5502, 0x4401]);

/** One unescaped message, split into header and body. */
export interface Jt808Message {
  id: number;
  /** Body properties as sent (length, subpackage and version flags, and vendor bits). */
  properties: number;
  /** Message serial number, echoed in the platform's answer. */
  serial: number;
  /** The terminal number as it came (6 BCD bytes, or 10 under the 2019 version), echoed in our messages. */
  terminal: Uint8Array;
  /** Protocol version byte of a 2019 header; undefined for 2011/2013 headers. */
  version: number | undefined;
  /** Total and index (from 1) of a message sent in subpackages. */
  packet: { total: number; index: number } | undefined;
  body: ByteReader;
  deviceId: string;
  session: DecoderSession;
}

export interface Jt808Result {
  positions: DecodedPosition[];
  reports?: DecodedReport[];
  reply?: Uint8Array;
  answer?: CommandAnswer;
  media?: DecodedMedia;
  mediaDropped?: string;
}

/** A record's attributes, for helpers that fill a position or a report alike. */
export type Jt808Record = DecodedPosition | DecodedReport;

/** Luhn check digit of a number's decimal digits (the 15th digit of an IMEI). */
function luhnDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * The device id a terminal number stands for. Terminals send their phone number (or IMEI) as BCD; a
 * few put a 14-digit IMEI in the 6 bytes as a binary number instead, completed with its Luhn digit
 * as Traccar does. Leading zeros are padding (`013912345678` is the phone number 13912345678, a 2019
 * header's 20 digits hold a 15-digit IMEI), so they are dropped.
 */
export function terminalDeviceId(terminal: Uint8Array): string {
  const digits = bcdDigits(terminal, 0, terminal.length);
  let id = digits;
  if (!/^\d+$/.test(digits)) {
    let value = 0;
    for (const b of terminal.subarray(0, 6)) value = value * 256 + b;
    id = String(value);
    id += luhnDigit(id);
  }
  const stripped = id.replace(/^0+/, '');
  return stripped === '' ? id : stripped;
}

/** Checks the frame's ends and checksum, and reads its header. */
export function parseMessage(frame: Uint8Array, session: DecoderSession): Jt808Message {
  if (frame.length < 15 || frame[0] !== 0x7e || frame[frame.length - 1] !== 0x7e) throw new MalformedFrameError('jt808: frame is not 0x7e … 0x7e or too short for a header');
  // Refused, unlike GT06's CRC: every corpus capture but one carries the right checksum (the one that
  // does not is corrupt whichever way its escapes are read), so a mismatch means bytes were lost or
  // changed, and the tracker, left unanswered on a new connection, sends the message again.
  if (!checksumMatches(frame)) {
    throw new MalformedFrameError(`jt808: checksum ${frame[frame.length - 2]!.toString(16)} does not match the frame's ${xorChecksum(frame, 1, frame.length - 2).toString(16)}`);
  }
  const r = new ByteReader(frame, 1, frame.length - 2);
  const id = r.u16();
  const properties = r.u16();
  const version = properties & VERSION_2019 ? r.u8() : undefined;
  const terminal = r.slice(version === undefined ? 6 : 10);
  const serial = SHORT_SERIAL.has(id) ? r.u8() : r.u16();
  const packet = properties & SUBPACKAGE ? { total: r.u16(), index: r.u16() } : undefined;
  // The body runs to the checksum. Its declared length (properties & LENGTH_MASK) is not trusted:
  // vendor messages (0x5501) count it differently, and the frame's ends already bound it.
  const body = new ByteReader(frame, r.offset, frame.length - 2);
  // Our commands to this terminal go in its own header (jt808-commands.ts), which its id alone does not give.
  session.options.jt808Header = { terminal: Buffer.from(terminal).toString('hex'), version: version ?? null } satisfies SaidHeader;
  return { id, properties, serial, terminal, version, packet, body, deviceId: terminalDeviceId(terminal), session };
}

/** The header a terminal sends, as its connection keeps it: the terminal number's bytes in hex and the 2019 version byte. */
export interface SaidHeader {
  terminal: string;
  version: number | null;
}

/** The next serial number of a platform message on this connection. */
function nextSerial(session: DecoderSession): number {
  const serial = typeof session.options.jt808Serial === 'number' ? session.options.jt808Serial : 0;
  session.options.jt808Serial = (serial + 1) & 0xffff;
  return serial;
}

/**
 * A platform message to the terminal `to`, escaped and framed: header in the terminal's own version
 * (2019 headers carry the version byte and the 10-byte number), body, XOR checksum.
 */
export function buildMessage(id: number, to: { terminal: Uint8Array; version: number | undefined }, serial: number, body: Uint8Array): Uint8Array {
  if (body.length > LENGTH_MASK) throw new RangeError(`jt808: a body of ${body.length} bytes is longer than the 1023 a message holds`);
  const serialBytes = SHORT_SERIAL.has(id) ? 1 : 2;
  const head = 2 + 2 + (to.version === undefined ? 0 : 1) + to.terminal.length + serialBytes;
  const message = new Uint8Array(head + body.length + 1);
  message[0] = id >> 8;
  message[1] = id & 0xff;
  const properties = body.length | (to.version === undefined ? 0 : VERSION_2019);
  message[2] = properties >> 8;
  message[3] = properties & 0xff;
  let at = 4;
  if (to.version !== undefined) message[at++] = to.version;
  message.set(to.terminal, at);
  at += to.terminal.length;
  if (serialBytes === 2) message[at++] = (serial >> 8) & 0xff;
  message[at++] = serial & 0xff;
  message.set(body, at);
  message[message.length - 1] = xorChecksum(message, 0, message.length - 1);
  return escapeFrame(message);
}

/** A platform message answering `msg`, numbered from the connection's own serial counter. */
export function replyTo(msg: Jt808Message, id: number, body: Uint8Array): Uint8Array {
  return buildMessage(id, msg, nextSerial(msg.session), body);
}

/** 0x8001 platform general response: the message's serial and id, result 0 (success). */
export function generalResponse(msg: Jt808Message): Uint8Array {
  return replyTo(msg, 0x8001, Uint8Array.of(msg.serial >> 8, msg.serial & 0xff, msg.id >> 8, msg.id & 0xff, 0));
}

/** Coordinates off the globe or no time mean the bytes were not a fix, whatever their place. */
function isPlausibleFix(record: Jt808Record): record is DecodedPosition {
  if (!('fixTime' in record)) return false;
  return Math.abs(record.latitude) <= 90 && Math.abs(record.longitude) <= 180 && !Number.isNaN(record.fixTime.getTime());
}

/** A position when the record carries a fix, the same attributes as a report otherwise. */
export function placeRecord(record: Jt808Record, result: Jt808Result): void {
  if (isPlausibleFix(record)) {
    result.positions.push(record);
    return;
  }
  const time = 'fixTime' in record ? (record as DecodedPosition).fixTime : undefined;
  const report: DecodedReport = { attributes: record.attributes };
  if (time && !Number.isNaN(time.getTime())) report.time = time;
  if (record.signalStrength !== undefined) report.signalStrength = record.signalStrength;
  (result.reports ??= []).push(report);
}

/** A report of telemetry without a fix (a heartbeat, a command's result). */
export function newReport(attributes: Record<string, string | number | boolean> = {}): DecodedReport {
  return { attributes };
}

/** Adds an alarm to a record's comma-separated `alarm` list, once. */
export function addAlarm(record: Jt808Record, alarm: string): void {
  const current = record.attributes.alarm;
  if (typeof current !== 'string' || current === '') record.attributes.alarm = alarm;
  else if (!current.split(',').includes(alarm)) record.attributes.alarm = `${current},${alarm}`;
}
