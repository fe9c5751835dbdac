import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { signalFromCsq } from '../../../domain/device-signal.ts';

/**
 * Binary Meitrack reports: CCE (tagged parameters, newer firmware) and CCC (fixed 52-byte records,
 * MVT/T1 buffered uploads). Both carry seconds since 2000-01-01 and microdegrees, little-endian.
 */

const EPOCH_2000_MS = Date.UTC(2000, 0, 1);
const CCC_RECORD_BYTES = 52;

function emptyPosition(): DecodedPosition {
  return { fixTime: new Date(EPOCH_2000_MS), valid: false, latitude: 0, longitude: 0, attributes: {} };
}

/** Parameter ids are one byte, or two when the first is 0xFE (the extension page). */
function readId(r: ByteReader): number {
  const first = r.u8();
  return first === 0xfe ? 0xfe00 | r.u8() : first;
}

function applyByteParam(p: DecodedPosition, id: number, v: number): void {
  const a = p.attributes;
  switch (id) {
    case 0x01: a.event = v; break;
    case 0x05: p.valid = v > 0; break;
    case 0x06: p.satellites = v; break;
    case 0x07: {
      // The GSM signal is the modem's CSQ, already the specification's 0–31 scale.
      a.rssi = v;
      const signal = signalFromCsq(v);
      if (signal !== undefined) p.signalStrength = signal;
      break;
    }
    case 0x14: a.output = v; break;
    case 0x15: a.input = v; break;
    // 0x47 reports the lock state of a padlock model; 2 means locked shut.
    case 0x47: a.lock = v === 2; break;
    case 0x97: a.throttle = v; break;
    case 0x9d: a.fuel = v; break;
    case 0xfe69: a.batteryLevel = v; break;
    default: break;
  }
}

function applyWordParam(p: DecodedPosition, id: number, v: number): void {
  const a = p.attributes;
  switch (id) {
    case 0x08: p.speedKmh = v; break;
    case 0x09: if (v <= 360) p.heading = v; break;
    case 0x0a: a.hdop = v / 10; break;
    // Altitude is the only signed word: below-sea-level roads exist.
    case 0x0b: p.altitude = v >= 0x8000 ? v - 0x10000 : v; break;
    case 0x16: case 0x17: case 0x18: a[`adc${id - 0x15}`] = v / 100; break;
    case 0x19: a.battery = v / 100; break;
    case 0x1a: a.power = v / 100; break;
    case 0x40: a.event = v; break;
    case 0x91: case 0x92: a.obdSpeed = v; break;
    case 0x99: a.rpm = v; break;
    case 0x9c: a.coolantTemp = v; break;
    case 0x9f: a.temp1 = v; break;
    default: break;
  }
}

function applyLongParam(p: DecodedPosition, id: number, v: number): void {
  const signed = v >= 0x80000000 ? v - 0x100000000 : v;
  switch (id) {
    case 0x02: p.latitude = signed / 1e6; break;
    case 0x03: p.longitude = signed / 1e6; break;
    case 0x04: p.fixTime = new Date(EPOCH_2000_MS + v * 1000); break;
    case 0x0c: case 0x9b: p.attributes.odometer = v; break;
    case 0x0d: p.attributes.runtime = v; break;
    // Engine hours arrive in minutes; hours are kept in milliseconds like other durations.
    case 0xfef4: p.attributes.hours = v * 60_000; break;
    default: break;
  }
}

const latin1 = new TextDecoder('latin1');

/** BLE sensor tags: name, MAC, battery %, temperature and humidity in 1/256 units. */
function applyTag(p: DecodedPosition, value: Uint8Array): void {
  const r = new ByteReader(value, 0, undefined, true);
  r.u8(); // tag count; one tag is reported per record in practice
  const name = latin1.decode(r.slice(r.u8()));
  const mac = [...r.slice(6)].map((b) => b.toString(16).padStart(2, '0')).join(':');
  p.attributes.tagName = name;
  p.attributes.tagMac = mac;
  p.attributes.tagBattery = r.u8();
  p.attributes.tagTemp = r.i16() / 256;
  p.attributes.tagHumidity = r.i16() / 256;
}

