import type { CommandAnswer, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { crc16X25 } from '../../codec/crc16.ts';
import type { Gt06State } from './gt06-fix.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';

/** One framed message, split into what every `decodeXxx` needs. */
export interface Gt06Message {
  type: number;
  /** 0x7979 frame (2-byte length). */
  extended: boolean;
  /** Declared length (type .. CRC). */
  length: number;
  /** Bytes between the type and the serial number. */
  body: ByteReader;
  /** Serial number the device expects echoed in the acknowledgement. */
  serial: number;
  /** The whole frame, for firmwares whose messages run past where the serial should be. */
  frame: Uint8Array;
  session: DecoderSession;
  state: Gt06State;
  model: string | undefined;
}

export interface Gt06Result {
  positions: DecodedPosition[];
  reports?: DecodedReport[];
  reply?: Uint8Array;
  answer?: CommandAnswer;
}

/** Attributes holder shared by positions and reports, for helpers that only fill attributes. */
export type Gt06Record = DecodedPosition | DecodedReport;

/** Coordinates off the globe or a zero timestamp mean the bytes were not a fix, whatever their place. */
function isPlausibleFix(record: Gt06Record): record is DecodedPosition {
  if (!('fixTime' in record)) return false;
  return Math.abs(record.latitude) <= 90 && Math.abs(record.longitude) <= 180 && record.fixTime.getTime() > 0;
}

function asReport(record: Gt06Record): DecodedReport {
  if (!('fixTime' in record)) return record;
  return record.fixTime.getTime() > 0 ? { time: record.fixTime, attributes: record.attributes } : { attributes: record.attributes };
}

/** Puts a record where it belongs: a position when it carries a fix, a report otherwise. */
export function emit(record: Gt06Record, reply?: Uint8Array): Gt06Result {
  const result: Gt06Result = isPlausibleFix(record) ? { positions: [record] } : { positions: [], reports: [asReport(record)] };
  if (reply) result.reply = reply;
  return result;
}

/**
 * Builds a server → device frame: start, length, type, content, serial, CRC-ITU over
 * length..serial, CR LF. The acknowledgement is the case with no content.
 */
export function buildFrame(type: number, serial: number, content?: Uint8Array, extended = false): Uint8Array {
  const head = extended ? 4 : 3;
  const contentLength = content === undefined ? 0 : content.length;
  const length = 1 + contentLength + 2 + 2;
  const out = new Uint8Array(head + length + 2);
  out[0] = out[1] = extended ? 0x79 : 0x78;
  if (extended) {
    out[2] = length >> 8;
    out[3] = length & 0xff;
  } else out[2] = length;
  out[head] = type;
  if (content !== undefined) out.set(content, head + 1);
  let at = head + 1 + contentLength;
  out[at++] = (serial >> 8) & 0xff;
  out[at++] = serial & 0xff;
  const crc = crc16X25(out, 2, at);
  out[at++] = crc >> 8;
  out[at++] = crc & 0xff;
  out[at++] = 0x0d;
  out[at] = 0x0a;
  return out;
}

export function ack(msg: Gt06Message): Uint8Array {
  return buildFrame(msg.type, msg.serial);
}
