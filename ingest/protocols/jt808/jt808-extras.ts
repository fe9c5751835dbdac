import { ByteReader } from '../../codec/byte-reader.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { signalFromCsq } from '../../../domain/device-signal.ts';
import { decodeVendorItem } from './jt808-vendor-items.ts';
import { hexOf, text } from './jt808-fields.ts';
import { addAlarm, type Jt808Record } from './jt808-message.ts';
import type { DecodedPosition } from '../../protocol.ts';


/** Signed magnitude in 15 bits, the sign in bit 15 (temperatures of 0x51). */
function signMagnitude(value: number): number {
  return value & 0x8000 ? -(value & 0x7fff) : value;
}

/**
 * The 0x80 item of some OBD trackers: a content byte, then items of its own (one-byte id and length)
 * running to the end of the message.
 */
function decodeObdItems(r: ByteReader, p: Jt808Record): void {
  r.u8();
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    const item = new ByteReader(r.bytes, r.offset, Math.min(r.end, r.offset + length));
    r.skip(Math.min(length, r.remaining));
    const a = p.attributes;
    switch (id) {
      case 0x01: a.odometer = item.u32() * 100; break;
      case 0x02: a.fuel = item.u16() / 10; break;
      case 0x03: a.obdSpeed = item.u16() / 10; break;
      case 0x81: a.rpm = item.u16(); break;
      case 0x82: a.power = item.u16() / 10; break;
      case 0x83: a.engineLoad = item.u8(); break;
      case 0x84: a.coolantTemp = item.u8() - 40; break;
      case 0x85: a.fuelConsumption = item.u16(); break;
      case 0x86: a.intakeTemp = item.u8() - 40; break;
      case 0x87: a.intakeFlow = item.u16(); break;
      case 0x88: a.intakePressure = item.u8(); break;
      case 0x89: a.throttle = item.u8(); break;
      case 0x8b: a.vin = text(item, 17); break;
      case 0x8c: a.obdOdometer = item.u32() * 100; break;
      case 0x8d: a.tripOdometer = item.u16() * 1000; break;
      case 0x8e: a.fuel = item.u8(); break;
      case 0xa0: a.dtcs = text(item, length).replace(/,/g, ' '); break;
      case 0xcc: a.iccid = text(item, 20); break;
      default: break;
    }
  }
}

/** One standard item (JT/T 808 table 27) or one the common vendor firmwares add; false when unknown. */
function decodeStandardItem(id: number, r: ByteReader, p: DecodedPosition): boolean {
  const a = p.attributes;
  switch (id) {
    case 0x01:
      a.odometer = r.u32() * 100; // 1/10 km
      return true;
    case 0x02: {
      const fuel = r.u16();
      a.fuel = fuel & 0x8000 ? fuel & 0x7fff : fuel / 10; // bit 15: a percentage instead of 1/10 L
      return true;
    }
    case 0x03:
      a.obdSpeed = r.u16() / 10;
      return true;
    case 0x06:
      a.batteryLevel = r.u8();
      return true;
    case 0x14:
      a.videoAlarm = r.u32();
      return true;
    case 0x25:
      a.input = r.u32();
      return true;
    case 0x2b:
    case 0xa7:
      a.adc1 = r.u16() / 100;
      a.adc2 = r.u16() / 100;
      return true;
    case 0x30: {
      const csq = r.u8();
      a.rssi = csq;
      const signal = signalFromCsq(csq);
      if (signal !== undefined) p.signalStrength = signal;
      return true;
    }
    case 0x31: {
      const sat = r.u8();
      a.sat = sat;
      p.satellites = sat;
      return true;
    }
    case 0x51:
      if (r.remaining === 2 || r.remaining === 16) {
        for (let i = 1; r.remaining >= 2; i++) {
          const value = r.u16();
          if (value !== 0xffff) a[`temp${i}`] = signMagnitude(value) / 10;
        }
      }
      return true;
    case 0x56:
      a.batteryLevel = r.u8() * 10;
      return true;
    case 0x57: {
      const alarms = r.u16();
      if (alarms & (1 << 8)) addAlarm(p, 'hardAcceleration');
      if (alarms & (1 << 9)) addAlarm(p, 'hardBraking');
      if (alarms & (1 << 10)) addAlarm(p, 'hardCornering');
      return true;
    }
    case 0x60: {
      const event = r.u16();
      a.event = event;
      if (event >= 0x61 && event <= 0x66) {
        r.skip(6); // lock id
        a.driverUniqueId = text(r, 8);
      }
      return true;
    }
    case 0x63:
      for (let i = 1; r.remaining >= 11; i++) {
        a[`lock${i}Id`] = hexOf(r.slice(6));
        a[`lock${i}Battery`] = r.u16() / 1000;
        a[`lock${i}Seal`] = r.u8() === 0x31;
        r.skip(2); // physical state, rssi
      }
      return true;
    case 0x69:
      a.battery = r.u16() / 100;
      return true;
    case 0x82:
      a.power = r.u16() / 10;
      return true;
    case 0xac:
      a.odometer = r.u32();
      return true;
    default:
      return false;
  }
}

/**
 * Additional information items after the basic location: one-byte id, one-byte length, value. An
 * item we cannot read (shorter than its id requires) is skipped on its own, its length telling where
 * the next begins; an item running past the message ends the list.
 */
export function decodeExtras(r: ByteReader, p: DecodedPosition): void {
  while (r.remaining >= 2) {
    const id = r.u8();
    const length = r.u8();
    if (length > r.remaining) return;
    const start = r.offset;
    const item = new ByteReader(r.bytes, start, start + length);
    r.skip(length);
    try {
      if (id === 0x80) {
        decodeObdItems(new ByteReader(r.bytes, start, r.end), p);
        return;
      }
      if (!decodeStandardItem(id, item, p)) decodeVendorItem(id, item, p);
    } catch (error) {
      if (!(error instanceof MalformedFrameError)) throw error;
    }
  }
}