/** Up to three batteries, each a presence byte and a level in %. */
function applyBatteries(p: DecodedPosition, value: Uint8Array): void {
  for (let k = 0; k < 3 && 2 * k + 1 < value.length; k++) {
    if (value[2 * k] === 0) continue;
    p.attributes[k === 0 ? 'batteryLevel' : `battery${k + 1}Level`] = value[2 * k + 1]!;
  }
}

function applyVariableParam(p: DecodedPosition, id: number, value: Uint8Array): void {
  switch (id) {
    case 0xfe31: {
      // Two leading bytes (channel, kind), then a file name that starts with yyyyMMdd.
      const file = latin1.decode(value.subarray(2));
      if (/^\d{8}/.test(file)) p.attributes.image = `${file.slice(0, 4)}-${file.slice(4, 6)}-${file.slice(6, 8)}/${file}`;
      break;
    }
    case 0xfe73: applyTag(p, value); break;
    case 0xfea8: applyBatteries(p, value); break;
    default: break;
  }
}

/** One group of fixed-size parameters: a count, then (id, value) pairs. Direct calls, no closure per record. */
function readParamGroup(r: ByteReader, p: DecodedPosition, size: 1 | 2 | 4): void {
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const id = readId(r);
    if (size === 1) applyByteParam(p, id, r.u8());
    else if (size === 2) applyWordParam(p, id, r.u16());
    else applyLongParam(p, id, r.u32());
  }
}

function decodeCceRecord(r: ByteReader): DecodedPosition {
  const p = emptyPosition();
  readParamGroup(r, p, 1);
  readParamGroup(r, p, 2);
  readParamGroup(r, p, 4);
  try {
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      const id = readId(r);
      applyVariableParam(p, id, r.slice(r.u8()));
    }
  } catch (error) {
    // Some firmware pads a variable parameter (0x4B network name) past its record. The fixed
    // groups before it are whole, and the record length still tells where the next one starts.
    if (!(error instanceof MalformedFrameError)) throw error;
  }
  return p;
}

/** CCE body (`reader` just after `CCE,`): cache size, record count, then length-prefixed records. */
export function decodeCce(r: ByteReader): DecodedPosition[] {
  r.u32(); // records still cached on the device
  const count = r.u16();
  const positions: DecodedPosition[] = [];
  for (let i = 0; i < count; i++) {
    const length = r.u16();
    const end = r.offset + length;
    if (length < 2 || end > r.end) throw new MalformedFrameError('Meitrack CCE record runs past the frame');
    positions.push(decodeCceRecord(new ByteReader(r.bytes, r.offset + 2, end, true))); // +2: record index
    r.offset = end;
  }
  return positions;
}

/** CCC body (`reader` just after `CCC,`): version, record size, cache count, fixed records. */
export function decodeCcc(r: ByteReader): DecodedPosition[] {
  r.u16(); // protocol version
  r.u16(); // record size, always 52 so far
  r.u32(); // records still cached on the device
  const positions: DecodedPosition[] = [];
  while (r.remaining >= CCC_RECORD_BYTES) {
    const event = r.u8();
    const latitude = r.i32() / 1e6;
    const longitude = r.i32() / 1e6;
    const fixTime = new Date(EPOCH_2000_MS + r.u32() * 1000);
    const valid = r.u8() === 1;
    const satellites = r.u8();
    const rssi = r.u8();
    const speedKmh = r.u16();
    const heading = r.u16();
    const hdop = r.u16() / 10;
    const altitude = r.i16();
    const odometer = r.u32();
    const runtime = r.u32();
    r.slice(8); // mcc, mnc, lac, cell id
    const status = r.u16();
    const adc1 = r.u16();
    const battery = r.u16() / 100;
    const power = r.u16();
    r.u32(); // geofence flags
    const attributes: Record<string, AttributeValue> = { event, rssi, hdop, odometer, runtime, status, adc1, battery, power };
    positions.push({ fixTime, valid, latitude, longitude, altitude, speedKmh, heading: heading <= 360 ? heading : undefined, satellites, attributes });
  }
  return positions;
}
