import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { DEFAULT_MEDIA_MAX_BYTES, type AttributeValue, type DecodedFrame, type DecodedRadio, type DecodedPosition, type DecodedReport, type DecoderSession } from '../../protocol.ts';
import { serverPacket } from './ruptela-crc.ts';
import { applyIo, joinDriver, joinTag } from './ruptela-io.ts';

export const MSG_RECORDS = 1;
export const MSG_DEVICE_CONFIGURATION = 2;
export const MSG_DEVICE_VERSION = 3;
export const MSG_FIRMWARE_UPDATE = 4;
export const MSG_SMS_VIA_GPRS_RESPONSE = 7;
export const MSG_DTCS = 9;
export const MSG_IDENTIFICATION = 15;
export const MSG_HEARTBEAT = 16;
export const MSG_SET_IO = 17;
export const MSG_FILES = 37;
export const MSG_EXTENDED_RECORDS = 68;

/** The acknowledgement of a records packet (1 and 68): `0002640113bc`. */
export const RECORDS_ACK = serverPacket(0x64, Uint8Array.of(1));
/** The acknowledgement of a DTC packet: `00026d01c4a4`. */
export const DTCS_ACK = serverPacket(100 + MSG_DTCS, Uint8Array.of(1));

/** Bounds-checked big-endian reader; running out is a malformed frame. */
class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
    readonly end: number,
  ) {}
  need(n: number): number {
    if (this.at + n > this.end) throw new MalformedFrameError('ruptela: packet ends inside a field');
    const at = this.at;
    this.at += n;
    return at;
  }
  u8(): number {
    return this.bytes[this.need(1)]!;
  }
  u16(): number {
    const at = this.need(2);
    return (this.bytes[at]! << 8) | this.bytes[at + 1]!;
  }
  u32(): number {
    const at = this.need(4);
    return ((this.bytes[at]! << 24) >>> 0) + (this.bytes[at + 1]! << 16) + (this.bytes[at + 2]! << 8) + this.bytes[at + 3]!;
  }
  i32(): number {
    return this.u32() | 0;
  }
}

interface Fix {
  latitude: number;
  longitude: number;
  altitude: number;
  heading: number;
  satellites: number;
  speedKmh: number;
}

interface RecordDraft {
  time: Date;
  fix?: Fix;
  attributes: Record<string, AttributeValue>;
}

const NO_COORDINATE = -0x80000000;

function readRecord(r: Reader, extended: boolean, drafts: RecordDraft[]): void {
  const time = new Date(r.u32() * 1000);
  r.u8(); // timestamp extension
  let draft: RecordDraft = { time, attributes: {} };
  if (extended) {
    const extension = r.u8();
    const merged = extension >> 4;
    const current = extension & 0x0f;
    // A record the device split in parts: later parts continue the previous one.
    if (current > 0 && current <= merged && drafts.length > 0) {
      draft = drafts.pop()!;
      draft.time = time;
    }
  }
  r.u8(); // priority
  const longitude = r.i32();
  const latitude = r.i32();
  if (longitude !== NO_COORDINATE && latitude !== NO_COORDINATE) {
    const altitude = r.u16() / 10;
    const heading = r.u16() / 100;
    const satellites = r.u8();
    const speedKmh = r.u16();
    const hdop = r.u8() / 10;
    draft.fix = { latitude: latitude / 1e7, longitude: longitude / 1e7, altitude, heading, satellites, speedKmh };
    draft.attributes.hdop = hdop;
  } else {
    r.need(8);
  }
  draft.attributes.event = extended ? r.u16() : r.u8();
  for (const length of [1, 2, 4, 8]) {
    const count = r.u8();
    for (let j = 0; j < count; j++) {
      const id = extended ? r.u16() : r.u8();
      const at = r.need(length);
      applyIo(draft.attributes, id, r.bytes, at, length);
    }
  }
  joinDriver(draft.attributes, 'io126', 'io127');
  joinDriver(draft.attributes, 'io155', 'io156');
  joinTag(draft.attributes);
  drafts.push(draft);
}

function validFix(fix: Fix): boolean {
  return Math.abs(fix.latitude) <= 90 && Math.abs(fix.longitude) <= 180;
}

/** IO 27 is the GSM signal level, already on the 0-31 scale; out-of-range values mean unknown. */
function radio(attributes: Record<string, AttributeValue>): DecodedRadio {
  const rssi = attributes.rssi;
  return typeof rssi === 'number' && rssi >= 0 && rssi <= 31 ? { signalStrength: rssi } : {};
}

function records(r: Reader, type: number): Pick<DecodedFrame, 'positions' | 'reports' | 'reply'> {
  r.u8(); // records left in the device
  const count = r.u8();
  const drafts: RecordDraft[] = [];
  for (let i = 0; i < count; i++) readRecord(r, type === MSG_EXTENDED_RECORDS, drafts);
  const positions: DecodedPosition[] = [];
  const reports: DecodedReport[] = [];
  for (const d of drafts) {
    if (d.fix && validFix(d.fix)) {
      positions.push({ fixTime: d.time, valid: true, ...d.fix, ...radio(d.attributes), attributes: d.attributes });
    } else reports.push({ time: d.time, ...radio(d.attributes), attributes: d.attributes });
  }
  return { positions, reports, reply: RECORDS_ACK };
}

