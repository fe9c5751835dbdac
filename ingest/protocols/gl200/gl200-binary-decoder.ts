import type { AttributeValue, DecodedFrame, DecodedPosition, DecoderSession } from '../../protocol.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { namedTypeAttributes } from './gl200-attributes.ts';
import { readBinaryTime, readCompressedTrack, readFullFix, readRecordFix } from './gl200-binary-fix.ts';

/**
 * Queclink's binary reports (gl200-binary-framer.ts tells them from the text ones):
 *   +RSP/+BSP  position reports, one or more fixes (+BSP: buffered while offline)
 *   +EVT/+BVT  event reports, one fix and the event's own fields
 *   +INF/+BNF  device information, no fix
 *   +HBD       heartbeat, answered as the text heartbeat is
 *   `+\0`      the record format of newer firmware: records of tagged data items
 * Reports and events open with `<type u8>,<mask u32>,<length u16>,<device type u8>,<protocol
 * version u16>,<firmware u16>,<id: 8 bytes>,<battery % u8>,<supply mV u16>,<motion status u8>,
 * <satellites u8>` and every header but the record format ends with `<send time 7>,<count u16>,
 * <checksum u16>,\r\n`. The mask says which optional fields a device adds after the fixes
 * (odometer, hour meter, ...); their layout varies by model, so only the fixed part is read.
 */

type Attributes = Record<string, AttributeValue>;

const latin1 = new TextDecoder('latin1');
const ascii = new TextEncoder();

const RSP_LCB = 3; // location by call: the caller's number precedes the fixes
const RSP_GEO = 8; // geofence: two reserved bytes after the supply voltage
const RSP_COMPRESSED = 100;

/** Event report types by the text protocol's name, and the bytes of their own before the fix. */
const EVENTS: Record<number, { type: string; extra: number }> = {
  6: { type: 'BPL', extra: 2 }, // backup battery voltage
  15: { type: 'UPD', extra: 3 }, // update code, retry
  17: { type: 'IDF', extra: 4 }, // idling duration
  21: { type: 'GSS', extra: 5 }, // GPS signal status, reserved
  23: { type: 'CRA', extra: 1 }, // crash counter
  26: { type: 'GES', extra: 12 }, // geofence id, enable, mode, radius, check interval
  31: { type: 'GPJ', extra: 2 }, // jamming value, state
  33: { type: 'JDS', extra: 1 }, // jamming state
  34: { type: 'UPC', extra: 3 }, // command id, result
  35: { type: 'RMD', extra: 1 }, // roaming state
  45: { type: 'VGN', extra: 7 }, // reserved, report type, ignition duration
  46: { type: 'VGF', extra: 7 },
};

/** What every binary header but the record format keeps last. */
interface Trailer {
  sendTime?: Date;
  count: number;
}

function readTrailer(frame: Uint8Array): Trailer | undefined {
  const n = frame.length;
  if (n < 13 || frame[n - 2] !== 0x0d || frame[n - 1] !== 0x0a) return undefined;
  const r = new ByteReader(frame, n - 13);
  return { sendTime: readBinaryTime(r), count: r.u16() };
}

/** The 8 id bytes as the decimal number Traccar also makes of them, so devices keep their identifiers. */
function readDeviceId(r: ByteReader): string {
  return r.u64().toString().padStart(15, '0');
}

const hex = (value: number, digits: number) => value.toString(16).toUpperCase().padStart(digits, '0');

/** The state nibble the text protocol's device status starts with: 1x ignition off, 2x on. */
function motionAttributes(motion: number, a: Attributes): void {
  const state = motion >> 4;
  if (state === 1 || state === 2) a.ignition = state === 2;
}

interface ReportHead {
  type: number;
  deviceId: string;
  attributes: Attributes;
}

