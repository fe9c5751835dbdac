import { ByteReader } from '../../codec/byte-reader.ts';
import type { DecodedPosition } from '../../protocol.ts';
import { decodeEbItems } from './jt808-eb-items.ts';
import { hexOf, text, trimmed } from './jt808-fields.ts';
import { addAlarm } from './jt808-message.ts';

function printable(bytes: Uint8Array): boolean {
  return bytes.every((b) => b >= 0x20 && b < 0x7f);
}

/** The OBD-RT sentence some trackers put in 0xE6 items and 0x0900 messages: `$OBD-RT,<power>,<rpm>,…`. */
export function decodeObdRt(p: { attributes: Record<string, string | number | boolean> }, sentence: string): void {
  const names = ['power', 'rpm', 'obdSpeed', 'throttle', 'engineLoad', 'coolantTemp', 'fuelConsumption', 'fuelConsumption', 'tripOdometer', 'obdOdometer', 'tripFuelUsed', 'fuelUsed'];
  const values = sentence.split(',');
  names.forEach((name, i) => {
    const raw = values[i + 1];
    if (raw === undefined || raw.trim() === '') return;
    const value = Number(raw);
    if (Number.isFinite(value)) p.attributes[name] = value;
  });
}

/** 0xE6 sensor blocks: index, MAC, temperature and humidity each as a signed whole byte plus 1/255ths. */
function customDouble(r: ByteReader): number {
  const whole = r.i8();
  const fraction = r.u8() / 255;
  return whole < 0 ? whole - fraction : whole + fraction;
}

/** 0xF6 of light/temperature trackers: an event, then a mask of the readings that follow. */
function decodeSensorItem(r: ByteReader, p: DecodedPosition, length: number): void {
  const a = p.attributes;
  if (length === 2) {
    a.airPressure = r.u16();
    return;
  }
  if (length === 8) {
    a.imei = hexOf(r.slice(8)).slice(1);
    return;
  }
  const event = r.u8();
  a.event = event;
  if (event === 2) a.motion = true;
  const mask = r.u8();
  if (mask & 0x01) a.lightSensor = r.u16();
  if (mask & 0x02) a.temp1 = r.i16() / 10;
  if (mask & 0x04) a.humidity = r.i16() / 10;
  if (mask & 0x08) a.gSensor = `[${r.i16()},${r.i16()},${r.i16()}]`;
  if (mask & 0x10) r.skip(10);
  if (mask & 0x20) a.airPressure = r.u16();
}

/** 0xFE: by its length a battery level, a voltage, a mileage, or an alarm block (0x7C) and the battery level. */
function decodeFe(r: ByteReader, p: DecodedPosition, length: number): void {
  const a = p.attributes;
  if (length === 1) a.batteryLevel = r.u8();
  else if (length === 2) a.power = r.u16() / 10;
  else if (length === 4) a.odometer = r.u32();
  else {
    if (r.u8() === 0x7c) {
      while (r.remaining > 1) {
        const id = r.u8();
        const size = r.u8();
        if (id !== 0x01) {
          r.skip(size);
          continue;
        }
        const alarms = r.u32();
        if (alarms & 0x01) addAlarm(p, 'hardAcceleration');
        if (alarms & 0x02) addAlarm(p, 'hardBraking');
        if (alarms & 0x04) addAlarm(p, 'hardCornering');
        if (alarms & 0x08) addAlarm(p, 'accident');
        if (alarms & 0x10) addAlarm(p, 'tampering');
      }
    }
    a.batteryLevel = r.u8();
  }
}

/** 0xF9 of some asset trackers: a mask of optional fields. */
function decodeF9(r: ByteReader, p: DecodedPosition): void {
  const mask = r.u16();
  if (mask & 0x01) r.skip(4); // GNSS age
  if (mask & 0x02) r.skip(4); // ACC on time
  if (mask & 0x04) p.attributes.hdop = r.u16() / 10;
  if (mask & 0x08) r.skip(6); // GNSS time
  if (mask & 0x20) r.skip(8); // sampling and report interval
  if (mask & 0x40) p.attributes.temp3 = r.i16() / 10;
}

