import { ByteReader } from '../../codec/byte-reader.ts';
import type { AttributeValue, DecodedPosition, DecodedReport } from '../../protocol.ts';
import { BLE_TAG_LIST_IDS, bleTagAttributes } from './teltonika-ble.ts';
import { applyIo } from './teltonika-io.ts';
import { applyRadio } from './teltonika-radio.ts';

export const CODEC_GH3000 = 0x07;
export const CODEC_8 = 0x08;
export const CODEC_8_EXTENDED = 0x8e;
export const CODEC_16 = 0x10;

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Width in bytes of IO counts and ids: Codec 8 Extended widens both to 2 bytes, Codec 16 the ids only. */
const countBytes = (codec: number) => (codec === CODEC_8_EXTENDED ? 2 : 1);
const idBytes = (codec: number) => (codec === CODEC_8_EXTENDED || codec === CODEC_16 ? 2 : 1);

const read = (r: ByteReader, size: number) => (size === 2 ? r.u16() : r.u8());

function readValue(r: ByteReader, size: number): number | bigint {
  switch (size) {
    case 1:
      return r.u8();
    case 2:
      return r.u16();
    case 4:
      return r.u32();
    default:
      return r.u64();
  }
}

/** The fixed-size IO groups (1, 2, 4, 8 bytes), then 16-byte values when the session is extended, then Codec 8E's variable-length ones. */
function readIoElements(r: ByteReader, codec: number, extended: boolean, into: Record<string, AttributeValue>): void {
  const countSize = countBytes(codec);
  const idSize = idBytes(codec);
  // A plain loop over the value sizes 1, 2, 4, 8: no array to iterate per record.
  for (let size = 1; size <= 8; size *= 2) {
    const count = read(r, countSize);
    for (let i = 0; i < count; i++) {
      const id = read(r, idSize);
      applyIo(into, id, readValue(r, size), size);
    }
  }
  if (extended) {
    const count = read(r, countSize);
    for (let i = 0; i < count; i++) into[`io${read(r, idSize)}`] = hex(r.slice(16));
  }
  if (codec === CODEC_8_EXTENDED) {
    const count = r.u16();
    for (let i = 0; i < count; i++) {
      const id = r.u16();
      const value = r.slice(r.u16());
      Object.assign(into, variableIo(id, value));
    }
  }
}

function variableIo(id: number, value: Uint8Array): Record<string, AttributeValue> {
  switch (id) {
    case 256:
      return { vin: Buffer.from(value).toString('latin1') };
    case 281:
      return { dtcs: Buffer.from(value).toString('latin1').replaceAll(',', ' ') };
    default:
      return (BLE_TAG_LIST_IDS.has(id) ? bleTagAttributes(value) : undefined) ?? { [`io${id}`]: hex(value) };
  }
}

/** One Codec 8 / 8 Extended / 16 record: timestamp, priority, GPS element, IO elements. */
export function readAvlRecord(r: ByteReader, codec: number, extended: boolean): DecodedPosition {
  const fixTime = new Date(r.u32() * 4294967296 + r.u32()); // 8-byte milliseconds, without a BigInt
  const priority = r.u8();
  const longitude = r.i32() / 1e7;
  const latitude = r.i32() / 1e7;
  const altitude = r.i16();
  const heading = r.u16();
  const satellites = r.u8();
  const speedKmh = r.u16();
  const attributes: Record<string, AttributeValue> = { priority, event: read(r, idBytes(codec)) };
  if (codec === CODEC_16) attributes.generationType = r.u8();
  read(r, countBytes(codec)); // total IO count: the group counts that follow are what matters
  readIoElements(r, codec, extended, attributes);
  // Teltonika reports no separate validity flag: a fix without satellites is the last known position.
  const position: DecodedPosition = { fixTime, valid: satellites > 0, latitude, longitude, altitude, heading, satellites, speedKmh, attributes };
  applyRadio(position);
  return position;
}

const GH3000_EPOCH_S = Date.UTC(2007, 0, 1) / 1000;

function gh3000Io(id: number, value: number | bigint): Record<string, AttributeValue> {
  const n = Number(value);
  switch (id) {
    case 1:
      return { batteryLevel: n };
    case 2:
      return { usbConnected: n === 1 };
    case 5:
      return { uptime: n };
    case 20:
      return { hdop: n * 0.1 };
    case 21:
      return { vdop: n * 0.1 };
    case 22:
      return { pdop: n * 0.1 };
    case 67:
      return { battery: n * 0.001 };
    case 221:
      return { button: n };
    case 222:
      return n === 1 ? { alarm: 'sos' } : {};
    case 240:
      return { motion: n === 1 };
    case 244:
      return { roaming: n === 1 };
    default:
      return { [`io${id}`]: n };
  }
}

/**
 * A GH3000 record (Codec 7): masks say which parts are present. Without its location part the record
 * is telemetry only, returned as a report.
 */
export function readGh3000Record(r: ByteReader): DecodedPosition | DecodedReport {
  const time = new Date(((r.u32() & 0x3fffffff) + GH3000_EPOCH_S) * 1000);
  const globalMask = r.u8();
  const attributes: Record<string, AttributeValue> = {};
  let position: DecodedPosition | undefined;
  if (globalMask & 0x01) {
    const locationMask = r.u8();
    position = { fixTime: time, valid: true, latitude: 0, longitude: 0, attributes };
    if (locationMask & 0x01) {
      position.latitude = r.f32();
      position.longitude = r.f32();
    }
    if (locationMask & 0x02) position.altitude = r.u16();
    if (locationMask & 0x04) position.heading = (r.u8() * 360) / 256;
    if (locationMask & 0x08) position.speedKmh = r.u8();
    if (locationMask & 0x10) position.satellites = r.u8();
    if (locationMask & 0x20) {
      attributes.lac = r.u16();
      attributes.cellId = r.u16();
    }
    if (locationMask & 0x40) attributes.rssi = r.u8();
    if (locationMask & 0x80) attributes.operator = r.u32();
  }
  for (const [bit, size] of [[0x02, 1], [0x04, 2], [0x08, 4]] as const) {
    if (!(globalMask & bit)) continue;
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      const id = r.u8();
      Object.assign(attributes, gh3000Io(id, readValue(r, size)));
    }
  }
  return position ?? { time, attributes };
}