function readReportHead(r: ByteReader, archive: boolean): ReportHead {
  const type = r.u8();
  r.skip(4 + 2 + 1 + 2); // mask, length, device type, protocol version
  const firmware = r.u16();
  const deviceId = readDeviceId(r);
  const attributes: Attributes = { reportType: type, versionFw: hex(firmware, 4), batteryLevel: r.u8(), power: r.u16() / 1000 };
  if (archive) attributes.archive = true;
  if (type === RSP_GEO && r.remaining > 0) r.skip(2);
  return { type, deviceId, attributes };
}

function withSatellites(p: DecodedPosition, satellites: number, shared: Attributes): DecodedPosition {
  return { ...p, satellites, attributes: { ...p.attributes, ...shared } };
}

/** Fixes, or a report when none of them was a readable fix (the device still said something). */
function result(deviceId: string, positions: DecodedPosition[], attributes: Attributes, trailer: Trailer | undefined): DecodedFrame {
  if (positions.length > 0) return { deviceId, positions };
  return { deviceId, positions: [], reports: [{ time: trailer?.sendTime, attributes }] };
}

function decodeReport(frame: Uint8Array, archive: boolean): DecodedFrame {
  const r = new ByteReader(frame, 4);
  const head = readReportHead(r, archive);
  if (head.type === RSP_GEO) head.attributes.type = 'GEO';
  motionAttributes(r.u8(), head.attributes);
  const satellites = r.u8();
  if (head.type === RSP_COMPRESSED) {
    const track = readCompressedTrack(r).map((p) => withSatellites(p, satellites, head.attributes));
    return result(head.deviceId, track, head.attributes, readTrailer(frame));
  }
  r.skip(1); // report index
  if (head.type === RSP_LCB) {
    head.attributes.type = 'LCB';
    r.skip(1); // number length
    // The caller's number in BCD, ended by a 0xF nibble.
    for (let b = r.u8(); (b & 0x0f) !== 0x0f && (b & 0xf0) !== 0xf0; b = r.u8());
  }
  const count = r.u8();
  const positions: DecodedPosition[] = [];
  for (let i = 0; i < count; i++) {
    const fix = readFullFix(r);
    if (fix) positions.push(withSatellites(fix, satellites, head.attributes));
  }
  return result(head.deviceId, positions, head.attributes, readTrailer(frame));
}

function decodeEvent(frame: Uint8Array, archive: boolean): DecodedFrame {
  const r = new ByteReader(frame, 4);
  const head = readReportHead(r, archive);
  motionAttributes(r.u8(), head.attributes);
  const satellites = r.u8();
  const event = EVENTS[head.type];
  if (event) {
    head.attributes.type = event.type;
    namedTypeAttributes(event.type, head.attributes);
    r.skip(event.extra);
  }
  r.skip(1); // fix count, always one
  const fix = readFullFix(r);
  return result(head.deviceId, fix ? [withSatellites(fix, satellites, head.attributes)] : [], head.attributes, readTrailer(frame));
}

/**
 * `<type u8>,<mask u16>,<length u16>,<id: 8 bytes>,<device type u8>,<protocol version u16>,
 * <firmware u16>,...`: what follows depends on the type and the mask, so only the envelope is read.
 */
function decodeInformation(frame: Uint8Array, archive: boolean): DecodedFrame {
  const r = new ByteReader(frame, 4);
  const infoType = r.u8();
  r.skip(2 + 2); // mask, length
  const deviceId = readDeviceId(r);
  r.skip(1 + 2); // device type, protocol version
  const attributes: Attributes = { type: 'INF', reportType: infoType, versionFw: hex(r.u16(), 4) };
  if (archive) attributes.archive = true;
  return { deviceId, positions: [], reports: [{ time: readTrailer(frame)?.sendTime, attributes }] };
}

/**
 * The binary heartbeat is answered with the text protocol's `+SACK:GTHBD,<version>,<count>$`, the
 * one reply the text path sends too (reports themselves get none, as in text): the version is the
 * device type and protocol version that follow the length byte, as they follow it in every binary
 * header, and the count is the trailer's. The heartbeat names no device; the connection's stays.
 */