/** Items vendors added in the ids the standard leaves to them, as the firmwares in the corpus use them. */
export function decodeVendorItem(id: number, r: ByteReader, p: DecodedPosition): void {
  const a = p.attributes;
  const length = r.remaining;
  switch (id) {
    case 0x0b:
      a.lockCommand = r.u8();
      if (length >= 5 && length <= 6) a.lockCard = r.u32();
      else if (length >= 7) a.lockPassword = text(r, 6);
      if (length % 2 === 0) a.unlockResult = r.u8();
      break;
    case 0x33:
      if (length === 1) a.mode = r.u8();
      else {
        const value = text(r, length);
        if (value.startsWith('*M00') && value.length >= 15) a.battery = Number.parseInt(value.slice(10, 13), 10) / 100;
      }
      break;
    case 0x64:
    case 0x65:
      r.skip(5); // alarm serial, alarm status
      a[id === 0x64 ? 'adasAlarm' : 'dmsAlarm'] = r.u8();
      break;
    case 0x67:
      a.password = text(r, 8);
      break;
    case 0x68:
      a.batteryLevel = r.u16() / 100;
      break;
    case 0x70: {
      r.skip(5); // alarm serial, alarm status
      const alarm = { 0x01: 'hardAcceleration', 0x02: 'hardBraking', 0x03: 'hardCornering', 0x16: 'accident' }[r.u8()];
      if (alarm) addAlarm(p, alarm);
      break;
    }
    case 0x77:
      while (r.remaining >= 7) {
        const tire = r.u8();
        a[`tire${tire}SensorId`] = hexOf(r.slice(3));
        a[`tire${tire}Pressure`] = (r.u16() & 0x3ff) / 40;
        a[`tire${tire}Temp`] = r.u8() - 50;
        a[`tire${tire}Status`] = r.u8();
      }
      break;
    case 0x91:
      a.battery = r.u16() / 10;
      a.rpm = r.u16();
      a.obdSpeed = r.u8();
      a.throttle = Math.trunc((r.u8() * 100) / 255);
      a.engineLoad = Math.trunc((r.u8() * 100) / 255);
      a.coolantTemp = r.u8() - 40;
      r.skip(2);
      a.fuelConsumption = r.u16() / 100;
      r.skip(8);
      a.fuelUsed = r.u16() / 100;
      break;
    case 0x94:
      if (length > 0) a.vin = text(r, length);
      break;
    case 0xbc:
      a.driver = trimmed(text(r, length));
      break;
    case 0xbd:
      a.driverUniqueId = text(r, length);
      break;
    case 0xd0:
      if (r.u32() & 0x08) addAlarm(p, 'vibration');
      break;
    case 0xd3:
      a.power = r.u16() / 10;
      break;
    case 0xd4:
    case 0xe1:
    case 0xe9:
      if (length === 1) {
        const level = r.u8();
        if (level === 0xff) a.charge = true;
        else a.batteryLevel = level;
      } else if (id === 0xe1 && length >= 12 && (length - 4) % 8 === 0) {
        // Cell towers: no place for them in our records.
      } else if (id === 0xe1 && length === 2) a.power = r.u16() / 10;
      else a.driverUniqueId = String(r.u32());
      break;
    case 0xd5:
      if (length === 2) a.battery = r.u16() / 100;
      else {
        const count = r.u8();
        for (let i = 1; i <= count; i++) {
          a[`lock${i}Id`] = hexOf(r.slice(5));
          a[`lock${i}Card`] = hexOf(r.slice(5));
          a[`lock${i}Battery`] = r.u8();
          a[`lock${i}Locked`] = (r.u16() & 0x20) === 0;
        }
      }
      break;
    case 0xda: {
      r.skip(2); // string cut count
      const status = r.u8();
      a.string = (status & 0x01) !== 0;
      a.motion = (status & 0x04) !== 0;
      a.cover = (status & 0x08) !== 0;
      break;
    }
    case 0xe2:
      a.fuel = r.u32() / 10;
      break;
    case 0xe3:
      r.skip(1);
      a.batteryLevel = r.u8();
      a.battery = r.u16() / 100;
      break;
    case 0xe4:
      if (r.u8() === 0) a.charge = true;
      a.batteryLevel = r.u8();
      break;
    case 0xe5:
      if (length === 1) a.motion = r.u8() === 1;
      break;
    case 0xe6: {
      const head = length >= 7 ? text(new ByteReader(r.bytes, r.offset, r.offset + 7), 7) : '';
      if (head === '$OBD-RT') decodeObdRt(p, new TextDecoder().decode(r.slice(length)));
      else if (length >= 11 && length % 11 === 0) {
        while (r.remaining >= 11) {
          const sensor = r.u8();
          r.skip(6); // MAC
          a[`temp${sensor}`] = customDouble(r);
          a[`humidity${sensor}`] = customDouble(r);
        }
      }
      break;
    }
    case 0xe7:
      if (length === 8) {
        const alarms = r.u16();
        if (alarms & 0x01) addAlarm(p, 'vibration');
        if (alarms & 0x1e) addAlarm(p, 'sos');
      }
      break;
    case 0xe8:
      a.lockStatus = r.u24();
      break;
    case 0xeb:
      if (length >= 2 && ((r.bytes[r.offset]! << 8) | r.bytes[r.offset + 1]!) > 200 && (length - 3) % 5 === 0) break; // cell towers
      if (printable(r.bytes.subarray(r.offset, r.end))) a.timezone = text(r, length);
      else decodeEbItems(r, p);
      break;
    case 0xed:
      a.card = trimmed(text(r, length));
      break;
    case 0xee:
      if (length === 6) {
        a.rssi = r.u8();
        a.power = r.u16() / 1000;
        a.battery = r.u16() / 1000;
        a.sat = r.u8();
        p.satellites = a.sat;
      }
      break;
    case 0xf1:
      a.power = r.u32() / 1000;
      break;
    case 0xf2:
      a.versionFw = text(r, length);
      break;
    case 0xf3:
      decodeObdList(r, p);
      break;
    case 0xf5:
      if (length === 2) a.illuminance = r.u16();
      break;
    case 0xf6:
      decodeSensorItem(r, p, length);
      break;
    case 0xf7:
      if (length === 2) a.humidity = r.u16() / 10;
      else {
        a.battery = r.u32() / 1000;
        if (length >= 5) {
          const status = r.u8();
          if (status === 2 || status === 3) a.charge = true;
        }
        if (length >= 6) a.batteryLevel = r.u8();
      }
      break;
    case 0xf8:
      a.temp2 = r.u16() / 10 - 50;
      break;
    case 0xf9:
      decodeF9(r, p);
      break;
    case 0xfb:
      a.container = text(r, length);
      break;
    case 0xfc:
      a.geofence = r.u8();
      break;
    case 0xfe:
      decodeFe(r, p, length);
      break;
    default:
      break;
  }
}

