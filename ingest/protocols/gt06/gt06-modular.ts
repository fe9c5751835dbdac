import type { DecodedPosition } from '../../protocol.ts';
import { applyCourseStatus, newReport } from './gt06-fix.ts';
import { ack, emit, type Gt06Message, type Gt06Result } from './gt06-message.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { hex } from './gt06-text.ts';

const MODULE_ALARMS = new Map<number, string>([
  [0x11, 'lowBattery'],
  [0x12, 'lowPower'],
  [0x13, 'powerCut'],
  [0x14, 'removing'],
]);

/** 0x33 module: a complete fix with Unix time and altitude. */
function readModuleFix(m: ByteReader): DecodedPosition {
  const p: DecodedPosition = { fixTime: new Date(m.u32() * 1000), valid: false, latitude: 0, longitude: 0, attributes: {} };
  p.satellites = m.u8();
  p.altitude = m.i16();
  const lat = m.u32();
  const lon = m.u32();
  p.speedKmh = m.u8();
  applyCourseStatus(p, m.u16(), lat, lon);
  return p;
}

/** One module into the position's attributes; returns a fix when the module is the GPS one. */
function applyModule(a: Record<string, string | number | boolean>, id: number, m: ByteReader): DecodedPosition | undefined {
  switch (id) {
    case 0x03:
      a.iccid = hex(m.slice(10));
      break;
    case 0x09:
      a.sat = m.u8();
      break;
    case 0x0a:
      a.satVisible = m.u8();
      break;
    case 0x18:
      a.battery = m.u16() / 100;
      break;
    case 0x28:
      a.hdop = m.u8() / 10;
      break;
    case 0x29:
      a.index = m.u32();
      break;
    case 0x2a: {
      const input = m.u8();
      a.door = (input & 0x0f) > 0;
      a.tamper = input >> 4 > 0;
      break;
    }
    case 0x2b: {
      const event = m.u8();
      const alarm = MODULE_ALARMS.get(event);
      if (alarm) a.alarm = alarm;
      a.event = event;
      break;
    }
    case 0x2e:
      a.odometer = m.u32le();
      break;
    case 0x33:
      return readModuleFix(m);
    case 0x7f:
      // BLE sensor tag: MAC, signal, battery %, temperature in 0.1 °C (layout from device captures).
      a.tag1Mac = hex(m.slice(6));
      m.skip(3);
      a.tag1Temp = m.i16() / 10;
      break;
    default:
      break;
  }
  return undefined;
}

/** 0x70: a sequence of (module id, length, value) records; module 0x33 carries the fix. */
export function decodeModular(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const attributes: Record<string, string | number | boolean> = {};
  let fix: DecodedPosition | undefined;
  while (r.remaining >= 4) {
    const id = r.u16();
    const length = r.u16();
    const module = new ByteReader(r.bytes, r.offset, r.offset + length > r.end ? r.end : r.offset + length);
    r.skip(Math.min(length, r.remaining));
    fix = applyModule(attributes, id, module) ?? fix;
  }
  const p = fix ?? newReport();
  Object.assign(p.attributes, attributes);
  if (fix && attributes.sat !== undefined) fix.satellites = Number(attributes.sat);
  return emit(p, ack(msg));
}