function decodeHeartbeat(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const r = new ByteReader(frame, 6);
  const version = hex(r.u8(), 2) + hex(r.u16(), 4);
  const trailer = readTrailer(frame);
  if (!trailer) throw new MalformedFrameError('Queclink binary heartbeat without its trailer');
  return { deviceId: session.deviceId, positions: [], reply: ascii.encode(`+SACK:GTHBD,${version},${hex(trailer.count, 4)}$`) };
}

/** Variable-length numbers of the record format: one byte, or two when the top bit is set. */
function readVarLength(r: ByteReader): number {
  const first = r.u8();
  return first & 0x80 ? ((first & 0x7f) << 8) | r.u8() : first;
}

const GNSS_ITEM = 0x52;

/**
 * `+\0<length u16><flags>[<packet numbers u16>]<IMEI: 8 bytes BCD, first nibble padding><device type u16>
 * <protocol version u16><custom version u8><reserved: u8 length, bytes>` then records up to the
 * count, checksum and tail (4 bytes): `<record length>,<time u32>,<count u16>,<id u8>,<event u8>`
 * and data items `<id>,<length>,<bytes>`; the GNSS item holds the fix.
 */
function decodeRecords(frame: Uint8Array): DecodedFrame {
  const r = new ByteReader(frame, 2);
  const length = r.u16();
  if (r.u8() & 0x80) r.skip(2); // part of a multi-packet message
  const imei = Buffer.from(r.slice(8)).toString('hex').slice(1);
  if (!/^\d{15}$/.test(imei)) throw new MalformedFrameError(`Queclink record IMEI ${JSON.stringify(imei)}`);
  r.skip(2 + 2 + 1);
  r.skip(r.u8());
  const recordsEnd = length - 4;
  if (recordsEnd > frame.length) throw new MalformedFrameError(`Queclink record frame length ${length} past its ${frame.length} bytes`);
  const positions: DecodedPosition[] = [];
  while (r.offset < recordsEnd) {
    const start = r.offset;
    // The record length counts its own bytes too.
    const recordEnd = start + readVarLength(r);
    if (recordEnd <= r.offset || recordEnd > recordsEnd) throw new MalformedFrameError(`Queclink record ends at ${recordEnd}, outside ${r.offset}..${recordsEnd}`);
    const record = new ByteReader(frame, r.offset, recordEnd);
    record.skip(4 + 2 + 1 + 1); // generated time, record count, record id, event code
    while (record.remaining > 0) {
      const id = readVarLength(record);
      const item = record.slice(readVarLength(record));
      if (id !== GNSS_ITEM) continue;
      const fix = readRecordFix(new ByteReader(item));
      if (fix) positions.push(fix);
    }
    r.offset = recordEnd;
  }
  return { deviceId: imei, positions };
}

export function decodeGl200Binary(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  if (frame.length < 4) throw new MalformedFrameError('Queclink binary frame shorter than its header');
  let decoded: DecodedFrame;
  if (frame[1] === 0) decoded = decodeRecords(frame);
  else {
    const header = latin1.decode(frame.subarray(0, 4));
    switch (header) {
      case '+RSP':
      case '+BSP':
        decoded = decodeReport(frame, header === '+BSP');
        break;
      case '+EVT':
      case '+BVT':
        decoded = decodeEvent(frame, header === '+BVT');
        break;
      case '+INF':
      case '+BNF':
        decoded = decodeInformation(frame, header === '+BNF');
        break;
      case '+HBD':
        return decodeHeartbeat(frame, session);
      case '+ACK':
      case '+CRD':
      case '+BRD':
      case '+LGN':
        // Command acknowledgements, crash data and logins: their layouts are not known well enough to read.
        return { deviceId: session.deviceId, positions: [] };
      default:
        throw new MalformedFrameError(`not a Queclink binary header: ${JSON.stringify(header)}`);
    }
  }
  session.deviceId = decoded.deviceId;
  return decoded;
}