/** 0xF3 of OBD trackers: two-byte ids, one-byte lengths. */
function decodeObdList(r: ByteReader, p: DecodedPosition): void {
  const a = p.attributes;
  while (r.remaining >= 3) {
    const id = r.u16();
    const length = r.u8();
    const v = new ByteReader(r.bytes, r.offset, Math.min(r.end, r.offset + length));
    r.skip(Math.min(length, r.remaining));
    switch (id) {
      case 0x0002: a.obdSpeed = v.u16() / 10; break;
      case 0x0003: a.rpm = v.u16(); break;
      case 0x0004: a.power = v.u16() / 1000; break;
      case 0x0005: a.obdOdometer = v.u32() * 100; break;
      case 0x0007: a.fuelConsumption = v.u16() / 10; break;
      case 0x0008: a.engineLoad = v.u16() / 10; break;
      case 0x0009: a.coolantTemp = v.u16() - 40; break;
      case 0x000b: a.intakePressure = v.u16(); break;
      case 0x000c: a.intakeTemp = v.u16() - 40; break;
      case 0x000d: a.intakeFlow = v.u16(); break;
      case 0x000e: a.throttle = Math.trunc((v.u16() * 100) / 255); break;
      case 0x0050: a.vin = text(v, 17).replace(/\0+$/, ''); break;
      case 0x0100: a.tripOdometer = v.u16() / 10; break;
      case 0x0102: a.tripFuel = v.u16() / 10; break;
      case 0x0112: a.hardAccelerationCount = v.u16(); break;
      case 0x0113: a.hardDecelerationCount = v.u16(); break;
      case 0x0114: a.hardCorneringCount = v.u16(); break;
      default: break;
    }
  }
}