function dtcs(r: Reader): Pick<DecodedFrame, 'positions' | 'reply'> {
  const count = r.u8();
  const positions: DecodedPosition[] = [];
  for (let i = 0; i < count; i++) {
    r.u8(); // reserved
    const fixTime = new Date(r.u32() * 1000);
    const longitude = r.i32() / 1e7;
    const latitude = r.i32() / 1e7;
    const attributes: Record<string, AttributeValue> = {};
    if (r.u8() === 2) attributes.archive = true;
    const at = r.need(5);
    attributes.dtcs = Buffer.from(r.bytes.subarray(at, at + 5)).toString('latin1');
    positions.push({ fixTime, valid: Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180, latitude, longitude, attributes });
  }
  return { positions, reply: DTCS_ACK };
}

const PHOTO = 'ruptelaPhoto';

interface PhotoTransfer {
  name: string;
  chunks: Uint8Array[];
  size: number;
}

/**
 * A file (camera picture) in chunks: subtype 2 carries source, an 8-character name, the chunk count
 * and this chunk's index. Each chunk but the last is answered by asking for the next one (137).
 */
function files(r: Reader, session: DecoderSession): Omit<DecodedFrame, 'deviceId'> {
  const subtype = r.u8();
  const source = r.u8();
  if (subtype !== 2) return { positions: [] };
  const nameAt = r.need(8);
  const nameBytes = r.bytes.slice(nameAt, nameAt + 8);
  const name = Buffer.from(nameBytes).toString('latin1');
  const total = r.u16();
  const current = r.u16();
  const chunk = r.bytes.slice(r.at, r.end);
  let transfer = session.options[PHOTO] as PhotoTransfer | undefined;
  if (!transfer || transfer.name !== name || current === 0) transfer = { name, chunks: [], size: 0 };
  transfer.chunks.push(chunk);
  transfer.size += chunk.length;
  const max = session.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES;
  if (transfer.size > max) {
    delete session.options[PHOTO];
    return { positions: [], mediaDropped: `ruptela: picture ${name} is larger than ${max} bytes` };
  }
  if (current + 1 < total) {
    session.options[PHOTO] = transfer;
    const request = new Uint8Array(12);
    request[0] = subtype;
    request[1] = source;
    request.set(nameBytes, 2);
    request[10] = (current + 1) >> 8;
    request[11] = (current + 1) & 0xff;
    return { positions: [], reply: serverPacket(100 + MSG_FILES, request) };
  }
  delete session.options[PHOTO];
  const bytes = Uint8Array.from(Buffer.concat(transfer.chunks));
  return { positions: [], media: { bytes, contentType: 'image/jpeg', fileName: `${name}.jpg` } };
}

/** Text answers end with the CRC; `\r\n` and spaces around them are dropped. */
function answerText(r: Reader): string {
  return Buffer.from(r.bytes.subarray(r.at, r.end)).toString('latin1').trim();
}

/**
 * One Ruptela packet: length, IMEI (8-byte number, 15 digits), command id, payload, CRC16. The CRC is
 * not checked (TCP already did; Traccar's tests carry packets whose CRC and length do not add up).
 */
export function decodeRuptela(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  if (frame.length < 2 + 8 + 1 + 2) throw new MalformedFrameError('ruptela: packet shorter than its header');
  const end = frame.length - 2;
  const r = new Reader(frame, 2, end);
  const at = r.need(8);
  const imei = Buffer.from(frame.subarray(at, at + 8)).readBigUInt64BE().toString().padStart(15, '0');
  session.deviceId = imei;
  const type = r.u8();
  const base = { deviceId: imei };
  switch (type) {
    case MSG_RECORDS:
    case MSG_EXTENDED_RECORDS:
      return { ...base, ...records(r, type) };
    case MSG_DTCS:
      return { ...base, ...dtcs(r) };
    case MSG_IDENTIFICATION:
    case MSG_HEARTBEAT:
      return { ...base, positions: [], reply: serverPacket(100 + type, Uint8Array.of(1)) };
    case MSG_DEVICE_CONFIGURATION:
    case MSG_DEVICE_VERSION:
    case MSG_FIRMWARE_UPDATE:
    case MSG_SMS_VIA_GPRS_RESPONSE: {
      const text = answerText(r);
      return { ...base, positions: [], reports: [{ attributes: { type, result: text } }], answer: { text } };
    }
    case MSG_SET_IO: {
      const text = String(r.u8());
      return { ...base, positions: [], reports: [{ attributes: { type, result: text } }], answer: { text } };
    }
    case MSG_FILES:
      return { ...base, ...files(r, session) };
    default:
      // Others we do not read: identified, nothing stored.
      return { ...base, positions: [] };
  }
}
