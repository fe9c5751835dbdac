import type { ByteReader } from '../../codec/byte-reader.ts';
import type { DecodedPosition } from '../../protocol.ts';
import { text, trimmed } from './jt808-fields.ts';
import { emptyPosition, readStatusAndCoordinates } from './jt808-location.ts';
import { addAlarm, generalResponse, newReport, placeRecord, type Jt808Message, type Jt808Result } from './jt808-message.ts';
import { readBcdTime } from './jt808-time.ts';
import { decodeObdRt } from './jt808-vendor-items.ts';

/** 0xF0 subtype 01: OBD data items (two-byte id, one-byte length) before the location. */
function readObdData(r: ByteReader, p: DecodedPosition): void {
  const a = p.attributes;
  const count = r.u8();
  for (let i = 0; i < count; i++) {
    const id = r.u16();
    const length = r.u8();
    switch (id) {
      case 0x0102:
      case 0x0528:
      case 0x0546:
        a.odometer = r.u32() * 100;
        break;
      case 0x0103:
        a.fuel = r.u32() / 100;
        break;
      case 0x0111:
        a.fuelTemp = r.u8() - 40;
        break;
      case 0x012e:
        a.oilLevel = r.u16() / 10;
        break;
      case 0x052a:
        a.fuel = r.u16() / 100;
        break;
      case 0x0105:
      case 0x052c:
        a.fuelUsed = r.u32() / 100;
        break;
      case 0x014a:
      case 0x0537:
      case 0x0538:
      case 0x0539:
        a.fuelConsumption = r.u16() / 100;
        break;
      case 0x052b:
        a.fuel = r.u8();
        break;
      case 0x052d:
        a.coolantTemp = r.u8() - 40;
        break;
      case 0x052e:
        a.airTemp = r.u8() - 40;
        break;
      case 0x0530:
        a.power = r.u16() / 1000;
        break;
      case 0x0535:
        a.obdSpeed = r.u16() / 10;
        break;
      case 0x0536:
        a.rpm = r.u16();
        break;
      case 0x053d:
        a.intakePressure = r.u16() / 10;
        break;
      case 0x0544:
        a.liquidLevel = r.u8();
        break;
      case 0x0547:
      case 0x0548:
        a.throttle = r.u8();
        break;
      case 0xfeec:
        a.vin = text(r, length);
        break;
      default:
        if (length === 1) a[`io${id}`] = r.u8();
        else if (length === 2) a[`io${id}`] = r.u16();
        else if (length === 4) a[`io${id}`] = r.u32();
        else r.skip(length);
    }
  }
}

/** 0xF0 subtype 02: trouble codes per ECU system, each with its text. */
function readTroubleCodes(r: ByteReader, p: DecodedPosition): void {
  const codes: string[] = [];
  const systems = r.u16();
  for (let i = 0; i < systems; i++) {
    r.skip(4); // system id
    const count = r.u16();
    for (let j = 0; j < count; j++) {
      r.skip(8); // code, status
      codes.push(trimmed(text(r, r.u16())));
    }
  }
  p.attributes.dtcs = codes.join(' ');
}

const DRIVING_EVENTS: Record<number, string> = {
  0x01: 'powerRestored',
  0x02: 'powerCut',
  0x0e: 'idle',
  0x1a: 'hardAcceleration',
  0x1b: 'hardBraking',
  0x1c: 'hardCornering',
  0x1d: 'laneChange',
  0x1e: 'laneChange',
  0x1f: 'laneChange',
  0x23: 'fatigueDriving',
  0x25: 'overspeed',
  0x26: 'accident',
  0x27: 'accident',
  0x28: 'accident',
  0x31: 'door',
  0x32: 'door',
};

/**
 * 0xF0 (OBD dongles): BCD time, an archive flag, the vehicle type, then by subtype OBD data (01),
 * trouble codes (02) or driving events (03), each followed by status and coordinates.
 */
function decodeObdDongle(r: ByteReader): DecodedPosition | undefined {
  const p = emptyPosition();
  const time = readBcdTime(r);
  if (r.u8() > 0) p.attributes.archive = true;
  r.u8(); // vehicle type
  const subtype = r.u8();
  if (subtype === 0x01) readObdData(r, p);
  else if (subtype === 0x02) readTroubleCodes(r, p);
  else if (subtype === 0x03) {
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      const alarm = DRIVING_EVENTS[r.u8()];
      if (alarm) addAlarm(p, alarm);
      r.skip(r.u8());
    }
  } else return undefined;
  readStatusAndCoordinates(r, p);
  p.fixTime = time;
  return p;
}

/**
 * 0x0900 transparent data: a type byte and what the peripheral behind the tracker sent. We read the
 * kinds the corpus holds: driver tags (0x40 `GTSL|…`), the OBD-RT sentence (0x41), OBD dongle data
 * (0xF0) and a plain fix (0xFF). Every one is acknowledged.
 */
export function decodeTransparent(msg: Jt808Message): Jt808Result {
  const result: Jt808Result = { positions: [], reply: generalResponse(msg) };
  const r = msg.body;
  const type = r.u8();
  if (type === 0x40) {
    const data = trimmed(text(r, r.remaining));
    const report = newReport();
    if (data.startsWith('GTSL')) {
      const values = data.split('|');
      if (values.length > 4) report.attributes.driverUniqueId = values[4]!;
    } else if (data !== '') report.attributes.data = data;
    if (Object.keys(report.attributes).length > 0) result.reports = [report];
  } else if (type === 0x41) {
    const report = newReport();
    decodeObdRt(report, trimmed(text(r, r.remaining)));
    result.reports = [report];
  } else if (type === 0xf0) {
    const p = decodeObdDongle(r);
    if (p) placeRecord(p, result);
  } else if (type === 0xff) {
    const p = emptyPosition();
    p.valid = true;
    p.fixTime = readBcdTime(r);
    p.latitude = r.i32() / 1e6;
    p.longitude = r.i32() / 1e6;
    p.altitude = r.i16();
    p.speedKmh = r.u16() / 10;
    p.heading = r.u16();
    placeRecord(p, result);
  }
  return result;
}
